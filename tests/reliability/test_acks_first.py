"""The acknowledgements-first gate: when a game step may start, around Slack's requests.

Each test holds the gate to a lower or an upper bound far from the machine's own pace (a quiet
of seconds where the app's is 20 ms), so that a slow machine cannot make it fail."""

from __future__ import annotations

import threading
import time

from slackapp.acks import AckFirst

LONG_QUIET = 5.0
PATIENT = 60.0


def step_started(acks: AckFirst, queued_at: float) -> tuple[threading.Thread, list[float]]:
    """A step queued at ``queued_at`` waiting for its turn in a thread; when it started."""
    started: list[float] = []

    def step() -> None:
        with acks.turn(queued_at):
            started.append(time.monotonic())

    thread = threading.Thread(target=step)
    thread.start()
    return thread, started


def test_a_lone_requests_step_starts_once_it_is_answered() -> None:
    for acks in (AckFirst(patience=PATIENT, quiet=LONG_QUIET),):
        with acks.acknowledging():
            thread, started = step_started(acks, time.monotonic())
            time.sleep(0.05)
            assert started == [], "no step starts while its request is in hand"
            answered = time.monotonic()
        thread.join(LONG_QUIET / 2)
        assert started, "it started without waiting out the quiet"
        assert started[0] >= answered


def test_a_burst_is_answered_before_its_steps_start() -> None:
    quiet = 0.3
    acks = AckFirst(patience=PATIENT, quiet=quiet)
    first = acks.acknowledging()
    first.__enter__()
    thread, started = step_started(acks, time.monotonic())
    with acks.acknowledging():  # a second request of the burst arrives
        first.__exit__(None, None, None)
        time.sleep(0.05)
        assert started == []
        answering = time.monotonic()  # no later than the gate's own time of the answer
    thread.join(10)
    assert started and started[0] >= answering + quiet, "it waited for the quiet"


def test_a_step_queued_during_a_steady_stream_waits_its_patience_at_most() -> None:
    acks = AckFirst(patience=0.5, quiet=LONG_QUIET)
    stop = threading.Event()

    def stream() -> None:
        while not stop.is_set():
            with acks.acknowledging():
                time.sleep(0.005)
            time.sleep(0.005)

    streaming = threading.Thread(target=stream)
    streaming.start()
    try:
        time.sleep(0.05)
        queued = time.monotonic()
        thread, started = step_started(acks, queued)
        thread.join(LONG_QUIET / 2)
        assert started, "never starved"
        assert started[0] >= queued + 0.5 - 0.01, "not before its patience"
    finally:
        stop.set()
        streaming.join()
