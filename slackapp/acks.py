"""Acknowledgements first: game steps wait while Slack's requests are being answered.

Slack gives an app three seconds to acknowledge, and the person who clicked watches the button
until it does; the step behind the click (a transaction and a few Web API calls) can wait a few
milliseconds. In one process both compete for the one interpreter lock, and on a small machine
for the same cores as the database, so during a burst of clicks every running step slows every
acknowledgement still to be made. A step therefore starts once requests have stopped arriving
for ``quiet`` seconds, or once it has waited ``patience`` seconds since it was queued: a burst
is answered first, and a steady stream of requests can delay the steps but never starve them.
A request that came alone (none answered in the ``quiet`` seconds before it) is no burst: once
it is answered, with no other in hand, its step starts at once. Waiting out the quiet there made
a lone click's screen take twice as long (a ``/varulv`` on an idle app: 38-42 ms to the
lobby's post against 17-19 ms).
The worker processes of one server share what they are acknowledging (:class:`AcrossWorkers`),
since on a small machine one worker's steps slow the other's acknowledgements just as much.
"""

from __future__ import annotations

import ctypes
import gc
import math
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

PATIENCE_SECONDS = 1.5
QUIET_SECONDS = 0.02
"""Longer than the gap between two requests of a burst, short next to a person's patience."""
STEP_THREADS = 8
"""As many as gunicorn's threads per worker: a step is a short transaction, its Slack work is
the deliverer's and its answer an answer thread's."""
STEPS_WHILE_BUSY = 1
"""Steps that may run at once while requests keep arriving (once they have waited enough)."""

P = ParamSpec("P")
T = TypeVar("T")


def last_two(last: float, before: float, at: float) -> tuple[float, float]:
    """The last two answers' times once another is answered ``at``; answers are timed before
    the lock that records them, so one may come in out of order.

    >>> last_two(10.0, 4.0, 12.0)
    (12.0, 10.0)
    >>> last_two(10.0, 4.0, 9.0)
    (10.0, 9.0)
    """
    return (at, last) if at > last else (last, max(before, at))


class AcrossWorkers:
    """Requests in hand and when the last two were answered, in memory every worker process
    of a server shares: made by the server before it forks its workers."""

    def __init__(self) -> None:
        self._lock = multiprocessing.Lock()
        self._values = multiprocessing.RawArray(ctypes.c_double, [0.0, -math.inf, -math.inf])

    def begin(self) -> None:
        with self._lock:
            self._values[0] += 1

    def end(self, at: float) -> None:
        with self._lock:
            self._values[0] -= 1
            self._values[1], self._values[2] = last_two(self._values[1], self._values[2], at)

    def read(self) -> tuple[int, float, float]:
        """Requests in hand, when the last was answered, and when the one before it was."""
        with self._lock:
            return int(self._values[0]), self._values[1], self._values[2]


class AckFirst:
    def __init__(
        self,
        patience: float = PATIENCE_SECONDS,
        quiet: float = QUIET_SECONDS,
        steps_while_busy: int = STEPS_WHILE_BUSY,
        workers: AcrossWorkers | None = None,
    ) -> None:
        self.patience = patience
        self.quiet = quiet
        self.steps_while_busy = steps_while_busy
        self.workers = workers
        """When given, the other workers' requests hold this worker's steps back too."""
        self._changed = threading.Condition()
        self._acknowledging = 0
        self._last_answered = -math.inf
        self._answered_before = -math.inf
        """When the request before the last was answered: the last came alone if long before."""
        self._steps = 0

    @contextmanager
    def acknowledging(self) -> Iterator[None]:
        """Around the handling of one request from Slack, up to its answer."""
        with self._changed:
            self._acknowledging += 1
        if self.workers is not None:
            self.workers.begin()
        try:
            yield
        finally:
            answered = time.monotonic()  # one clock for every process on the machine
            if self.workers is not None:
                self.workers.end(answered)
            with self._changed:
                self._acknowledging -= 1
                self._last_answered, self._answered_before = last_two(
                    self._last_answered, self._answered_before, answered
                )
                if not self._acknowledging:  # only then can the quiet begin: wake the steps
                    self._changed.notify_all()

    @contextmanager
    def turn(self, queued_at: float, patience: float | None = None) -> Iterator[None]:
        """Around one step queued at ``queued_at`` (a ``time.monotonic()``): it starts once no
        request has been in hand for ``quiet`` seconds, or as soon as none is when the last one
        came alone; or, ``patience`` seconds (this gate's unless given) after it was queued, as
        one of at most ``steps_while_busy`` steps running while requests come in."""
        with self._changed:
            while (delay := self._until_start(queued_at, patience)) > 0:
                self._changed.wait(delay)  # woken sooner when a request or a step ends
            self._steps += 1
        try:
            yield
        finally:
            with self._changed:
                self._steps -= 1
                self._changed.notify_all()

    def _until_start(self, queued_at: float, patience: float | None) -> float:
        """Seconds before a step queued at ``queued_at`` may start; 0 when it may now."""
        now = time.monotonic()
        acknowledging, last_answered = self._acknowledging, self._last_answered
        answered_before = self._answered_before
        if self.workers is not None:
            acknowledging, last_answered, answered_before = self.workers.read()
        quiet_from = last_answered + self.quiet
        came_alone = last_answered - answered_before >= self.quiet
        if not acknowledging and (now >= quiet_from or came_alone):
            return 0.0
        patient_from = queued_at + (self.patience if patience is None else patience)
        if now >= patient_from:
            # Waited enough: start if a busy-time slot is free, else when a step ends.
            return 0.0 if self._steps < self.steps_while_busy else self.quiet
        wait = patient_from - now if acknowledging else min(quiet_from, patient_from) - now
        # Nothing wakes this thread when another worker answers: look again soon.
        return wait if self.workers is None else min(wait, self.quiet)


