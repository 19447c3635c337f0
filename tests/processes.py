"""Processes the tests start: each in a process group of its own, and every one ended by the time
the test run ends, whatever happened (a failed test, an interrupted run)."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
from typing import Any, Protocol, TypeVar

import psutil


class Started(Protocol):
    """A process the tests started: a ``Popen``, or one forked (``tests.forked``)."""

    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


_running: set[Started] = set()
P = TypeVar("P", bound=Started)


def start(argv: list[str], **options: Any) -> subprocess.Popen[Any]:
    """``Popen`` in a new session: ending its group ends the workers it forked as well."""
    process: subprocess.Popen[Any] = subprocess.Popen(argv, start_new_session=True, **options)
    return track(process)


def track(process: P) -> P:
    """Ended by the time the test run ends, whatever happens."""
    _running.add(process)
    return process


def end(process: Started, grace: float = 10) -> None:
    """SIGTERM to its whole group, SIGKILL to whatever is left after ``grace`` seconds, and to
    any process it started in a group of its own (the sandbox's app)."""
    try:
        descendants = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        descendants = []
    signal_group(process, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        signal_group(process, signal.SIGKILL)
        process.wait()
    signal_group(process, signal.SIGKILL)  # a worker that outlived its master
    for child in descendants:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
    _running.discard(process)


def signal_group(process: Started, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def end_all() -> None:
    for process in list(_running):
        end(process, grace=5)


atexit.register(end_all)  # the last resort, should a run stop before its fixtures' finalisers
