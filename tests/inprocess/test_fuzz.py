"""Malformed payloads of every kind Varulv accepts (slash commands, button clicks, the settings
modal's submissions, each event), signed as Slack would sign them and sent to the app's request
handler: each is answered within Slack's three seconds and never with a 5xx, the app logs no
error, and a payload that is not a valid request changes nothing in the database. Three games
run throughout (one in its lobby, one at night, one voting), every payload is aimed at them, and
all three play to a correct end after.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, text

import slackapp.blocks.schedule as schedule_screen
import slackapp.blocks.settings as settings_screen
from slackapp.blocks import ids
from slackapp.fakeslack import FakeSlack, SignedRequest, signed_headers
from slackapp.game import Card, Deal, IllegalChoice, check_choice
from slackapp.game.codec import choice_from_json
from slackapp.shapes import ENTERED, ENTERED_BY, modal_fields, slack_id
from tests.e2e.conftest import SIGNING_SECRET
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.reliability.support import (
    new_people,
    seat_rows,
    set_deadline,
    signed,
    signed_click,
)

pytestmark = pytest.mark.long(20)

FUZZ = settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.too_slow])
EACH_KIND = settings(FUZZ, max_examples=60)
STATE = ("games", "seats", "ballots", "scores", "channel_settings")
ACTION_PREFIXES = [*ids.ALL_ACTIONS, *ids.OTHER_ACTIONS]

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
not_an_id = st.one_of(
    junk.filter(lambda value: not slack_id(value)),
    st.sampled_from(["U0\x00", "U001REL\n", "u001rel", "U" * 40, " U001REL"]),
)


@dataclass
class Games:
    """The three games every payload is aimed at, and the requests that play them."""

    lobby: Table
    night: Table
    vote: Table
    people: dict[str, list[str]]
    clicks: list[SignedRequest] = field(repr=False)
    """Valid clicks on the three games' messages, to mutate."""
    submission: SignedRequest = field(repr=False)
    """A valid submission of the settings modal, for the lobby's channel."""
    events: dict[str, SignedRequest] = field(repr=False)
    """One valid event of each type Varulv handles."""
    first_ids: list[int] = field(default_factory=list)
    """The three games' ids (a fuzzed ``/varulv stop`` then ``/varulv`` may open new ones)."""

    @property
    def ids(self) -> list[int]:
        return [table.game_id() for table in (self.lobby, self.night, self.vote)]

    @property
    def users(self) -> list[str]:
        return [user for people in self.people.values() for user in people]


@pytest.fixture(scope="module")
def games(fake: FakeSlack, app: InProcessApp, db: Engine) -> Games:
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
    board = vote.board("One sealed ballot each")
    for button in board.buttons():
        clicks.append(signed_click(fake, people["vote"][0], board, button.action_id))
    ballot = vote.ballot(people["vote"][0])
    for button in ballot.buttons():
        clicks.append(signed_click(fake, people["vote"][0], ballot, button.action_id))
    host = people["lobby"][0]
    fake.set_role(host, "admin")  # a lobby's host has no say over the channel; an admin has
    lobby.command(host, "settings")
    lobby.wait(lambda: next(iter(fake.modals(host)), None), "the settings modal")
    entered: dict[str | tuple[str, str], str] = {
        "night_seconds": "45",
        "day_seconds": "90",
        "vote_seconds": "60",
    }
    submission = signed(fake, lambda: fake.view_submission(host, entered))
    events = {
        "app_home_opened": signed(fake, lambda: fake.app_home_opened(host)),
        "app_uninstalled": signed(fake, lambda: fake.event({"type": "app_uninstalled"})),
        "tokens_revoked": signed(
            fake,
            lambda: fake.event(
                {
                    "type": "tokens_revoked",
                    "tokens": {"oauth": [], "bot": [fake.identity.bot_user_id]},
                }
            ),
        ),
    }
    games = Games(lobby, night, vote, people, clicks, submission, events)
    games.first_ids = games.ids
    # The app's clock runs with the real one, and on a busy machine the fuzzing can outlast a
    # two-minute phase: a payload that changes nothing would then be the first to find the
    # deadline passed, and end the phase. Here only the test moves time on. A day on the app's
    # own clock, which earlier tests of this worker may have moved days ahead of the real one.
    a_day_on = app.clock.now() + timedelta(days=1)
    for timed in (night, vote):  # the lobby has no deadline
        set_deadline(db, timed.game_id(), a_day_on)
    return games


