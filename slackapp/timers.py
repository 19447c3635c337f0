"""Deadlines: the database keeps them; APScheduler only wakes the app up when one is due.

Each deadline gets a one-shot job at its exact time, and a sweep every few seconds catches
whatever a job could not (a deadline armed by another process, a job lost in a restart).
Both call the same step, which locks the game and re-checks the phase, so a double or late
wake-up is harmless.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime

from apscheduler.schedulers.background import BackgroundScheduler

from slackapp.acks import AckFirst
from slackapp.flow.control import armed_games, due_games, on_deadline, undelivered_games
from slackapp.flow.night import deliver_cards
from slackapp.flow.table import NotInstalled, Table
from slackapp.logs import log_context

log = logging.getLogger(__name__)

SWEEP_SECONDS = 2.0


class Deadlines:
    def __init__(
        self, table: Table, sweep_seconds: float = SWEEP_SECONDS, acks: AckFirst | None = None
    ) -> None:
        self.table = table
        self.acks = acks
        """When given, a wake-up lets Slack's requests in hand be acknowledged first."""
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
        with log_context(game_id=game_id), self._turn():
            try:
                on_deadline(self.table, game_id)
            except Exception:
                log.exception("deadline of game %s failed; the sweep will try again", game_id)

    def sweep(self) -> None:
        try:
            due = due_games(self.table)
            undelivered = undelivered_games(self.table)
        except Exception:
            log.exception("deadline sweep could not read the database")
            return
        for game_id in due:
            self.wake(game_id)
        for game_id, team_id in undelivered:
            self.deliver(game_id, team_id)

    def deliver(self, game_id: int, team_id: str) -> None:
        """Send the cards a crash or an outage left unsent (the night's deadline still holds)."""
        with log_context(game_id=game_id), self._turn():
            try:
                deliver_cards(self.table.for_workspace(team_id), game_id)
            except NotInstalled:
                pass  # the deadline stops the game (on_deadline)
            except Exception:
                log.exception(
                    "could not send the cards of game %s; the sweep will try again", game_id
                )

    @contextmanager
    def _turn(self) -> Iterator[None]:
        with self.acks.turn(time.monotonic()) if self.acks else nullcontext():
            yield
