"""The processes a benchmark runs: the stand-in for Slack, the app and the floor as
``varulv serve`` would run them, and the database."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import psutil
import requests
from sqlalchemy import Engine, create_engine, text

from benchmarks.fire import Prepared, fire
from slackapp.db.engine import sqlalchemy_url, temporary_postgres
from slackapp.db.migrate import upgrade
from slackapp.fakeslack import UNLIMITED, FakeSlack, RateLimits
from slackapp.game.machine import DAY_SECONDS_BOUNDS, NIGHT_SECONDS_BOUNDS, VOTE_SECONDS_BOUNDS
from slackapp.serving import free_port
from tests import faults

ROOT = Path(__file__).resolve().parents[1]
SECRET = "load-signing-secret"
TOKEN = "xoxb-load"
TEAM = "T0001"
IN_FLIGHT = 50
WARM_UP = 10
"""``/varulv help`` sent to each server before anything is measured."""
LONG = {
    "night": NIGHT_SECONDS_BOUNDS[1],
    "day": DAY_SECONDS_BOUNDS[1],
    "vote": VOTE_SECONDS_BOUNDS[1],
}
"""Phase lengths for the storms, the longest allowed: every phase ends by clicks, not a timer."""


# -- the stand-in for Slack ----------------------------------------------------------------


def add_slack_ms(parser: argparse.ArgumentParser, default: float = 0.0) -> None:
    """``--slack-ms N``: the stand-in answers every Web API call N ms late, as a real Slack
    does (about 100 ms a call); 0 answers at once."""
    parser.add_argument(
        "--slack-ms",
        type=float,
        default=default,
        metavar="N",
        help=f"the stand-in for Slack answers every Web API call N ms late (default {default:g})",
    )


class Slack(FakeSlack):
    def __init__(self, limits: RateLimits = UNLIMITED, slack_ms: float = 0.0) -> None:
        """Unlimited unless told: a run plays thousands of games in one workspace, and Slack's
        limits would measure only the pacing (``benchmarks.tables`` measures that). Every Web
        API call answered ``slack_ms`` late."""
        super().__init__(SECRET, tokens=[TOKEN], limits=limits)
        if slack_ms:
            faults.slow_down(self, slack_ms / 1000)

    @contextlib.contextmanager
    def preparing(self, kind: str) -> Iterator[list[Prepared]]:
        """Commands and clicks inside the block are signed and kept for a storm, not sent."""
        prepared: list[Prepared] = []
        with self.keeping_requests() as kept:
            yield prepared
        prepared += [Prepared(kind, r.body.encode(), tuple(r.headers.items())) for r in kept]


# -- processes -------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User and system CPU time one process has used so far (0 once it is gone)."""
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return 0.0


def postmaster_of(db: Engine) -> int:
    """The benchmark's own PostgreSQL server process (it runs on this machine): the parent of
    the backend that answers ``db``."""
    with db.connect() as connection:
        backend = int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())
    return psutil.Process(backend).ppid()