def post(app: InProcessApp, request: SignedRequest) -> requests.Response:
    """Send as Slack does. How long the answer took is the benchmarks' to report (a busy
    machine is slow without anything being wrong): this checks what the answer says."""
    return app.send(request)


DIGEST = "SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM {} t"


def state(db: Engine) -> dict[str, str]:
    """A digest of every table a request could change."""
    with db.connect() as connection:
        return {
            table: connection.execute(text(DIGEST.format(table))).scalar_one() for table in STATE
        }


def answered_and_unchanged(
    fake: FakeSlack, app: InProcessApp, db: Engine, request: SignedRequest, *, unchanged: bool
) -> requests.Response:
    """Send ``request``; no 5xx and no new error in the log, and with ``unchanged`` (the payload
    is not a valid request) nothing in the database changed once the app is done with it."""
    if unchanged:
        before = state(db)  # earlier payloads' steps are done: each request settles the app
    errors = len(app.errors_logged())
    answer = post(app, request)
    assert answer.status_code < 500, answer.status_code
    if unchanged:
        assert state(db) == before
    assert app.errors_logged()[errors:] == []
    return answer


def resigned(request: SignedRequest, body: str) -> SignedRequest:
    return SignedRequest(body, {**request.headers, **signed_headers(SIGNING_SECRET, body)})


def payload_of(request: SignedRequest) -> tuple[dict[str, str], dict[str, Any]]:
    form = dict(parse_qsl(request.body))
    return form, json.loads(form["payload"])


@pytest.fixture(scope="module", autouse=True)
def nothing_failed(app: InProcessApp, games: Games) -> Iterator[None]:
    """After all the fuzzing: no error in the app's log, and every game still plays right."""
    errors = len(app.errors_logged())  # the session's app: count from this module's first
    yield
    assert app.errors_logged()[errors:] == []
    check_invariants(games)
    finish(games)
    assert app.errors_logged()[errors:] == []


@FUZZ
@given(data=st.data())
def test_malformed_interactions_are_answered_without_a_server_error(
    fake: FakeSlack, app: InProcessApp, db: Engine, games: Games, data: st.DataObject
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
        st.fixed_dictionaries({"id": st.one_of(junk, not_an_id)}),
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
    user = payload.get("user")
    nobody = not (isinstance(user, dict) and slack_id(user.get("id")))
    answered_and_unchanged(fake, app, db, resigned(template, body), unchanged=nobody)


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
        st.one_of(st.none(), st.text(max_size=60), not_an_id.map(str), huge),  # None: missing
        max_size=2,
    ),
)
def test_malformed_slash_commands_are_answered_without_a_server_error(
    fake: FakeSlack,
    app: InProcessApp,
    db: Engine,
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
    nobody = not all(slack_id(form.get(key)) for key in ("user_id", "channel_id", "team_id"))
    answered_and_unchanged(fake, app, db, resigned(kept[0], urlencode(form)), unchanged=nobody)


@pytest.mark.parametrize("response_url", ["0:", "{'': 1}", "hooks.slack.com/commands/x", ""])
def test_a_slash_command_whose_response_url_is_no_web_address_is_refused(
    fake: FakeSlack, app: InProcessApp, db: Engine, games: Games, response_url: str
) -> None:
    """Found by the fuzzing above: a private answer to such an address failed in slack_sdk,
    which logged it as an error."""
    with fake.keeping_requests() as kept:
        fake.slash_command(games.people["lobby"][-1], text="help", channel_id=games.lobby.channel)
    form = dict(parse_qsl(kept[0].body, keep_blank_values=True)) | {"response_url": response_url}
    errors = len(app.errors_logged())
    assert post(app, resigned(kept[0], urlencode(form))).status_code == 400
    assert app.errors_logged()[errors:] == []


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
    app: InProcessApp, games: Games, body: bytes, kind: str
) -> None:
    stamp = str(int(time.time()))
    base = b"v0:" + stamp.encode() + b":" + body
    signature = "v0=" + hmac.new(SIGNING_SECRET.encode(), base, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": kind,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signature,
    }
    answer = app.send_raw(body, headers)
    assert answer.status_code < 500, answer.status_code


