"""``Lanes``: one game's clicks one after another, on the thread already stepping that game."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

from slackapp.listeners.ack import Lanes
from tests.waiting import PATIENCE


def test_a_click_behind_a_busy_one_is_run_after_it_on_its_thread_and_frees_its_own() -> None:
    lanes = Lanes(lambda body: body.get("game"))
    first_began, let_first_end = threading.Event(), threading.Event()
    ran: list[tuple[str, int]] = []

    def first() -> None:
        first_began.set()
        assert let_first_end.wait(PATIENCE)
        ran.append(("first", threading.get_ident()))

    stepping = threading.Thread(target=lanes.run, args=(1, first))
    stepping.start()
    assert first_began.wait(PATIENCE)
    lanes.run(1, lambda: ran.append(("second", threading.get_ident())))  # returns at once
    lanes.run(2, lambda: ran.append(("other game", threading.get_ident())))  # runs here, now
    assert ran == [("other game", threading.get_ident())]
    let_first_end.set()
    stepping.join(PATIENCE)
    assert ran[1:] == [("first", stepping.ident), ("second", stepping.ident)]


def test_a_click_that_raises_does_not_stop_the_ones_behind_it() -> None:
    lanes = Lanes(lambda body: body.get("game"))
    began, let_end = threading.Event(), threading.Event()
    ran: list[str] = []

    def failing() -> None:
        began.set()
        assert let_end.wait(PATIENCE)
        raise RuntimeError("a step broke")

    stepping = threading.Thread(target=lanes.run, args=(7, failing))
    stepping.start()
    assert began.wait(PATIENCE)
    lanes.run(7, lambda: ran.append("behind"))
    let_end.set()
    stepping.join(PATIENCE)
    assert ran == ["behind"]
    lanes.run(7, lambda: ran.append("later"))  # the lane is free again
    assert ran == ["behind", "later"]


def test_the_clicks_behind_one_that_ends_its_thread_still_run() -> None:
    lanes = Lanes(lambda body: body.get("game"))
    began, let_end = threading.Event(), threading.Event()
    behind_ran = threading.Event()

    def ending() -> None:
        began.set()
        assert let_end.wait(PATIENCE)
        raise SystemExit  # the thread stops, as at an exit

    def step() -> None:
        with contextlib.suppress(SystemExit):
            lanes.run(3, ending)

    stepping = threading.Thread(target=step)
    stepping.start()
    assert began.wait(PATIENCE)
    lanes.run(3, behind_ran.set)
    let_end.set()
    stepping.join(PATIENCE)
    assert behind_ran.wait(PATIENCE), "the click behind ran on another thread"
    done = threading.Event()
    lanes.run(3, done.set)  # and the lane goes on
    assert done.wait(PATIENCE)


def test_work_that_waits_on_slack_holds_its_lane_on_a_thread_of_its_own() -> None:
    """A *Start* (``aside``) leaves the step thread it came on at once, holds its game's lane
    on a start thread while it waits, and the click behind it goes back to the step threads."""
    with ThreadPoolExecutor(1, thread_name_prefix="step") as steps:
        lanes = Lanes(lambda body: body.get("game"), steps=steps)
        began, let_end = threading.Event(), threading.Event()
        ran: list[tuple[str, str]] = []

        def start() -> None:
            began.set()
            assert let_end.wait(PATIENCE)
            ran.append(("start", threading.current_thread().name))

        steps.submit(lanes.run, 5, start, True).result(PATIENCE)  # the step thread is free
        assert began.wait(PATIENCE)
        behind = steps.submit(
            lanes.run, 5, lambda: ran.append(("join", threading.current_thread().name))
        )
        behind.result(PATIENCE)  # queued behind the start, not run
        other = threading.Event()
        steps.submit(lanes.run, 6, other.set).result(PATIENCE)  # another game, stepped now
        assert other.is_set() and ran == []
        joined = threading.Event()
        lanes.run(5, joined.set)
        let_end.set()
        assert joined.wait(PATIENCE)
        assert ran[0][0] == "start" and ran[0][1].startswith("varulv-start")
        assert ran[1][0] == "join" and ran[1][1].startswith("step"), "back on a step thread"
