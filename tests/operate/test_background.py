"""``varulv serve``'s background process: it shows what the web workers' steps commit, it is
started again should it die, and it never outlives its server."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator

import pytest

from slackapp.server import BACKGROUND_NICENESS
from tests import processes, waiting
from tests.e2e.conftest import AppProcess, start_app
from tests.operate.conftest import PEOPLE, Deployment, fresh_database, token_deployment
from tests.waiting import PATIENCE

ALVA, BENGT, _, _ = PEOPLE
STARTED = "the background process delivers and keeps the timers"


@pytest.fixture(scope="module")
def served(postgres: str) -> Iterator[Deployment]:
    """A deployment of its own: its background process is killed here."""
    with token_deployment(postgres, "background") as deployment:
        yield deployment


def background_pids(deployment: Deployment, app: AppProcess | None = None) -> list[int]:
    """Each background process the server started, in order, as its log says."""
    lines = deployment.log_lines(app)
    return [int(line["pid"]) for line in lines if line.get("message") == STARTED]


def stat_fields(pid: int) -> list[str]:
    """``/proc/PID/stat`` from the state on (field 3), after the name that may hold spaces."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rpartition(")")[2].split()


def gone(pid: int) -> bool:
    """No such process, or one that has exited and waits only to be reaped."""
    try:
        return stat_fields(pid)[0] == "Z"
    except FileNotFoundError:
        return True


def until(condition: Callable[[], object], what: str, timeout: float = PATIENCE) -> None:
    waiting.until(condition, what, timeout, every=0.05)


def test_a_background_process_that_dies_is_started_again_and_shows_the_steps(
    served: Deployment,
) -> None:
    until(lambda: background_pids(served), "the background process")
    (first,) = background_pids(served)
    assert first != served.app.process.pid, "a process of its own, not the server's"
    os.kill(first, signal.SIGKILL)
    until(lambda: len(background_pids(served)) == 2, "a new background process")
    assert background_pids(served)[1] != first
    assert any(line["level"] == "ERROR" for line in served.log_lines()), "the server said so"

    table = served.table()
    table.seat_people(ALVA, [BENGT])  # waits for the lobby's post and its redraw at the join
    table.wait(lambda: table.undelivered() == 0 or None, "every message shown")


def niceness(pid: int) -> int:
    return int(stat_fields(pid)[16])  # field 19


def test_the_background_process_yields_the_cores_to_the_web_workers(
    served: Deployment,
) -> None:
    """Acknowledgements are due within Slack's 3 s; deliveries and deadlines can wait."""
    until(lambda: background_pids(served), "the background process")
    background = background_pids(served)[-1]
    server = served.app.process.pid
    assert niceness(background) == niceness(server) + BACKGROUND_NICENESS


def test_the_background_process_does_not_outlive_its_server(
    served: Deployment, postgres: str
) -> None:
    url = fresh_database(postgres, "orphan")
    app = start_app(served.fake, url)
    try:
        until(lambda: background_pids(served, app), "the background process")
        (background,) = background_pids(served, app)
        os.kill(app.process.pid, signal.SIGKILL)  # the server alone, not its process group
        until(lambda: gone(background), "the background process to stop with its server")
    finally:
        processes.signal_group(app.process, signal.SIGKILL)
        processes.end(app.process)