def _not_a_number(raw: object) -> bool:
    try:
        int(str(raw).strip())
    except ValueError:
        return True
    return False


@EACH_KIND
@given(data=st.data())
def test_malformed_settings_submissions_change_nothing(
    fake: FakeSlack, app: InProcessApp, db: Engine, games: Games, data: st.DataObject
) -> None:
    """Each submission breaks at least one thing Slack always sends right."""
    form, payload = payload_of(games.submission)
    view = payload["view"]
    values = view["state"]["values"]
    breaks = data.draw(
        st.sets(st.sampled_from(["user", "metadata", "state", "entry", "options"]), min_size=1),
        "breaks",
    )
    if "user" in breaks:
        payload["user"] = data.draw(
            st.one_of(
                st.none(),
                junk,
                st.fixed_dictionaries({"id": not_an_id}),
                st.just({"name": "anna"}),
            ),
            "user",
        )
    if "metadata" in breaks:
        view["private_metadata"] = data.draw(st.one_of(not_an_id, huge), "private_metadata")
    if "state" in breaks:
        # Each leaves a length unreadable, or is not of the shape Slack sends.
        not_a_block = junk.filter(lambda value: value != {})
        broken = st.one_of(junk, st.dictionaries(st.text(max_size=12), not_a_block, max_size=3))
        if data.draw(st.booleans(), "state or its values"):
            view["state"] = data.draw(st.one_of(junk, st.fixed_dictionaries({"values": broken})))
        else:
            blocks = st.dictionaries(st.sampled_from(list(values)), not_a_block, min_size=1)
            values.update(data.draw(blocks, "blocks"))
    entries = [
        entered
        for block in values.values()
        if isinstance(block, dict)
        for entered in block.values()
        if isinstance(entered, dict)
    ]
    for entered in entries:
        if "entry" in breaks and "value" in entered:
            entered["value"] = data.draw(st.one_of(junk.filter(_not_a_number), huge), "value")
        if "options" in breaks and "selected_options" in entered:
            entered["selected_options"] = data.draw(
                st.one_of(
                    junk.filter(lambda value: value != []), st.lists(junk, min_size=1, max_size=3)
                ),
                "options",
            )
    body = urlencode({**form, "payload": json.dumps(payload)})
    answer = answered_and_unchanged(fake, app, db, resigned(games.submission, body), unchanged=True)
    if answer.status_code == 200:  # the modal stays open and says what is wrong
        assert answer.json()["response_action"] == "errors"


FIELD_KEYS = sorted({*ENTERED, "type", "text"})
"""The keys a field's state may hold as Slack sends it, and a few it never does."""
json_values = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.one_of(st.sampled_from(FIELD_KEYS), st.text(max_size=5)), children, max_size=3
        ),
    ),
    max_leaves=8,
)
EVERY_FIELD = [
    (callback_id, block_id, action_id)
    for callback_id, fields in sorted(modal_fields().items())
    for block_id, action_id in sorted(fields)
]
"""Every field of every modal Varulv opens, read off the modals themselves."""


@pytest.fixture(scope="module")
def modal_submissions(fake: FakeSlack, app: InProcessApp, db: Engine) -> dict[str, SignedRequest]:
    """A submission of each modal Varulv opens, as Slack sends it, for a channel no game plays
    in. The standing table's names no time zone, so none is ever set."""
    side = Table(fake, app, db)
    settings_user, schedule_user = new_people(fake, 2)
    entered: dict[str, dict[str | tuple[str, str], str]] = {
        settings_screen.CALLBACK_ID: {"night_seconds": "45"},
        schedule_screen.CALLBACK_ID: {schedule_screen.ZONE: "Nowhere/Special"},
    }
    submissions = {}
    for user, (callback_id, values) in zip(
        (settings_user, schedule_user), entered.items(), strict=True
    ):
        fake.set_role(user, "admin")  # so every field is offered, the admins' own included
        side.command(user, "settings" if callback_id == settings_screen.CALLBACK_ID else "schedule")
        side.wait(lambda user=user: next(iter(fake.modals(user)), None), "the modal")  # type: ignore[misc]
        submissions[callback_id] = signed(
            fake,
            lambda user=user, values=values: fake.view_submission(user, values),  # type: ignore[misc]
        )
    assert sorted(submissions) == sorted(modal_fields()), "a submission of every modal"
    return submissions


