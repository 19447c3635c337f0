"""``kill -9`` at every one of a whole game's Slack messages in turn, a process still alive taking
the game over each time: whichever message the crash falls on, the game ends in a reveal the
referee agrees with, and no screen contradicts what was committed."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest
from sqlalchemy import Engine, text

from slackapp.fakeslack import FakeSlack, Message
from tests.e2e.conftest import NO_LATE_LANDINGS, start_app
from tests.e2e.driver import Table, first_choice
from tests.reliability.support import HeldNth, conversations, new_people, seat_rows
from tests.waiting import PATIENCE

pytestmark = pytest.mark.long(30)

T = TypeVar("T")

MESSAGE_CALLS = ("chat.postMessage", "chat.update", "response_url")
"""A message posted, updated, or redrawn through the response URL of the click it answers."""


def finish_from_anywhere(table: Table, people: list[str]) -> None:
    """Play whatever is left of a three-person game, from whichever phase it is in."""

    def opened() -> bool:
        with table.db.connect() as connection:
            return bool(
                connection.execute(
                    text("SELECT count(*) FROM games WHERE channel_id = :c"), {"c": table.channel}
                ).scalar_one()
            )

    if not opened():
        table.command(people[0])
        table.wait(lambda: opened() or None, "the table opened")
    phase = table.game()["phase"]
    if phase == "lobby":
        for user in people:
            if user not in table.seat_keys():
                table.click(user, table.lobby(), "Join")
        table.wait(lambda: len(table.seats()) == len(people) or None, "everyone seated")
        table.start(people[0])
        phase = "night"
    if phase == "night":
        table.wait(
            lambda: all(f"dm:{user}" in table.posted() for user in people) or None,
            "every card shown",
        )
        for user in people:
            if not seat_rows(table.db, table.game_id())[user]["confirmed"]:
                table.finish_night(user, first_choice)
        phase = "day"
    if phase == "day":
        click_each_while(table, people, "day", "Heard enough", "Heard enough")
        phase = "vote"
    if phase == "vote":
        table.wait_for_phase("vote")
        table.vote_nobody_if_not_voted(people)
    table.wait_for_phase("over")


def click_each_while(table: Table, people: list[str], phase: str, board: str, label: str) -> None:
    """Each person clicks ``label`` on the phase's board while the phase lasts."""
    table.wait(
        lambda: table.game()["phase"] != phase or table.undelivered() == 0 or None,
        f"phase {phase} shown, or over",
    )

    def board_while_it_lasts() -> tuple[Message | None] | None:
        """The board; or none once the phase is over (clicks carried out by the process that
        took over may close it before the board is looked at), as wanted."""
        message = table.fake.find_message(table.channel, board)
        if message is not None:
            return (message,)
        return (None,) if table.game()["phase"] != phase else None

    (message,) = table.wait(board_while_it_lasts, f"the {phase} board, or its end")
    if message is None:
        return
    for user in people:
        # A majority or the last ballot may close the phase between the look at the phase and
        # the click, and then the board has no button left to press: it is over, as wanted.
        if table.game()["phase"] == phase:
            with contextlib.suppress(LookupError):
                table.click(user, message, label)


def assert_every_screen_shows_the_committed_game(table: Table, since: int) -> None:
    """Each message of the game shows the newest picture the app committed for it, and a
    message posted twice (Slack took it as the app died) was the very same message."""
    fake, game_id = table.fake, table.game_id()
    with table.db.connect() as connection:
        newest: dict[str, str] = dict(
            connection.execute(
                text(
                    "SELECT DISTINCT ON (surface) surface, text FROM outbox WHERE stream = :g "
                    "AND (failure IS NULL OR failure = 'superseded') AND surface NOT LIKE 'drop:%' "
                    "ORDER BY surface, version DESC"
                ),
                {"g": game_id},
            ).all()
        )
        shown = connection.execute(
            text("SELECT surface, channel, ts FROM messages WHERE stream = :g"), {"g": game_id}
        ).all()
    assert {surface for surface, _, _ in shown} == set(newest)
    for surface, channel, ts in shown:
        assert fake.message(channel, ts).text == newest[surface], surface
    posts: dict[tuple[str, str], list[object]] = {}
    for call in fake.calls[since:]:
        if call.method == "chat.postMessage" and call.ok:
            key = (str(call.params.get("channel")), str(call.params.get("text")))
            posts.setdefault(key, []).append(call.params.get("blocks"))
    for key, blocks in posts.items():
        assert len(blocks) <= 2 and all(b == blocks[0] for b in blocks), key


class Interrupted(Exception):
    """The message the test crashes the app at has reached Slack."""


class CrashingTable(Table):
    """A table whose every wait gives up as soon as ``held`` has caught its message."""

    held: HeldNth | None = None

    def wait(self, predicate: Callable[[], T | None], what: str, timeout: float = PATIENCE) -> T:
        def unless_held() -> T | None:
            if self.held is not None and self.held.reached.is_set():
                raise Interrupted
            return predicate()

        return super().wait(unless_held, what, timeout)


def test_a_crash_at_every_message_of_a_whole_game(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    """One whole game, again and again: each time the app is killed at the next of its Slack
    messages (alternately before Slack took it and after), and the process still alive takes
    the game over. Every game ends in a reveal the referee agrees with, and no screen
    contradicts what was committed."""
    # No call lands after its process is killed here (it is taken or not as the process dies).
    quick = functools.partial(start_app, fake, database_url, late_landing=NO_LATE_LANDINGS)
    survivor = quick()
    crashes = 0
    starting = ThreadPoolExecutor(1)  # the next victim starts while the survivor plays on
    upcoming = starting.submit(quick)
    try:
        for n in range(80):
            people = new_people(fake, 3)
            victim = upcoming.result()
            upcoming = starting.submit(quick)
            table = CrashingTable(fake, victim, db)
            since = len(fake.calls)

            def channels(table: Table = table, people: list[str] = people) -> set[str]:
                return conversations(fake, table, people)

            table.held = HeldNth(fake, MESSAGE_CALLS, channels, n, applied=n % 2 == 1)
            with table.held:
                with contextlib.suppress(Interrupted):
                    finish_from_anywhere(table, people)
                reached = table.held.reached.is_set()
                victim.kill()
            table.held = None
            table.app = survivor
            if not reached:
                break  # the game has fewer messages than n: every one was crashed at
            crashes += 1
            finish_from_anywhere(table, people)
            table.stored_outcome_matches_referee()
            table.reveal()
            assert_every_screen_shows_the_committed_game(table, since)
    finally:
        survivor.stop()
        upcoming.result().stop()
        starting.shutdown()
    assert crashes >= 20, "a whole game makes at least twenty Slack messages"
