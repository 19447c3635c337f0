"""Requests Slack sends twice, or that carry a click time nobody could have clicked at: signed
HTTP to ``varulv serve``, and each still leaves the game as the person meant it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from slack_bolt.adapter.socket_mode.internals import build_headers
from slack_bolt.request import BoltRequest
from slack_sdk.socket_mode.request import SocketModeRequest
from sqlalchemy import Engine, text

from slackapp.fakeslack import FakeSlack, SignedRequest
from slackapp.listeners.ack import is_retry
from tests.e2e.conftest import AppProcess
from tests.e2e.driver import Table
from tests.inprocess.test_hostile_input import with_payload
from tests.reliability.support import (
    ballot_button,
    new_people,
    running_app,
    seat_rows,
    settled,
    signed_click,
    signed_command,
)

pytestmark = pytest.mark.long(13)

YEAR_2100 = "4102444800.000001"
OPEN = ("already open", "already running", "seated at the table above")
"""What a /varulv is told when the channel's table is open."""
RETRY = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}


@pytest.fixture(scope="module")
def app(fake: FakeSlack, database_url: str) -> Iterator[AppProcess]:
    with running_app(fake, database_url) as process:
        yield process


def to_the_day(fake: FakeSlack, app: AppProcess, db: Engine) -> tuple[Table, list[str]]:
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


def test_a_ballot_forged_in_the_year_2100_is_overridden_by_the_next_honest_click(
    fake: FakeSlack, app: AppProcess, db: Engine
) -> None:
    table, (anna, bo, cia) = to_the_day(fake, app, db)
    table.heard_enough([anna, bo])
    table.wait_for_phase("vote")
    ballot = table.ballot(anna)
    forged = from_the_future(signed_click(fake, anna, ballot, ballot_button(ballot, bo)))
    assert fake.send(forged, app.events_url).status_code == 200
    game_id = table.game_id()
    table.wait(lambda: seat_rows(db, game_id)[anna]["ballot"] == bo or None, "the ballot")
    with db.connect() as connection:
        kept = connection.scalar(
            text("SELECT clicked_at FROM ballots WHERE voter_key = :v"), {"v": anna}
        )
    assert kept < int(time.time()) + 5, "the click's time is held to the request's"
    time.sleep(1.5)  # past the second a request's timestamp rounds away
    table.click(anna, ballot, ballot_button(ballot, cia))
    table.wait(
        lambda: seat_rows(db, game_id)[anna]["ballot"] == cia or None,
        "the later honest click to count",
    )
    assert not [m for m in fake.ephemerals(anna) if "stays" in m.rendered_text]


def test_a_heard_enough_click_delivered_twice_marks_once(
    fake: FakeSlack, app: AppProcess, db: Engine
) -> None:
    table, (anna, _, _) = to_the_day(fake, app, db)
    board = table.board("Heard enough")
    click = signed_click(fake, anna, board, board.button("Heard enough").action_id)
    for headers in (None, RETRY, None):
        assert fake.send(click, app.events_url, headers=headers).status_code == 200
    settled(fake)
    game_id = table.game_id()
    assert seat_rows(db, game_id)[anna]["heard_enough"], "the same click thrice is one mark"
    assert not [m for m in fake.ephemerals(anna) if "Taken back" in m.rendered_text]

    forged = from_the_future(
        signed_click(fake, anna, board, board.button("Heard enough").action_id)
    )
    assert fake.send(forged, app.events_url).status_code == 200
    table.wait(lambda: not seat_rows(db, game_id)[anna]["heard_enough"] or None, "taken back")
    time.sleep(1.5)  # past the second a request's timestamp rounds away, as above
    table.click(anna, board, "Heard enough")  # a click after the forged one still counts
    table.wait(lambda: seat_rows(db, game_id)[anna]["heard_enough"] or None, "the mark again")
    assert table.game()["phase"] == "day", "one of three is not more than half"


def send_both(fake: FakeSlack, url: str | None, request: SignedRequest, first: bool) -> None:
    """The command and Slack's retry of it, at the same instant (``first``: the original is
    let go a moment earlier, else the retry is)."""
    start = threading.Barrier(2)

    def send(headers: dict[str, str] | None, lead: bool) -> None:
        start.wait()
        if not lead:
            time.sleep(0.005)  # a moment behind the other: which one Slack let go first
        assert fake.send(request, url, headers=headers).status_code == 200

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
    fake: FakeSlack, app: AppProcess, db: Engine, original_first: bool
) -> None:
    anna = new_people(fake, 1)[0]
    tables = [Table(fake, app, db) for _ in range(4)]
    for table in tables:
        send_both(fake, app.events_url, signed_command(fake, anna, table.channel), original_first)
    # And the retry wholly before the original, as when the original was held up on its way.
    last = tables[-1]
    late = Table(fake, app, db)
    command = signed_command(fake, anna, late.channel)
    assert fake.send(command, app.events_url, headers=RETRY).status_code == 200
    late.lobby()
    assert fake.send(command, app.events_url).status_code == 200
    settled(fake)
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
    fake: FakeSlack, app: AppProcess, db: Engine
) -> None:
    anna = new_people(fake, 1)[0]
    table = Table(fake, app, db)
    stop = signed_command(fake, anna, table.channel, "stop")
    first = {"X-Slack-Retry-Num": "0", "X-Slack-Retry-Reason": ""}
    assert fake.send(stop, app.events_url, headers=first).status_code == 200
    table.ephemeral(anna, "No game is running")
    assert fake.send(stop, app.events_url, headers=RETRY).status_code == 200
    settled(fake)
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
