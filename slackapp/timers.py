"""Deadlines: the database keeps them; APScheduler only wakes the app up when one is due.

Each deadline gets a one-shot job at its exact time, and a sweep every few seconds catches
whatever a job could not (a deadline armed by another process, a job lost in a restart).
Both call the same step, which locks the game and re-checks the phase, so a double or late
wake-up is harmless.
"""

from __future__ import annotations

import logging
from datetime import datetime

from apscheduler.schedulers.background import BackgroundScheduler

from slackapp.flow.control import armed_games, due_games, on_deadline
from slackapp.flow.table import Table

log = logging.getLogger(__name__)

SWEEP_SECONDS = 2.0


class Deadlines:
    def __init__(self, table: Table, sweep_seconds: float = SWEEP_SECONDS) -> None:
        self.table = table
        self.scheduler = BackgroundScheduler(timezone="UTC")
        self.sweep_seconds = sweep_seconds

    def start(self) -> None:
        """Start waking up, and re-arm the deadline of every open game."""
        self.scheduler.add_job(
            self.sweep,
            "interval",
            seconds=self.sweep_seconds,
            id="sweep",
            max_instances=1,
            coalesce=True,
        )
        self.scheduler.start()
        for game_id, deadline in armed_games(self.table):
            if isinstance(deadline, datetime):
                self.arm(game_id, deadline)

    def stop(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    def arm(self, game_id: int, at: datetime) -> None:
        self.scheduler.add_job(
            self.wake,
            "date",
            run_date=at,
            args=[game_id],
            id=f"deadline-{game_id}",
            replace_existing=True,
            misfire_grace_time=None,
        )

    def wake(self, game_id: int) -> None:
        try:
            on_deadline(self.table, game_id)
        except Exception:
            log.exception("deadline of game %s failed; the sweep will try again", game_id)

    def sweep(self) -> None:
        try:
            due = due_games(self.table)
        except Exception:
            log.exception("deadline sweep could not read the database")
            return
        for game_id in due:
            self.wake(game_id)
