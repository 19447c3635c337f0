"""What ``/metrics`` shows, in Prometheus's format, through ``prometheus_client``.

Counters, summaries and histograms are recorded where things happen, one line at each place:
steps and their latency, Slack's answers and rate-limit waits, deliveries, how late deadlines
were stepped. What the database holds (the outbox's depth and age, games by phase) is read when
``/metrics`` is scraped, by one query (one round trip, outside any transaction), so it is the
same whichever process is asked.

A scrape's cost is mostly prometheus_client formatting each sample (5-7 µs a line), so there
are few: latency by kind of step and by Web API method is a summary (a count and a sum, two
lines a label), and the buckets for percentiles are one unlabelled histogram each.

With several worker processes (``WEB_CONCURRENCY`` > 1) each writes its samples to files in
``PROMETHEUS_MULTIPROC_DIR`` (prometheus_client's multiprocess mode), and their supervisor,
which serves ``/metrics``, adds them up; :func:`prepare_multiprocess` sets the folder up before
the workers start. Every other process shows its own samples.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    Summary,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import Engine, func, select

from slackapp.config import hand_down_metrics_folder, metrics_folder_from_env
from slackapp.db.engine import AUTOCOMMIT
from slackapp.db.models import TIMED_PHASES, Game, OutboxEntry, ReinstallNeeded
from slackapp.serving import ServerThread, wsgi_server

# No ``_created`` line beside every series: Prometheus does not read them, and they were a
# fifth of what a scrape formats. The process's RSS, CPU and open files stay; the garbage
# collector's counts by generation and the Python version were a fifth of the rest.
disable_created_metrics()  # type: ignore[no-untyped-call]
REGISTRY.unregister(GC_COLLECTOR)
REGISTRY.unregister(PLATFORM_COLLECTOR)
STEP_SECONDS = Summary(
    "varulv_step_seconds",
    "Steps of the phase machine by kind: each one's transaction (lock, decide, store state "
    "and outbox, commit); a batch of deadlines is one.",
    ["kind"],
)
STEP_LATENCY = Histogram(
    "varulv_step_latency_seconds",
    "One step's transaction, every kind of step.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
)
DEADLINE_LATENESS = Histogram(
    "varulv_deadline_lateness_seconds",
    "How long after its deadline a phase was ended.",
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
DELIVERY_SECONDS = Summary(
    "varulv_delivery_seconds",
    "From a message's oldest undelivered version falling due to Slack taking it, by method.",
    ["method"],
)
DELIVERY_LATENCY = Histogram(
    "varulv_delivery_latency_seconds",
    "From a message's oldest undelivered version falling due to Slack taking it, every method.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60),
)
SLACK_ERRORS = Counter(
    "varulv_slack_errors",
    "Web API calls Slack did not take, by method and error.",
    ["method", "error"],
)
RATE_LIMIT_WAITS = Counter(
    "varulv_rate_limit_wait_seconds",
    "Time messages waited for a turn at Slack's rate limits, by method.",
    ["method"],
)
DELIVERY_READS = Counter(
    "varulv_delivery_reads",
    "The deliverer's reads of outbox streams' undelivered messages, by how: held (on leases it "
    "has, in no transaction) or claimed (in a transaction that takes or renews the leases).",
    ["how"],
)
TOKEN_REFRESHES_REFUSED = Counter(
    "varulv_token_refreshes_refused",
    "Bot token refreshes Slack refused for good (the workspace must reinstall Varulv), by "
    "Slack's error.",
    ["error"],
)
GAMES_GIVEN_UP = Counter(
    "varulv_games_given_up",
    "Games ended because their deadline's step kept failing (a fault), by the phase they were in.",
    ["phase"],
)
# The rare faults' counters are there at 0 from the start: Prometheus's increase() sees
# nothing of a series whose first sample is already 1, so a rule watching one would miss the
# first of them in every process.
for _phase in TIMED_PHASES:
    GAMES_GIVEN_UP.labels(_phase.value)
TOKEN_REFRESHES_REFUSED.labels("invalid_refresh_token")

OPEN_PHASES = ("lobby", "night", "day", "vote")
DATABASE_FIGURES = select(
    func.now(),
    select(func.count()).where(OutboxEntry.done_at.is_(None)).scalar_subquery(),
    select(func.min(OutboxEntry.due_at)).where(OutboxEntry.done_at.is_(None)).scalar_subquery(),
    select(func.count()).select_from(ReinstallNeeded).scalar_subquery(),
    *(select(func.count()).where(Game.phase == phase).scalar_subquery() for phase in OPEN_PHASES),
)
"""Now, the outbox's depth and oldest due time, the workspaces that must reinstall Varulv, and
the open games in each phase: one round trip (the outbox's parts on its index of undelivered
entries; the phases count the open games, a few rows each; the reinstalls, a row a workspace
that needs one)."""


@contextmanager
def stepping(kind: str) -> Iterator[Callable[[int], None]]:
    """Times one step's transaction; a batch says how many events it stepped (none: no
    sample, so an empty sweep for deadlines is not counted as a step; a batch of any size is
    one step, and the deadlines it ended are counted by :func:`deadlines_late`)."""
    count = [1]
    started = time.perf_counter()
    yield lambda stepped: count.__setitem__(0, stepped)
    if count[0]:
        seconds = time.perf_counter() - started
        STEP_SECONDS.labels(kind).observe(seconds)
        STEP_LATENCY.observe(seconds)


def deadlines_late(deadlines: list[datetime | None], at: datetime) -> None:
    for deadline in deadlines:
        if deadline is not None:
            DEADLINE_LATENESS.observe(max(0.0, (at - deadline).total_seconds()))


def delivered(method: str, due_at: datetime, at: datetime) -> None:
    seconds = max(0.0, (at - due_at).total_seconds())
    DELIVERY_SECONDS.labels(method).observe(seconds)
    DELIVERY_LATENCY.observe(seconds)


def slack_refused(method: str, error: str) -> None:
    SLACK_ERRORS.labels(method, error).inc()


def delivery_read(how: str) -> None:
    DELIVERY_READS.labels(how).inc()


def token_refresh_refused(error: str) -> None:
    TOKEN_REFRESHES_REFUSED.labels(error).inc()


def game_given_up(phase: str) -> None:
    GAMES_GIVEN_UP.labels(phase).inc()


def waited_for_turn(method: str, seconds: float) -> None:
    if seconds > 0:
        RATE_LIMIT_WAITS.labels(method).inc(seconds)


class DatabaseFigures(Collector):
    """Whether the database answers, and (when it does) the outbox's depth, the age of its
    oldest undelivered effect and the open games by phase, read at scrape time: a failed read
    leaves the figures out and says the database is unreachable, so an alert still fires."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            with self.engine.connect() as connection:
                connection.execution_options(**AUTOCOMMIT)
                row = connection.execute(DATABASE_FIGURES).one()
                now, depth, oldest, reinstalls, *open_games = row
        except Exception:
            yield _database_up(False)
            return
        yield _database_up(True)
        yield GaugeMetricFamily(
            "varulv_outbox_undelivered", "Effects committed and not yet taken by Slack.", depth
        )
        age = 0.0 if oldest is None else max(0.0, (now - oldest).total_seconds())
        yield GaugeMetricFamily(
            "varulv_outbox_oldest_undelivered_seconds",
            "How long the oldest undelivered effect has been due (0 when none is).",
            age,
        )
        yield GaugeMetricFamily(
            "varulv_workspaces_needing_reinstall",
            "Workspaces whose bot token Slack would not refresh: Varulv must be reinstalled there.",
            reinstalls,
        )
        games = GaugeMetricFamily("varulv_games", "Open games, by phase.", labels=["phase"])
        for phase, count in zip(OPEN_PHASES, open_games, strict=True):
            games.add_metric([phase], count)
        yield games