class StepExecutor(ThreadPoolExecutor):
    """Bolt's executor for the game steps, letting acknowledgements go first."""

    def __init__(self, acks: AckFirst, max_workers: int = STEP_THREADS) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix="varulv-step")
        self.acks = acks

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        queued_at = time.monotonic()

        def in_turn() -> T:
            with self.acks.turn(queued_at):
                return fn(*args, **kwargs)

        return super().submit(in_turn)


LOOK_SECONDS = 5.0
"""How often the collector's thread looks whether a full pass is due: at most one pass that
often (looking each second had one every second while idle connections churned)."""
COLLECTOR_PATIENCE_SECONDS = 30.0
"""How long a full pass waits for a quiet moment: garbage can wait, a person cannot."""
NEVER = 1 << 30
"""A full-pass threshold never reached: Python's own trigger is off."""


class QuietCollector:
    """Python's cycle collector stops every thread (and so every acknowledgement) while it
    runs. What start-up built lives as long as the process: frozen, the full passes stop
    walking it. What they still walk grows with the connections held open (a thousand idle
    ones are some 50,000 objects, a pass of 30 to 90 ms, and their churn had Python start one
    every few seconds, whatever the requests in hand). So Python no longer starts full passes
    itself. This one does, on Python's own rule (the oldest generation has grown by a quarter
    since the last full pass), looked at every ``every`` seconds, and it takes its turn like a
    game step: once no request has been in hand for a moment, or once it has waited
    ``patience`` seconds (garbage can wait longer than a step). The young generations' passes,
    a millisecond or two, stay Python's. (Raising the young generation's threshold was
    measured too: it trades many short pauses for pauses of 30 to 120 ms, which is worse.)"""

    def __init__(
        self,
        acks: AckFirst,
        every: float = LOOK_SECONDS,
        patience: float = COLLECTOR_PATIENCE_SECONDS,
    ) -> None:
        self.acks = acks
        self.every = every
        self.patience = patience
        self.full_passes = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._full_passes, name="varulv-collector", daemon=True
        )
        self._thresholds = gc.get_threshold()
        self._oldest_after_pass = 0

    def start(self) -> None:
        """Once start-up is done: freeze what it built, and take over the full passes."""
        gc.collect()
        gc.freeze()
        young, middle, _ = self._thresholds
        gc.set_threshold(young, middle, NEVER)
        self._oldest_after_pass = len(gc.get_objects(2))
        self._thread.start()

    def stop(self) -> None:
        """Give the full passes back to Python (what start-up froze stays frozen)."""
        self._stopped.set()
        self._thread.join()
        gc.set_threshold(*self._thresholds)

    def _full_passes(self) -> None:
        while not self._stopped.wait(self.every):
            with self.acks.turn(time.monotonic(), self.patience):
                if len(gc.get_objects(2)) > self._oldest_after_pass * 5 // 4:
                    gc.collect()
                    self.full_passes += 1
                    self._oldest_after_pass = len(gc.get_objects(2))
