"""Waiting for what nothing announces: another process's state, a log line, a row in the
database. Where the stand-in or a thread can say so, tests wait on that instead (an event, the
stand-in's ``wait_for``); here the condition is looked at again and again."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

PATIENCE = 60.0
"""Only how long a failing test takes to say so: a busy machine may be slow, never wrong."""


def until(
    condition: Callable[[], T], what: str, timeout: float = PATIENCE, every: float = 0.02
) -> T:
    """``condition()`` once it is truthy; AssertionError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (seen := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(every)  # nothing to wait on: look again
    return seen
