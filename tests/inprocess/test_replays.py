"""Requests Slack sends twice, or that carry a click time nobody could have clicked at, signed
as Slack signs them, to the app's request handler: each still leaves the game as the person
meant it. Each request returns once all it started is done, so "nothing more was said" is
checked when it is true, not after a quiet while."""

from __future__ import annotations

import json
import threading
import time
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from slack_bolt.adapter.socket_mode.internals import build_headers
from slack_bolt.request import BoltRequest
from slack_sdk.socket_mode.request import SocketModeRequest
from sqlalchemy import Engine, text

from slackapp.fakeslack import FakeSlack, SignedRequest, signed_headers
from slackapp.listeners.ack import is_retry
from tests.e2e.conftest import SIGNING_SECRET
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_hostile_input import with_payload
from tests.reliability.support import (
    ballot_button,
    new_people,
    seat_rows,
    signed_click,
    signed_command,
)

YEAR_2100 = "4102444800.000001"
OPEN = ("already open", "already running", "seated at the table above")
"""What a /varulv is told when the channel's table is open."""
RETRY = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}


def to_the_day(fake: FakeSlack, app: InProcessApp, db: Engine) -> tuple[Table, list[str]]:
    people = new_people(fake, 3)
    table = Table(fake, app, db)
    table.seat_people(people[0], people[1:])
    table.start(people[0])
    table.play_night(people)
    table.wait_for_phase("day")
    return table, people


def from_the_future(request: SignedRequest) -> SignedRequest:
    def forge(payload: dict[str, Any]) -> None:
        payload["actions"][0]["action_ts"] = YEAR_2100

    return with_payload(request, forge)


def seconds_later(request: SignedRequest, seconds: int = 2) -> SignedRequest:
    """The click as Slack would stamp and sign it ``seconds`` from now (Slack's clock moved
    on, not the test waiting for it): past the second a request's timestamp rounds away."""
    sent = int(time.time()) + seconds
    form = dict(parse_qsl(request.body))
    payload = json.loads(form["payload"])
    payload["actions"][0]["action_ts"] = f"{sent - 1}.500000"  # stamped before it is sent
    body = urlencode({**form, "payload": json.dumps(payload)})
    return SignedRequest(body, {**request.headers, **signed_headers(SIGNING_SECRET, body, sent)})


