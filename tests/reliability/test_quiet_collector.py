"""The cycle collector's full passes wait, like game steps, until no request is in hand."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator

import pytest

from slackapp.acks import NEVER, AckFirst, QuietCollector

EVERY = 0.1


@pytest.fixture
def full_passes() -> Iterator[list[float]]:
    """When each full pass of the collector ended (time.monotonic()), from now on."""
    ended: list[float] = []
    lock = threading.Lock()

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            with lock:
                ended.append(time.monotonic())

    gc.callbacks.append(record)
    try:
        yield ended
    finally:
        gc.callbacks.remove(record)


def leave_cycles(count: int = 200_000) -> None:
    """Garbage in cycles, old enough to have reached the oldest generation."""
    garbage = []
    for _ in range(count):
        cycle: list[object] = []
        cycle.append(cycle)
        garbage.append(cycle)
    del garbage


def test_full_passes_run_only_when_no_request_is_in_hand(full_passes: list[float]) -> None:
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
            time.sleep(10 * EVERY)
            answered = time.monotonic()
        assert [at for at in full_passes if at >= began] == []
        deadline = time.monotonic() + 3
        while not [at for at in full_passes if at >= began] and time.monotonic() < deadline:
            time.sleep(0.01)
        after = [at for at in full_passes if at >= began]
        assert after, "a full pass ran once the request was answered"
        assert after[0] >= answered
    finally:
        collector.stop()
        gc.unfreeze()
    assert gc.get_threshold() == thresholds


def test_a_full_pass_that_waited_its_patience_runs_while_requests_keep_coming(
    full_passes: list[float],
) -> None:
    acks = AckFirst(patience=60, quiet=0.02)
    collector = QuietCollector(acks, every=EVERY, patience=0.3)
    collector.start()
    try:
        with acks.acknowledging():
            began = time.monotonic()
            leave_cycles()
            deadline = began + 3
            while not [at for at in full_passes if at >= began] and time.monotonic() < deadline:
                time.sleep(0.01)
        after = [at for at in full_passes if at >= began]
        assert after, "the collector is never starved"
        assert after[0] - began >= 0.3 - EVERY
    finally:
        collector.stop()
        gc.unfreeze()


def test_no_full_pass_runs_while_the_oldest_generation_has_not_grown(
    full_passes: list[float],
) -> None:
    collector = QuietCollector(AckFirst(), every=EVERY)
    collector.start()
    try:
        began = time.monotonic()
        time.sleep(10 * EVERY)
        assert [at for at in full_passes if at >= began] == []
        leave_cycles()
        deadline = time.monotonic() + 3
        while not collector.full_passes and time.monotonic() < deadline:
            time.sleep(0.01)
        # More than one may have run by now: after the first, a busy test process can grow the
        # small oldest generation by its quarter again before this line runs.
        assert collector.full_passes >= 1, "a full pass ran once the oldest generation grew"
    finally:
        collector.stop()
        gc.unfreeze()