def _database_up(answered: bool) -> GaugeMetricFamily:
    return GaugeMetricFamily(
        "varulv_database_up",
        "1 when this scrape's read of the database's figures succeeded, 0 when it failed.",
        1.0 if answered else 0.0,
    )


def exposition(engine: Engine, workers: str | None = None) -> Callable[[], tuple[bytes, str]]:
    """What a scrape answers: this process's samples (or, for the supervisor of several
    workers, every worker's in the folder ``workers`` they write to), then the database's
    figures (two registries, one text: their names differ), read in one statement outside any
    transaction (no BEGIN or ROLLBACK around it). A process that serves alone shows its own
    samples even where ``PROMETHEUS_MULTIPROC_DIR`` is set, never the other files in that
    folder (prometheus_client does carry on from the file of this process's own id, which an
    earlier run with the same id, a container's first process, left)."""
    samples = REGISTRY
    if workers is not None:
        samples = CollectorRegistry()
        multiprocess.MultiProcessCollector(samples, path=workers)  # type: ignore[no-untyped-call]
    database = CollectorRegistry()
    database.register(DatabaseFigures(engine.execution_options(isolation_level="AUTOCOMMIT")))

    def scrape() -> tuple[bytes, str]:
        return generate_latest(samples) + generate_latest(database), CONTENT_TYPE_LATEST

    return scrape


def metrics_server(
    engine: Engine, host: str, port: int, workers: str | None = None
) -> ServerThread:
    """``GET /metrics`` on ``host:port`` alone (an ``OSError`` if it cannot listen there),
    on threads of its own: never on Slack's port, where anyone could read it. Started by the
    process that listens for Slack, so with several workers their supervisor answers for all
    of them (the samples they write to the folder ``workers``, and the database's figures
    through ``engine``)."""
    scrape = exposition(engine, workers)

    def answer(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        if environ.get("PATH_INFO") != "/metrics":
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found\n"]
        body, content_type = scrape()
        start_response("200 OK", [("Content-Type", content_type)])
        return [body]

    server = wsgi_server(host, port, answer)
    return ServerThread(server.serve_forever, server.shutdown, "varulv-metrics")


def prepare_multiprocess() -> str:
    """A fresh, empty folder for the workers' samples, named in the environment the workers
    inherit (unless the platform named one: then it is emptied, as prometheus_client asks
    before the workers start)."""
    folder = metrics_folder_from_env()
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder, exist_ok=True)
    else:
        folder = tempfile.mkdtemp(prefix="varulv-metrics-")
        hand_down_metrics_folder(folder)
    return folder
