"""End-to-end fixtures: a real PostgreSQL, the fake Slack, and the app served over real HTTP."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, Unpack

import pytest
from sqlalchemy import Engine, create_engine

from slackapp import serving
from slackapp.db.engine import sqlalchemy_url
from slackapp.fakeslack import UNLIMITED, FakeSlack
from slackapp.server import WORKING
from slackapp.serving import (
    SERVE,
    ExitedAtStart,
    app_environment,
    free_port,
    healthy,
)
from tests import processes
from tests.databases import migrated_database
from tests.forked import fork_python
from tests.waiting import PATIENCE

SIGNING_SECRET = "e2e-signing-secret"
BOT_TOKEN = "xoxb-test"
ROOT = Path(__file__).resolve().parents[2]

ACK_LATENCIES: list[float] = []


@pytest.fixture(scope="session")
def database_url(postgres: str) -> str:
    """The database this worker's end-to-end apps share (each of their games has its own
    channel); the run's other workers have theirs, so no app delivers another's games."""
    return migrated_database(postgres, "e2e")


@pytest.fixture(scope="session")
def db(database_url: str) -> Iterator[Engine]:
    engine = create_engine(sqlalchemy_url(database_url))
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def fake() -> Iterator[FakeSlack]:
    # The whole run plays hundreds of games in this one workspace, and its apps pace chat.update
    # far faster than Slack would (tests/conftest.py): Slack's limits are enforced by the
    # stand-ins of the tests that are about them.
    with FakeSlack(
        SIGNING_SECRET, tokens=[BOT_TOKEN], limits=UNLIMITED, trigger_ttl=PATIENCE
    ) as slack:
        yield slack
        ACK_LATENCIES.extend(slack.ack_latencies)


class PhaseLengths(TypedDict, total=False):
    """Seconds for a phase, shorter than a channel may choose."""

    night: int
    day: int
    vote: int


@dataclass
class AppProcess:
    url: str
    process: processes.Started
    log: Path

    @property
    def events_url(self) -> str:
        return f"{self.url}/slack/events"

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def kill(self) -> None:
        """``kill -9`` the server and its workers at once, as a crashed host would."""
        processes.signal_group(self.process, signal.SIGKILL)
        processes.end(self.process)

    def stop(self) -> None:
        """Stop the server as a platform does (SIGTERM), and any worker that lingers."""
        processes.end(self.process)


NO_LATE_LANDINGS = 0.5
"""The window for late landings (``start_app``'s ``late_landing``) of apps whose stand-in lets
no call land after the process that made it was killed: each takeover then waits half a second
before the dead process's messages are drawn once more, not Slack's half minute."""


def start_app(
    fake: FakeSlack,
    database_url: str,
    env: dict[str, str] | None = None,
    port: int | None = None,
    ready: Callable[[AppProcess], bool] | None = None,
    work: bool = False,
    late_landing: float | None = None,
    **lengths: Unpack[PhaseLengths],
) -> AppProcess:
    """``varulv serve`` as a real process, talking to the fake Slack and the test database;
    with ``work``, ``varulv work``, up once it says it keeps the timers.

    ``env`` adds or overrides variables (e.g. ``WEB_CONCURRENCY``). ``night``, ``day`` and
    ``vote`` give phases shorter than a channel may choose, for tests that wait for deadlines;
    ``late_landing``, a window for late landings shorter than Slack's (``tests.e2e.short_phases``).
    The server gets its own process group, so that stopping or killing it takes its workers
    down with it; the test run ends it in any case (``tests.processes``). It is up once
    ``ready`` says so: by default, once ``/healthz`` answers.
    """
    port = port or free_port()  # chosen by the caller when a URL must name it in advance
    descriptor, name = tempfile.mkstemp(prefix="varulv-app-", suffix=".log")
    os.close(descriptor)
    log = Path(name)
    app_env = app_environment(
        bot_token=BOT_TOKEN,
        signing_secret=SIGNING_SECRET,
        api_url=fake.api_url,
        database_url=database_url,
        port=port,
        extra=env,
    )
    if work and lengths:
        raise ValueError("a game's phase lengths are set where it is opened, not by varulv work")
    command: tuple[str, ...] = ("-m", "slackapp.cli", "work") if work else SERVE
    if work:
        ready = ready or (lambda app: WORKING in app.log.read_text())
    elif lengths or late_landing is not None:
        seconds = (lengths.get("night", 120), lengths.get("day", 300), lengths.get("vote", 120))
        late = () if late_landing is None else (str(late_landing),)
        command = ("-m", "tests.e2e.short_phases", *map(str, seconds), *late)
    process = processes.track(fork_python(command, app_env, log, cwd=ROOT))
    app = AppProcess(url=f"http://127.0.0.1:{port}", process=process, log=log)
    try:
        wait_until_ready(app, ready)
    except BaseException:
        app.stop()
        raise
    return app


def wait_until_ready(
    app: AppProcess, ready: Callable[[AppProcess], bool] | None = None, patience: float = 120
) -> None:
    """Until ``ready`` (by default: ``/healthz`` answers) says the app is up."""
    check = (lambda: ready(app)) if ready else (lambda: healthy(app.url))
    try:
        up = serving.wait_until_ready(app.process, check, patience)
    except ExitedAtStart:
        raise RuntimeError(f"the app exited at start:\n{app.log_tail()}") from None
    if not up:
        raise RuntimeError(f"the app did not become ready in {patience:g} s:\n{app.log_tail()}")


@pytest.fixture(scope="session")
def app(fake: FakeSlack, database_url: str) -> Iterator[AppProcess]:
    """The app with the default (long) phase lengths: games are played by clicks."""
    process = start_app(fake, database_url)
    try:
        yield process
    finally:
        process.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if ACK_LATENCIES:
        slowest = max(ACK_LATENCIES)
        terminalreporter.write_line(
            f"end-to-end: {len(ACK_LATENCIES)} requests acknowledged; "
            f"slowest acknowledgement {slowest * 1000:.1f} ms"
        )