@pytest.mark.parametrize(("callback_id", "block_id", "action_id"), EVERY_FIELD)
@settings(FUZZ, max_examples=25)
@given(data=st.data())
def test_every_field_of_every_modal_in_any_shape_is_answered_without_a_server_error(
    fake: FakeSlack,
    app: InProcessApp,
    db: Engine,
    modal_submissions: dict[str, SignedRequest],
    callback_id: str,
    block_id: str,
    action_id: str,
    data: st.DataObject,
) -> None:
    """The field's state is anything JSON can say, or has its element's key (or another's)
    hold it; the view's type may be gone too. A submission refused changes nothing."""
    request = modal_submissions[callback_id]
    form, payload = payload_of(request)
    view = payload["view"]
    kind = modal_fields()[callback_id][(block_id, action_id)]
    entry = {"type": kind, ENTERED_BY[kind]: None}
    how = data.draw(st.sampled_from(["entry", "its key", "any key", "type"]), "how")
    if how == "entry":
        fuzzed: Any = data.draw(json_values, "entry")
    elif how == "type":
        fuzzed = {**entry, "type": data.draw(json_values, "type")}
    else:
        key = ENTERED_BY[kind] if how == "its key" else data.draw(st.sampled_from(FIELD_KEYS))
        fuzzed = {**entry, key: data.draw(json_values, key)}
    view["state"]["values"].setdefault(block_id, {})[action_id] = fuzzed
    if data.draw(st.integers(0, 7), "drop the view's type?") == 0:
        del view["type"]
    body = urlencode({**form, "payload": json.dumps(payload)})
    before = state(db)
    errors = len(app.errors_logged())
    answer = post(app, resigned(request, body))
    assert answer.status_code < 500, answer.status_code
    assert app.errors_logged()[errors:] == []
    if answer.status_code == 400:
        assert state(db) == before
    else:
        assert answer.status_code == 200, answer.status_code


DESTRUCTIVE = ("app_uninstalled", "tokens_revoked")
"""Events that end a workspace's games: here always sent for another workspace."""


@EACH_KIND
@given(data=st.data())
def test_malformed_events_change_nothing(
    fake: FakeSlack, app: InProcessApp, db: Engine, games: Games, data: st.DataObject
) -> None:
    kind = data.draw(st.sampled_from(sorted(games.events)), "kind")
    envelope = json.loads(games.events[kind].body)
    event = envelope["event"]
    fields = {
        "type": st.one_of(st.sampled_from([*games.events, "team_join", ""]), junk),
        "user": st.one_of(st.sampled_from(games.users), not_an_id, junk),
        "tab": st.one_of(st.sampled_from(["home", "messages"]), junk),
        "channel": junk,
        "view": junk,
        "tokens": st.one_of(
            junk,
            st.fixed_dictionaries(
                {"oauth": st.one_of(junk, st.lists(junk)), "bot": st.one_of(junk, st.lists(junk))}
            ),
        ),
    }
    for name, strategy in fields.items():
        if data.draw(st.integers(0, 3), f"change {name}?") == 0:
            event[name] = data.draw(strategy, name)
    if data.draw(st.integers(0, 5), "change the envelope?") == 0:
        envelope[data.draw(st.sampled_from(["enterprise_id", "api_app_id", "event_id"]))] = (
            data.draw(st.one_of(junk, not_an_id), "envelope field")
        )
    if event.get("type") in DESTRUCTIVE or kind in DESTRUCTIVE:
        elsewhere = data.draw(st.one_of(st.just("T0ELSE"), st.just(""), not_an_id), "team")
        envelope["team_id"] = elsewhere
        envelope["authorizations"] = [{**envelope["authorizations"][0], "team_id": elsewhere}]
    body = json.dumps(envelope)
    answered_and_unchanged(fake, app, db, resigned(games.events[kind], body), unchanged=True)


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
            # The fuzzing may have cast some ballots: the vote can close before everyone.
            table.vote_nobody_if_not_voted(people)
        table.wait_for_phase("over")
        table.stored_outcome_matches_referee()
