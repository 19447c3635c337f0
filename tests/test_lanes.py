"""``Lanes``: one game's clicks one after another, on the thread already stepping that game."""

from __future__ import annotations

import contextlib
import threading

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
