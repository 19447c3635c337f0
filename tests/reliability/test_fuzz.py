"""Malformed commands and interactions, signed as Slack would sign them, never get a 5xx, never
break a game, and never make the app fail: three games run throughout (one in its lobby, one at
night, one voting), every payload is aimed at them, and all three play to a correct end after.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from slackapp.blocks import ids
from slackapp.fakeslack import FakeSlack, SignedRequest, signed_headers
from slackapp.game import Card, Deal, IllegalChoice, check_choice
from slackapp.game.codec import choice_from_json
from tests.e2e.conftest import SIGNING_SECRET, AppProcess
from tests.e2e.driver import Table
from tests.reliability.support import (
    new_people,
    running_app,
    seat_rows,
    settled,
    signed_click,
)

FUZZ = settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.too_slow])
ACTION_PREFIXES = list(ids.ALL_ACTIONS)

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
huge = st.integers(1_000, 150_000).map(lambda size: "ä" * size)  # escaped, some pass 1 MiB


@dataclass
class Games:
    """The three games every payload is aimed at, and the requests that play them."""

    lobby: Table
    night: Table
    vote: Table
    people: dict[str, list[str]]
    clicks: list[SignedRequest] = field(repr=False)
    """Valid clicks on the three games' messages, to mutate."""
    first_ids: list[int] = field(default_factory=list)
    """The three games' ids (a fuzzed ``/varulv stop`` then ``/varulv`` may open new ones)."""

    @property
    def ids(self) -> list[int]:
        return [table.game_id() for table in (self.lobby, self.night, self.vote)]

    @property
    def users(self) -> list[str]:
        return [user for people in self.people.values() for user in people]


@pytest.fixture(scope="module")
def app(fake: FakeSlack, database_url: str) -> Iterator[AppProcess]:
    with running_app(fake, database_url) as process:
        yield process


@pytest.fixture(scope="module")
def games(fake: FakeSlack, app: AppProcess, db: Engine) -> Games:
    people = {name: new_people(fake, 3) for name in ("lobby", "night", "vote")}
    lobby, night, vote = (Table(fake, app, db) for _ in range(3))
    lobby.seat_people(people["lobby"][0], people["lobby"][1:2])
    night.seat_people(people["night"][0], people["night"][1:])
    night.start(people["night"][0])
    vote.seat_people(people["vote"][0], people["vote"][1:])
    vote.start(people["vote"][0])
    vote.play_night(people["vote"])
    vote.wait_for_phase("day")
    vote.heard_enough(people["vote"][:2])
    vote.wait_for_phase("vote")
    clicks = []
    lobby_message = lobby.lobby()
    for button in lobby_message.buttons():
        clicks.append(signed_click(fake, people["lobby"][1], lobby_message, button.action_id))
    for user in people["night"]:
        dm = night.dm(user)
        for button in dm.buttons():
            clicks.append(signed_click(fake, user, dm, button.action_id))
    ballot = vote.board("One sealed ballot each")
    for button in ballot.buttons():
        clicks.append(signed_click(fake, people["vote"][0], ballot, button.action_id))
    games = Games(lobby, night, vote, people, clicks)
    games.first_ids = games.ids
    return games


def resigned(request: SignedRequest, body: str) -> SignedRequest:
    return SignedRequest(body, {**request.headers, **signed_headers(SIGNING_SECRET, body)})


def payload_of(request: SignedRequest) -> tuple[dict[str, str], dict[str, Any]]:
    form = dict(parse_qsl(request.body))
    return form, json.loads(form["payload"])


def errors_logged(app: AppProcess) -> list[str]:
    lines = app.log.read_text(errors="replace").splitlines()
    return [line for line in lines if '"level": "ERROR"' in line or line.startswith("Traceback")]


@pytest.fixture(scope="module", autouse=True)
def nothing_failed(app: AppProcess, games: Games) -> Iterator[None]:
    """After all the fuzzing: no error in the app's log, and every game still plays right."""
    yield
    settled(games.lobby.fake)
    assert errors_logged(app) == []
    check_invariants(games)
    finish(games)
    assert errors_logged(app) == []


@FUZZ
@given(data=st.data())
def test_malformed_interactions_are_answered_without_a_server_error(
    fake: FakeSlack, app: AppProcess, games: Games, data: st.DataObject
) -> None:
    template = data.draw(st.sampled_from(games.clicks), "click")
    form, payload = payload_of(template)
    game_ids = st.one_of(st.sampled_from(games.ids), st.integers(-3, 10**12))
    values = st.one_of(
        junk,
        huge,
        st.just(""),
        game_ids.map(str),
        st.builds(lambda g, t: f"{g}:{t}", game_ids, st.text(max_size=30)),
        st.builds(lambda g, u: f"{g}:{u}", game_ids, st.sampled_from([*games.users, "center"])),
    )
    action_ids = st.one_of(
        st.sampled_from(ACTION_PREFIXES),
        st.builds(lambda p, s: f"{p}:{s}", st.sampled_from(ACTION_PREFIXES), st.text(max_size=8)),
        st.text(max_size=40),
        huge,
    )
    action = payload["actions"][0]
    for key, strategy in (("action_id", action_ids), ("value", values), ("type", junk)):
        if data.draw(st.booleans(), f"change {key}"):
            action[key] = data.draw(strategy, key)
    users = st.one_of(
        st.sampled_from(games.users).map(lambda user: {"id": user}),
        st.fixed_dictionaries({"id": junk}),
        st.fixed_dictionaries(
            {"id": st.text(min_size=30, max_size=60), "name": st.one_of(junk, huge)}
        ),
        junk,
    )
    changes = {
        "actions": st.one_of(junk, st.lists(junk, max_size=2), st.just([])),
        "user": users,
        "type": st.one_of(st.just("block_actions"), junk),
        "container": junk,
        "channel": junk,
        "team": st.one_of(junk, st.just({"id": "T0001"})),
        "message": junk,
        "state": junk,
    }
    for key, strategy in changes.items():
        if data.draw(st.integers(0, 5), f"change {key}?") == 0:
            payload[key] = data.draw(strategy, key)
    body = urlencode({**form, "payload": json.dumps(payload)})
    answer = fake.send(resigned(template, body), app.events_url)
    assert answer.status_code < 500, (answer.status_code, payload)