def postgres_cpu_seconds(postmaster: int) -> float:
    """CPU time used so far by one PostgreSQL server: its postmaster, the backends and helpers
    alive now, and (the postmaster's reaped children's) those that have exited. Other
    PostgreSQL servers on the machine are not counted."""
    total = 0.0
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{postmaster}/stat").read_text().rpartition(")")[2].split()
        total += sum(int(field) for field in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    children = Path(f"/proc/{postmaster}/task/{postmaster}/children")
    with contextlib.suppress(OSError):
        for pid in children.read_text().split():
            total += cpu_seconds(int(pid))
    return total


@dataclass
class Server:
    name: str
    process: subprocess.Popen[bytes]
    url: str
    log: Path
    plays: bool = False
    """Whether it plays the game, replying and posting (the app), or only acknowledges (the
    floor)."""
    metrics_url: str = ""
    """The app's ``/metrics``, on a port of its own."""

    @property
    def events_url(self) -> str:
        return f"{self.url}/slack/events"

    def processes(self) -> list[int]:
        """The server and its worker processes (gunicorn's, or uvicorn's when many)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        found = children.read_text().split() if children.exists() else []
        return [self.process.pid, *(int(pid) for pid in found)]

    def peak_memory_mb(self) -> dict[int, float]:
        """VmHWM (peak resident set) of every process, in MB."""
        peaks = {}
        for pid in self.processes():
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peaks[pid] = int(line.split()[1]) / 1024
        return peaks

    def cpu_seconds(self) -> float:
        """User and system CPU time used so far by the server's processes."""
        return sum(cpu_seconds(pid) for pid in self.processes())

    def errors_logged(self) -> int:
        lines = self.log.read_text(errors="replace").splitlines()
        return sum(" ERROR " in line or line.startswith("Traceback") for line in lines)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.unlink(missing_ok=True)


def start_server(
    name: str,
    module: str,
    fake: FakeSlack,
    database_url: str,
    workers: int,
    root: Path = ROOT,
    settings: dict[str, str] | None = None,
    command: str = "serve",
) -> Server:
    """``module`` serving on a port of its own (for the app, ``varulv COMMAND``), once it is
    up: ``/healthz`` answers, or for ``varulv work``, which serves no requests, ``/metrics``."""
    port, metrics_port = free_port(), free_port()
    descriptor, log_name = tempfile.mkstemp(prefix=f"varulv-{name}-", suffix=".log")
    os.close(descriptor)
    log = Path(log_name)
    env = {
        **os.environ,
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.api_url,
        "DATABASE_URL": database_url,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "VARULV_METRICS_PORT": str(metrics_port),
        "WEB_CONCURRENCY": str(workers),
        "VARULV_NIGHT_SECONDS": str(LONG["night"]),
        "VARULV_DAY_SECONDS": str(LONG["day"]),
        "VARULV_VOTE_SECONDS": str(LONG["vote"]),
        # The stand-in enforces no limit here, and a run plays thousands of games in one
        # workspace: pacing chat.update to Slack's 50 a minute would measure only the pacing.
        "VARULV_UPDATES_PER_MINUTE": os.environ.get("VARULV_UPDATES_PER_MINUTE", "100000"),
        **(settings or {}),
    }
    env.pop("SLACK_APP_TOKEN", None)
    argv = [sys.executable, "-m", module, *([command] if module == "slackapp.cli" else [])]
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Server(
        name,
        process,
        f"http://127.0.0.1:{port}",
        log,
        module == "slackapp.cli",
        f"http://127.0.0.1:{metrics_port}/metrics",
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text()[-3000:]
            server.stop()
            raise RuntimeError(f"{name} exited at start:\n{tail}")
        # Refused, or held in the socket's backlog by a worker still starting.
        health = server.metrics_url if command == "work" else f"{server.url}/healthz"
        with contextlib.suppress(requests.RequestException):
            if requests.get(health, timeout=1).status_code == 200:
                return server
        time.sleep(0.1)
    tail = log.read_text()[-3000:]
    server.stop()
    raise RuntimeError(f"{name} did not become healthy:\n{tail}")


def warm_up(fake: Slack, pool: ProcessPoolExecutor, servers: list[Server]) -> None:
    """A few ``/varulv help`` first, one at a time: each server's first request makes Bolt
    check the token with Slack (the floor did at start-up) and fills Python's caches.

    Then it waits for the app's replies not carried in their acknowledgements (an older
    version's): they are sent once the requests stop coming, and ten of them still being sent
    made the first burst measured after the warm-up twice as slow to be acknowledged."""
    fake.add_channel("CWARMUP", "warm-up")
    for server in servers:
        # Each server its own requests: Slack's trigger_id is a request's own, and a server
        # acknowledges one it already has without running it again.
        with fake.preparing("warm-up") as prepared:
            for _ in range(WARM_UP):
                fake.slash_command("UWARMUP", text="help", channel_id="CWARMUP")
        before = len(fake.calls)
        timed = pool.submit(fire, server.events_url, prepared, 1).result()
        later = WARM_UP - sum(each.answered for each in timed)  # the rest answer in the ack
        deadline = time.monotonic() + 30
        while server.plays and replies_since(fake, before) < later:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{server.name} did not reply to its warm-up")
            time.sleep(0.01)


def replies_since(fake: Slack, before: int) -> int:
    return sum(call.method == "response_url" for call in fake.calls[before:])


@contextlib.contextmanager
def database() -> Iterator[str]:
    given = os.environ.get("DATABASE_URL")
    if given:
        yield given
        return
    with temporary_postgres("varulv-load-pg-") as server:
        yield str(server.get_uri())


@dataclass
class Bench:
    """What a benchmark runs against: the database (its URL and a migrated engine), the
    stand-in for Slack, and a client process of its own, already started."""

    url: str
    db: Engine
    fake: Slack
    pool: ProcessPoolExecutor


@contextlib.contextmanager
def bench(slack_ms: float = 0.0) -> Iterator[Bench]:
    with (
        database() as url,
        Slack(slack_ms=slack_ms) as fake,
        ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool,
    ):
        db = create_engine(sqlalchemy_url(url))
        upgrade(db)
        pool.submit(fire, "http://127.0.0.1:9/", [], 1).result()  # start the client process
        try:
            yield Bench(url, db, fake, pool)
        finally:
            db.dispose()


def load_average() -> float:
    return os.getloadavg()[0]