def test_a_ballot_forged_in_the_year_2100_is_overridden_by_the_next_honest_click(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table, (anna, bo, cia) = to_the_day(fake, app, db)
    table.heard_enough([anna, bo])
    table.wait_for_phase("vote")
    ballot = table.ballot(anna)
    forged = from_the_future(signed_click(fake, anna, ballot, ballot_button(ballot, bo)))
    assert app.send(forged).status_code == 200
    game_id = table.game_id()
    table.wait(lambda: seat_rows(db, game_id)[anna]["ballot"] == bo or None, "the ballot")
    with db.connect() as connection:
        kept = connection.scalar(
            text("SELECT clicked_at FROM ballots WHERE voter_key = :v"), {"v": anna}
        )
    assert kept < int(time.time()) + 5, "the click's time is held to the request's"
    later = seconds_later(signed_click(fake, anna, ballot, ballot_button(ballot, cia)))
    assert app.send(later).status_code == 200
    table.wait(
        lambda: seat_rows(db, game_id)[anna]["ballot"] == cia or None,
        "the later honest click to count",
    )
    assert not [m for m in fake.ephemerals(anna) if "stays" in m.rendered_text]


def test_a_heard_enough_click_delivered_twice_marks_once(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table, (anna, _, _) = to_the_day(fake, app, db)
    board = table.board("Heard enough")
    click = signed_click(fake, anna, board, board.button("Heard enough").action_id)
    for headers in (None, RETRY, None):
        assert app.send(click, headers).status_code == 200
    game_id = table.game_id()
    assert seat_rows(db, game_id)[anna]["heard_enough"], "the same click thrice is one mark"
    assert not [m for m in fake.ephemerals(anna) if "Taken back" in m.rendered_text]

    forged = from_the_future(
        signed_click(fake, anna, board, board.button("Heard enough").action_id)
    )
    assert app.send(forged).status_code == 200
    table.wait(lambda: not seat_rows(db, game_id)[anna]["heard_enough"] or None, "taken back")
    # A click after the forged one still counts.
    later = seconds_later(signed_click(fake, anna, board, board.button("Heard enough").action_id))
    assert app.send(later).status_code == 200
    table.wait(lambda: seat_rows(db, game_id)[anna]["heard_enough"] or None, "the mark again")
    assert table.game()["phase"] == "day", "one of three is not more than half"


def send_both(app: InProcessApp, request: SignedRequest, first: bool) -> None:
    """The command and Slack's retry of it, at the same instant (``first``: the original is
    let go a moment earlier, else the retry is)."""
    leading = threading.Event()

    def send(headers: dict[str, str] | None, lead: bool) -> None:
        if lead:
            leading.set()
        else:
            leading.wait(60)  # a moment behind the other: which one Slack let go first
        assert app.send(request, headers).status_code == 200

    threads = [
        threading.Thread(target=send, args=(None, first)),
        threading.Thread(target=send, args=(RETRY, not first)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def open_games(db: Engine, channel: str) -> int:
    with db.connect() as connection:
        return int(
            connection.scalar(
                text("SELECT count(*) FROM games WHERE channel_id = :c"), {"c": channel}
            )
        )


@pytest.mark.parametrize("original_first", [True, False])
def test_a_command_and_slacks_retry_of_it_open_one_table_and_say_nothing_of_it(
    fake: FakeSlack, app: InProcessApp, db: Engine, original_first: bool
) -> None:
    anna = new_people(fake, 1)[0]
    tables = [Table(fake, app, db) for _ in range(4)]
    for table in tables:
        send_both(app, signed_command(fake, anna, table.channel), original_first)
    # And the retry wholly before the original, as when the original was held up on its way.
    last = tables[-1]
    late = Table(fake, app, db)
    command = signed_command(fake, anna, late.channel)
    assert app.send(command, RETRY).status_code == 200
    late.lobby()
    assert app.send(command).status_code == 200
    for table in [*tables, late]:
        assert open_games(db, table.channel) == 1, f"one table in {table.channel}"
        table.lobby()
    told = [
        m.rendered_text for m in fake.ephemerals(anna) if any(w in m.rendered_text for w in OPEN)
    ]
    assert not told, f"told of their own new table: {told}"
    # A second /varulv of their own is still told, as it should be.
    assert last.command(anna).status_code == 200
    last.ephemeral(anna, "You are seated at the table above")


def test_a_first_delivery_numbered_0_is_not_a_retry(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna = new_people(fake, 1)[0]
    table = Table(fake, app, db)
    stop = signed_command(fake, anna, table.channel, "stop")
    first = {"X-Slack-Retry-Num": "0", "X-Slack-Retry-Reason": ""}
    assert app.send(stop, first).status_code == 200
    table.ephemeral(anna, "No game is running")
    assert app.send(stop, RETRY).status_code == 200
    answers = [m for m in fake.ephemerals(anna) if "No game is running" in m.rendered_text]
    assert len(answers) == 1, "a retry of a stop that found nothing says nothing again"


@pytest.mark.parametrize(
    ("attempt", "reason", "retry"), [(None, None, False), (0, "", False), (1, "timeout", True)]
)
def test_socket_modes_retry_attempt_0_is_a_first_delivery(
    attempt: int | None, reason: str | None, retry: bool
) -> None:
    envelope = SocketModeRequest(
        type="events_api",
        envelope_id="e1",
        payload={"type": "event_callback", "event": {"type": "app_home_opened"}},
        retry_attempt=attempt,
        retry_reason=reason,
    )
    request = BoltRequest(
        mode="socket_mode", body=envelope.payload, headers=build_headers(envelope)
    )
    assert is_retry(request) is retry
