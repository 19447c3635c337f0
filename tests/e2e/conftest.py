"""End-to-end fixtures: a real PostgreSQL, the fake Slack, and the app served over real HTTP."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from sqlalchemy import Engine, create_engine

from slackapp.db.engine import sqlalchemy_url
from slackapp.fakeslack import FakeSlack

SIGNING_SECRET = "e2e-signing-secret"
BOT_TOKEN = "xoxb-test"
ROOT = Path(__file__).resolve().parents[2]

ACK_LATENCIES: list[float] = []


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    """``DATABASE_URL`` when given; otherwise an embedded PostgreSQL for this test run."""
    given = os.environ.get("DATABASE_URL")
    if given:
        yield given
        return
    import pgserver

    # The server runs as its own user when we are root, so its folder must be reachable.
    folder = tempfile.mkdtemp(prefix="varulv-e2e-pg-")
    os.chmod(folder, 0o755)
    server = pgserver.get_server(Path(folder) / "data", cleanup_mode="delete")
    yield str(server.get_uri())
    server.cleanup()


@pytest.fixture(scope="session")
def db(database_url: str) -> Iterator[Engine]:
    engine = create_engine(sqlalchemy_url(database_url))
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def fake() -> Iterator[FakeSlack]:
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as slack:
        yield slack
        ACK_LATENCIES.extend(slack.ack_latencies)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class AppProcess:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def events_url(self) -> str:
        return f"{self.url}/slack/events"

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def kill(self) -> None:
        """``kill -9`` the server and its workers at once, as a crashed host would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_app(
    fake: FakeSlack,
    database_url: str,
    env: dict[str, str] | None = None,
    port: int | None = None,
    ready: Callable[[AppProcess], bool] | None = None,
    **lengths: int,
) -> AppProcess:
    """``varulv serve`` as a real process, talking to the fake Slack and the test database.

    ``env`` adds or overrides variables (e.g. ``WEB_CONCURRENCY``). The server gets its own
    process group, so that :meth:`AppProcess.kill` takes its workers down with it. It is
    up once ``ready`` says so: by default, once ``/healthz`` answers.
    """
    port = port or free_port()  # chosen by the caller when a URL must name it in advance
    log = Path(tempfile.mkstemp(prefix="varulv-app-", suffix=".log")[1])
    extra_env = env
    env = {
        **os.environ,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fake.api_url,
        "DATABASE_URL": database_url,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "VARULV_NIGHT_SECONDS": str(lengths.get("night", 120)),
        "VARULV_DAY_SECONDS": str(lengths.get("day", 300)),
        "VARULV_VOTE_SECONDS": str(lengths.get("vote", 120)),
    }
    env.pop("SLACK_APP_TOKEN", None)
    env.update(extra_env or {})
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "slackapp.cli", "serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    app = AppProcess(url=f"http://127.0.0.1:{port}", process=process, log=log)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the app exited at start:\n{app.log_tail()}")
        if (ready or healthy)(app):
            return app
        time.sleep(0.1)
    app.stop()
    raise RuntimeError(f"the app did not become ready:\n{app.log_tail()}")


def healthy(app: AppProcess) -> bool:
    try:
        return requests.get(f"{app.url}/healthz", timeout=1).status_code == 200
    except requests.ConnectionError:
        return False


@pytest.fixture(scope="session")
def app(fake: FakeSlack, database_url: str) -> Iterator[AppProcess]:
    """The app with the default (long) phase lengths: games are played by clicks."""
    process = start_app(fake, database_url)
    yield process
    process.stop()


@pytest.fixture(scope="session")
def quick_app(fake: FakeSlack, database_url: str) -> Iterator[AppProcess]:
    """The app with two-second phases, for games that end on their deadlines."""
    process = start_app(fake, database_url, night=2, day=2, vote=2)
    yield process
    process.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if ACK_LATENCIES:
        slowest = max(ACK_LATENCIES)
        terminalreporter.write_line(
            f"end-to-end: {len(ACK_LATENCIES)} requests acknowledged; "
            f"slowest acknowledgement {slowest * 1000:.1f} ms"
        )
