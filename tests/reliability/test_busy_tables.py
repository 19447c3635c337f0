"""A busy table does not hold up a quiet one: its clicks wait in line for their game, one at a
time, and the app's other step threads stay free for other games."""

from __future__ import annotations

from sqlalchemy import Engine, text

from slackapp.app import STEP_THREADS
from slackapp.fakeslack import FakeSlack
from slackapp.game.cards import MAX_SEATS
from tests.e2e.driver import Table
from tests.reliability.support import new_people, running_app
from tests.waiting import until

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
