"""Deadlines: the database keeps them; APScheduler only wakes the app up when one is due.

Each deadline gets a one-shot job at its exact time, and a sweep every few seconds catches
whatever a job could not (a deadline armed by another process, a job lost in a restart).
Both run the same step, which locks the game and lets the phase machine catch up with the
clock, so a late, double or concurrent wake-up is harmless. Games due together are stepped
side by side (each step is a short transaction), and their messages go out together.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime

from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from slackapp.acks import AckFirst
from slackapp.db.models import TIMED_PHASES, Game
from slackapp.logs import log_context

log = logging.getLogger(__name__)

SWEEP_SECONDS = 2.0
STEP_THREADS = 4
"""Deadline steps at once: each is a short transaction, so a few keep the database busy."""

Wake = Callable[[int], object]
"""The step that ends a game's due phase."""


class Deadlines:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        sweep_seconds: float = SWEEP_SECONDS,
        acks: AckFirst | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.sessions = sessions
        self.now = now
        """The clock deadlines are due by (the steps' own, so a test can move it on)."""
        self.acks = acks
        """When given, a wake-up lets Slack's requests in hand be acknowledged first."""
        self.scheduler = BackgroundScheduler(
            timezone="UTC", executors={"default": {"type": "threadpool", "max_workers": 10}}
        )
        self.sweep_seconds = sweep_seconds
        self._steps = ThreadPoolExecutor(STEP_THREADS, thread_name_prefix="varulv-deadline")
        self._wake: Wake | None = None
        self._also: tuple[Callable[[], object], ...] = ()

    def start(self, wake: Wake, also: tuple[Callable[[], object], ...] = ()) -> None:
        """Start waking ``wake`` at deadlines, and re-arm the deadline of every open game.

        ``also``: steps each sweep runs too, that find their own due rows in the database
        (the standing tables).
        """
        self._wake = wake
        self._also = also
        self.scheduler.add_job(
            self.sweep,
            "interval",
            seconds=self.sweep_seconds,
            id="sweep",
            max_instances=1,
            coalesce=True,
        )
        self.scheduler.start()
        for game_id, deadline in self.armed_games():
            self.arm(game_id, deadline)

    def stop(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        self._steps.shutdown(wait=False, cancel_futures=True)

    def arm(self, game_id: int, at: datetime) -> None:
        if not self.scheduler.running:
            return  # the sweep of whichever process runs timers finds it
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
        if self._wake is None:
            return
        with log_context(game_id=game_id), self._turn():
            try:
                self._wake(game_id)
            except Exception:
                log.exception("deadline of game %s failed; the sweep will try again", game_id)

    def sweep(self) -> None:
        try:
            due = self.due_games()
        except Exception:
            log.exception("deadline sweep could not read the database")
            return
        for _ in self._steps.map(self.wake, due):
            pass
        for also in self._also:
            with self._turn():
                try:
                    also()
                except Exception:
                    log.exception("a sweep step failed; the next sweep tries again")

    def due_games(self) -> list[int]:
        """Open games whose deadline has passed, oldest first."""
        with self.sessions() as session:
            return list(
                session.scalars(
                    select(Game.id)
                    .where(Game.phase.in_([p.value for p in TIMED_PHASES]))
                    .where(Game.deadline <= self.now())
                    .order_by(Game.deadline)
                )
            )

    def armed_games(self) -> list[tuple[int, datetime]]:
        """Every open game's id and deadline, to re-arm timers after a restart."""
        with self.sessions() as session:
            rows = session.execute(
                select(Game.id, Game.deadline).where(
                    Game.phase.in_([p.value for p in TIMED_PHASES]), Game.deadline.is_not(None)
                )
            )
            return [(game_id, deadline) for game_id, deadline in rows if deadline is not None]

    @contextmanager
    def _turn(self) -> Iterator[None]:
        with self.acks.turn(time.monotonic()) if self.acks else nullcontext():
            yield