@FUZZ
@given(
    words=st.one_of(
        st.text(max_size=60),
        huge,
        st.sampled_from(["", "start", "help", "stop", "score", "settings"]).flatmap(
            lambda word: st.text(max_size=12).map(lambda tail: word + tail)
        ),
    ),
    where=st.sampled_from(["lobby", "night", "vote", "elsewhere"]),
    changed=st.dictionaries(
        st.sampled_from(["user_id", "channel_id", "team_id", "user_name", "response_url"]),
        st.one_of(st.none(), st.text(max_size=60), huge),  # None: the field is missing
        max_size=2,
    ),
)
def test_malformed_slash_commands_are_answered_without_a_server_error(
    fake: FakeSlack,
    app: AppProcess,
    games: Games,
    words: str,
    where: str,
    changed: dict[str, str | None],
) -> None:
    table = getattr(games, where) if where != "elsewhere" else games.lobby
    channel = table.channel if where != "elsewhere" else "C0FUZZ"
    user = games.people.get(where, games.people["lobby"])[-1]
    with fake.keeping_requests() as kept:
        fake.slash_command(user, text=words, channel_id=channel)
    form = dict(parse_qsl(kept[0].body, keep_blank_values=True))
    for key, value in changed.items():
        if value is None:
            form.pop(key, None)
        else:
            form[key] = value
    answer = fake.send(resigned(kept[0], urlencode(form)), app.events_url)
    assert answer.status_code < 500, answer.status_code


@settings(deadline=None, max_examples=40)
@given(
    body=st.one_of(
        st.binary(max_size=300),
        st.text(max_size=300).map(lambda text: text.encode()),
        st.sampled_from(
            [
                b"payload=%7Bnot+json",
                b"payload=%5B1%2C2%5D",
                b"payload=null",
                b"payload=%22a+string%22",
                b"payload=%FF%FE",
                b'{"type": "event_callback", "event": 5}',
                b'{"type": "event_callback", "event": {"type": "app_home_opened"}}',
                b"[1, 2, 3]",
                b"\xff\xfe\xfa",
                b"",
            ]
        ),
    ),
    kind=st.sampled_from(["application/x-www-form-urlencoded", "application/json", "text/plain"]),
)
def test_signed_bodies_that_are_not_slack_payloads_are_refused_without_a_server_error(
    app: AppProcess, games: Games, body: bytes, kind: str
) -> None:
    stamp = str(int(time.time()))
    base = b"v0:" + stamp.encode() + b":" + body
    signature = "v0=" + hmac.new(SIGNING_SECRET.encode(), base, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": kind,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signature,
    }
    answer = requests.post(app.events_url, data=body, headers=headers, timeout=10)
    assert answer.status_code < 500, answer.status_code


# -- after the fuzzing ------------------------------------------------------------------------


def check_invariants(games: Games) -> None:
    """What the database holds is still a game the rules allow."""
    for table in (games.lobby, games.night, games.vote):
        game = table.game()
        seats = seat_rows(table.db, game["id"])
        keys = list(seats)
        if game["center"] is None:
            assert all(seat["dealt"] is None for seat in seats.values())
            continue
        dealt = Deal(
            seats=tuple(keys),
            dealt={key: Card(seat["dealt"]) for key, seat in seats.items()},
            center=(Card(game["center"][0]), Card(game["center"][1])),
        )
        for key, seat in seats.items():
            if seat["night_choice"] is not None:
                assert seat["confirmed"], key
                try:
                    check_choice(dealt, key, choice_from_json(seat["night_choice"]))
                except IllegalChoice as error:  # pragma: no cover - the failure message
                    raise AssertionError(f"{key} holds a choice its card cannot make") from error
            if seat["ballot"] is not None:
                assert seat["ballot"] in (*keys, "nobody") and seat["ballot"] != key


def finish(games: Games) -> None:
    """Each game still open plays on to a reveal the referee agrees with (the fuzzing may have
    legitimately stopped one, and opened another: a seated person's ``/varulv stop`` and
    ``/varulv`` are real commands)."""
    lobby = games.lobby
    if lobby.game()["phase"] == "lobby" and lobby.game_id() == games.first_ids[0]:
        for user in games.people["lobby"]:
            if user not in lobby.seat_keys():
                lobby.click(user, lobby.lobby(), "Join")
        lobby.wait(lambda: len(lobby.seats()) >= 3 or None, "three seated")
        lobby.start(games.people["lobby"][0])
    for table, first_id in zip(
        (games.lobby, games.night, games.vote), games.first_ids, strict=True
    ):
        if table.game_id() != first_id or table.game()["phase"] in ("cancelled", "stopped"):
            continue
        people = [key for key in table.seat_keys() if key.startswith("U")]
        if table.game()["phase"] == "night":
            table.play_night(people)
            table.wait_for_phase("day")
        if table.game()["phase"] == "day":
            table.heard_enough(people[: len(people) // 2 + 1])
            table.wait_for_phase("vote")
        if table.game()["phase"] == "vote":
            ballot = table.board("One sealed ballot each")
            for user in people:
                table.click(user, ballot, "Nobody")
        table.wait_for_phase("over")
        table.stored_outcome_matches_referee()
