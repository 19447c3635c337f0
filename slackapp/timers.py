"""Deadlines: the database keeps them; APScheduler only wakes the app up when one is due.

Each deadline gets a one-shot job at its exact time. A sweep every few seconds arms the
deadlines other processes set that fall due before the next sweep (a ``varulv serve`` with its
timers off arms none), and catches whatever a job could not (a job lost in a restart).
Both only wake the same loop, which takes the due games in batches (``SELECT ... FOR NO KEY
UPDATE SKIP LOCKED LIMIT``), lets the phase machine catch up with the clock for each, and
commits each batch once, so a late, double or concurrent wake-up is harmless, and games due
together are stepped together: their messages go out together too.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import outside_transaction
from slackapp.db.models import TIMED_PHASES, Game

log = logging.getLogger(__name__)

SWEEP_SECONDS = 2.0
LOOK_AHEAD_SWEEPS = 2
"""A sweep arms the deadlines due within this many sweeps: one late sweep still arms in time."""
RUNNERS = 2
"""Batches of deadlines stepped at once: one computes while the other waits on the database."""
STALLED_SECONDS = 120.0
"""The timers count as stopped when no sweep has begun or moved on (a batch stepped) for this
long: a sweep stuck on a connection that never answers stops them as surely as a scheduler
shut down, for later sweeps are skipped while it hangs. Far longer than a storm's sweep, or
a prune's first batches after an upgrade."""
STOP_WAIT_SECONDS = 10.0
"""How long stopping waits for the batches under way to be committed."""

StepDue = Callable[[], int]
"""Step one batch of the games whose deadline has passed; how many were found."""


class Deadlines:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        sweep_seconds: float = SWEEP_SECONDS,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sessions = sessions
        self.now = now
        """The clock deadlines are due by (the steps' own, so a test can move it on)."""
        self.monotonic = monotonic
        """The clock a stalled sweep is timed by."""
        self.scheduler = BackgroundScheduler(
            timezone="UTC", executors={"default": {"type": "threadpool", "max_workers": 10}}
        )
        self.sweep_seconds = sweep_seconds
        self._step_due: StepDue | None = None
        self._batch = 0
        self._also: tuple[Callable[[], object], ...] = ()
        self._changed = threading.Condition()
        self._running = 0
        self._again = False
        self._stopping = False
        self._moved_at = monotonic()

    def start(
        self, step_due: StepDue, batch: int, also: tuple[Callable[[], object], ...] = ()
    ) -> None:
        """Start stepping due games at deadlines, ``batch`` at a time (what ``step_due``
        takes), and re-arm the deadline of every open game.

        ``also``: steps each sweep runs too, that find their own due rows in the database
        (the standing tables).
        """
        self._step_due = step_due
        self._batch = batch
        self._also = also
        self.scheduler.add_job(
            self.sweep,
            "interval",
            seconds=self.sweep_seconds,
            id="sweep",
            max_instances=1,
            coalesce=True,
        )
        self._moved_at = self.monotonic()
        self.scheduler.start()
        for game_id, deadline in self.armed_games():
            self.arm(game_id, deadline)

    def stop(self) -> None:
        """Take no further deadline, and wait (up to ``STOP_WAIT_SECONDS``) for the batches
        under way to be committed, so that their messages go while the deliverer still runs."""
        with self._changed:
            self._stopping = True
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        with self._changed:
            self._changed.wait_for(lambda: self._running == 0, STOP_WAIT_SECONDS)

    def keeping_time(self) -> bool:
        """The scheduler runs, and a sweep has begun or moved on within ``STALLED_SECONDS``."""
        return (
            self.scheduler.running
            and not self._stopping
            and self.monotonic() - self._moved_at < STALLED_SECONDS
        )

    def arm(self, game_id: int, at: datetime) -> None:
        if not self.scheduler.running:
            return  # the sweep of whichever process runs timers finds it
        self.scheduler.add_job(
            self.wake,
            "date",
            run_date=at,
            id=f"deadline-{game_id}",
            replace_existing=True,
            misfire_grace_time=None,
        )

    def disarm(self, game_id: int) -> None:
        """The game has no deadline any more: its job goes now, not when the old one was due."""
        if not self.scheduler.running:
            return
        with contextlib.suppress(JobLookupError):  # already run, or armed in another process
            self.scheduler.remove_job(f"deadline-{game_id}")

    def wake(self) -> None:
        """Step every due game, a batch at a time. A thousand deadlines due at once wake this
        a thousand times: at most RUNNERS of the wake-ups step batches, the others only ask
        them to look once more before they stop."""
        with self._changed:
            if self._stopping:
                return
            if self._running >= RUNNERS:
                self._again = True
                return
            self._running += 1
            self._again = False
        while True:
            while self._step_batch() >= self._batch > 0 and not self._stopping:
                self._moved_at = self.monotonic()
            with self._changed:
                # Stop running in the same breath as the last look: a wake-up that asked
                # meanwhile either sees a free runner or is looked at here.
                if not self._again or self._stopping:
                    self._running -= 1
                    self._changed.notify_all()
                    return
                self._again = False

    def _step_batch(self) -> int:
        if self._step_due is None:
            return 0
        try:
            return self._step_due()
        except Exception:
            log.exception("stepping due deadlines failed; the sweep will try again")
            return 0

    def sweep(self) -> None:
        """Arm what falls due before the sweep after next, step what is due (in that order,
        so that a deadline falling due meanwhile is one or the other), then the other sweeps."""
        self._moved_at = self.monotonic()
        for step in (self.arm_upcoming, self.wake, *self._also):
            if self._stopping:
                return
            try:
                step()
            except Exception:
                log.exception("a sweep step failed; the next sweep tries again")
        self._moved_at = self.monotonic()

    def due_games(self) -> list[int]:
        """Open games whose deadline has passed, oldest first."""
        with outside_transaction(self.sessions) as session:
            return list(
                session.scalars(
                    select(Game.id)
                    .where(Game.phase.in_([p.value for p in TIMED_PHASES]))
                    .where(Game.deadline <= self.now())
                    .order_by(Game.deadline)
                )
            )

    def arm_upcoming(self) -> None:
        """Arm, to the second, the deadlines due before the sweep after next that this
        process has not armed: those another process set."""
        now = self.now()
        until = now + timedelta(seconds=self.sweep_seconds * LOOK_AHEAD_SWEEPS)
        for game_id, deadline in self.armed_games(after=now, until=until):
            job = self.scheduler.get_job(f"deadline-{game_id}")
            if job is None or job.next_run_time != deadline:
                self.arm(game_id, deadline)

    def armed_games(
        self, after: datetime | None = None, until: datetime | None = None
    ) -> list[tuple[int, datetime]]:
        """Every open game's id and deadline (after ``after``, up to ``until``), to re-arm
        timers after a restart, or ahead of a sweep."""
        query = select(Game.id, Game.deadline).where(
            Game.phase.in_([p.value for p in TIMED_PHASES]), Game.deadline.is_not(None)
        )
        if after is not None:
            query = query.where(Game.deadline > after)
        if until is not None:
            query = query.where(Game.deadline <= until)
        with outside_transaction(self.sessions) as session:
            rows = session.execute(query)
            return [(game_id, deadline) for game_id, deadline in rows if deadline is not None]
