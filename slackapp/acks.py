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
"""

from __future__ import annotations

import math
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


class AckFirst:
    def __init__(
        self,
        patience: float = PATIENCE_SECONDS,
        quiet: float = QUIET_SECONDS,
        steps_while_busy: int = STEPS_WHILE_BUSY,
    ) -> None:
        self.patience = patience
        self.quiet = quiet
        self.steps_while_busy = steps_while_busy
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
        try:
            yield
        finally:
            answered = time.monotonic()
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
        quiet_from = last_answered + self.quiet
        came_alone = last_answered - answered_before >= self.quiet
        if not acknowledging and (now >= quiet_from or came_alone):
            return 0.0
        patient_from = queued_at + (self.patience if patience is None else patience)
        if now >= patient_from:
            # Waited enough: start if a busy-time slot is free, else when a step ends.
            return 0.0 if self._steps < self.steps_while_busy else self.quiet
        return patient_from - now if acknowledging else min(quiet_from, patient_from) - now


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
