"""The cycle collector's full passes wait, like game steps, until no request is in hand."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator

import pytest

from slackapp.acks import NEVER, AckFirst, QuietCollector

EVERY = 0.1


PATIENCE = 60.0
"""How long a test waits for a full pass that should come: only how long a failing test takes
to say so, however busy the machine."""


class FullPasses:
    """When each full pass of the collector ended (time.monotonic()), from now on."""

    def __init__(self) -> None:
        self.ended: list[float] = []
        # Reentrant: the collector may run a pass in the thread that holds it.
        self._changed = threading.Condition(threading.RLock())

    def record(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            with self._changed:
                self.ended.append(time.monotonic())
                self._changed.notify_all()

    def since(self, began: float) -> list[float]:
        with self._changed:
            return [at for at in self.ended if at >= began]

    def wait_since(self, began: float) -> list[float]:
        with self._changed:
            self._changed.wait_for(lambda: self.since(began), PATIENCE)
            return self.since(began)


@pytest.fixture
def full_passes() -> Iterator[FullPasses]:
    passes = FullPasses()
    gc.callbacks.append(passes.record)
    try:
        yield passes
    finally:
        gc.callbacks.remove(passes.record)


def leave_cycles(count: int = 200_000) -> None:
    """Garbage in cycles, old enough to have reached the oldest generation."""
    garbage = []
    for _ in range(count):
        cycle: list[object] = []
        cycle.append(cycle)
        garbage.append(cycle)
    del garbage


def test_full_passes_run_only_when_no_request_is_in_hand(full_passes: FullPasses) -> None:
    acks = AckFirst(quiet=0.02)
    thresholds = gc.get_threshold()
    collector = QuietCollector(acks, every=EVERY, patience=5.0)
    collector.start()
    try:
        assert gc.get_threshold() == (thresholds[0], thresholds[1], NEVER)
        assert gc.get_freeze_count() > 0, "what start-up built is frozen"
        with acks.acknowledging():
            began = time.monotonic()
            leave_cycles()  # enough to have had Python start full passes itself
            # Time for the collector to look ten times, and each time leave the request be.
            time.sleep(10 * EVERY)
            answered = time.monotonic()
        assert full_passes.since(began) == []
        after = full_passes.wait_since(began)
        assert after, "a full pass ran once the request was answered"
        assert after[0] >= answered
    finally:
        collector.stop()
        gc.unfreeze()
    assert gc.get_threshold() == thresholds


def test_a_full_pass_that_waited_its_patience_runs_while_requests_keep_coming(
    full_passes: FullPasses,
) -> None:
    acks = AckFirst(patience=60, quiet=0.02)
    collector = QuietCollector(acks, every=EVERY, patience=0.3)
    collector.start()
    try:
        with acks.acknowledging():
            began = time.monotonic()
            leave_cycles()
            after = full_passes.wait_since(began)
        assert after, "the collector is never starved"
        assert after[0] - began >= 0.3 - EVERY
    finally:
        collector.stop()
        gc.unfreeze()


def test_no_full_pass_runs_while_the_oldest_generation_has_not_grown(
    full_passes: FullPasses,
) -> None:
    collector = QuietCollector(AckFirst(), every=EVERY)
    collector.start()
    try:
        began = time.monotonic()
        time.sleep(10 * EVERY)  # time for the collector to look ten times, and find no growth
        assert full_passes.since(began) == []
        leave_cycles()
        full_passes.wait_since(began)
        # More than one may have run by now: after the first, a busy test process can grow the
        # small oldest generation by its quarter again before this line runs.
        assert collector.full_passes >= 1, "a full pass ran once the oldest generation grew"
    finally:
        collector.stop()
        gc.unfreeze()
