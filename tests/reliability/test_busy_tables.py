"""A busy table does not hold up a quiet one: its clicks wait in line for their game, one at a
time, and the app's other step threads stay free for other games; nor do tables whose *Start*
waits on Slack."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from sqlalchemy import Engine, text

from slackapp.app import STEP_THREADS
from slackapp.fakeslack import JSON, FakeSlack
from slackapp.game.cards import MAX_SEATS
from tests.e2e.driver import Table
from tests.reliability.support import Held, new_people, running_app
from tests.waiting import PATIENCE, until

STEPS_WAITING_ON = text(
    "SELECT count(*) FROM pg_stat_activity"
    " WHERE pg_blocking_pids(pid) @> ARRAY[CAST(:holder AS integer)]"
    " AND query ILIKE '%FOR NO KEY UPDATE%'"
)
"""Steps waiting for the game row the test holds (a delivery's insert may wait on it too,
for its key: not counted)."""


def steps_waiting_on(db: Engine, holder: int) -> int:
    with db.connect() as connection:
        return int(connection.scalar(STEPS_WAITING_ON, {"holder": holder}) or 0)


def test_a_quiet_tables_click_is_stepped_while_a_busy_tables_clicks_wait(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    """More *Join* clicks at one table than the app has step threads, while its game's row is
    locked (here, as a long step would): a click at another table is stepped meanwhile, only
    one of the busy table's clicks waits in the database, and all of them are stepped, in
    turn, once the lock goes."""
    with running_app(fake, database_url) as app:
        busy, quiet = Table(fake, app, db), Table(fake, app, db)
        host, *joiners = new_people(fake, STEP_THREADS + 2)
        assert 1 + len(joiners) <= MAX_SEATS, "more clicks than step threads, all of them Joins"
        quiet_host, guest = new_people(fake, 2)
        lobby = busy.seat_people(host, [])
        quiet_lobby = quiet.seat_people(quiet_host, [])
        with db.connect() as holding, holding.begin():
            holding.execute(
                text("SELECT id FROM games WHERE id = :game FOR UPDATE"), {"game": busy.game_id()}
            )
            holder = int(holding.scalar(text("SELECT pg_backend_pid()")) or 0)
            for user in joiners:
                busy.click(user, lobby, "Join")
            until(lambda: steps_waiting_on(db, holder) > 0, "a busy table's click to wait")
            quiet.click(guest, quiet_lobby, "Join")
            quiet.wait(lambda: len(quiet.seats()) == 2 or None, "the quiet table's guest seated")
            assert steps_waiting_on(db, holder) == 1, (
                "one busy click waits on the game, the rest in line"
            )
            assert len(busy.seats()) == 1
        busy.wait(lambda: len(busy.seats()) == 1 + len(joiners) or None, "every Join stepped")


def test_starts_waiting_on_slack_leave_the_step_threads_to_other_tables(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    """More tables *Start* than the app has step threads, each held at Slack opening its host's
    DM (as a *Start* waits for Slack's turns when many tables start together): every one of
    them reaches Slack, a click at another table is stepped and answered meanwhile, and a
    *Join* at a starting table waits for its night to begin and is told the game started."""
    with running_app(fake, database_url) as app:
        starting = [Table(fake, app, db) for _ in range(STEP_THREADS + 1)]
        hosts = new_people(fake, len(starting))
        guests = new_people(fake, len(starting))  # a game needs two people
        lobbies = [
            table.seat_people(host, [guest], bots=True)
            for table, host, guest in zip(starting, hosts, guests, strict=True)
        ]
        quiet = Table(fake, app, db)
        quiet_host, guest, late = new_people(fake, 3)
        quiet_lobby = quiet.seat_people(quiet_host, [])
        with contextlib.ExitStack() as holding:
            opening = [
                holding.enter_context(
                    Held(fake, "conversations.open", opening_with(host), applied=True)
                )
                for host in hosts
            ]
            for table, host, lobby in zip(starting, hosts, lobbies, strict=True):
                table.click(host, lobby, "Start")
            for held in opening:
                held.wait(PATIENCE)  # every Start waits at Slack at once
            seated = len(starting[0].seats())
            starting[0].click(late, lobbies[0], "Join")
            quiet.click(guest, quiet_lobby, "Join")
            quiet.lobby_shows(quiet_lobby, "Seated (2)")  # stepped, and its board redrawn
            assert [table.game()["phase"] for table in starting] == ["lobby"] * len(starting)
            assert len(starting[0].seats()) == seated, "the Join waits behind its table's Start"
        for table in starting:
            table.wait_for_phase("night")
        starting[0].ephemeral(late, "That game has already started.")
        assert late not in starting[0].seat_keys(), "the Join came after the night began"


def opening_with(user: str) -> Callable[[JSON], bool]:
    """A ``conversations.open`` with ``user``."""
    return lambda params: params.get("users") == user
