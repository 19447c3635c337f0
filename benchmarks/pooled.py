"""Many ``varulv serve`` processes on one PostgreSQL: directly, and behind PgBouncer in
transaction mode (Debian's ``pgbouncer``, prepared statements off).

    python -m benchmarks.pooled                          # 10 processes, 40 /varulv each
    python -m benchmarks.pooled --processes 4 --commands 20

Directly, each process may keep only its share of ``max_connections`` (``--direct-connections``,
9 each for ten processes on PostgreSQL's default 100: ``varulv serve`` refuses to start with
more than the server allows, and warns when fewer are free than it may open). Behind
PgBouncer, each keeps its usual 30 client connections and PostgreSQL sees only the pooler's
``--pool``. Printed for each: the connections PostgreSQL holds for the app's database at the
busiest moment, ``/varulv`` from the request to its lobby at the stand-in (p50/p99/max over
every process), and PostgreSQL's CPU a ``/varulv``.
"""

from __future__ import annotations

import argparse
import statistics
import threading
from dataclasses import dataclass

from sqlalchemy import Engine, create_engine, make_url, text

from benchmarks.outbox import new_commands, opened_at
from benchmarks.processes import (
    Bench,
    Server,
    bench,
    load_average,
    postmaster_of,
    start_server,
    warm_up,
)
from benchmarks.stats import percentile
from slackapp.db.engine import sqlalchemy_url
from tests.databases import migrated_database
from tests.pgbouncer import pgbouncer, pgbouncer_program, pooled_url


@dataclass
class Measured:
    label: str
    to_lobby: list[float]
    postgres_cpu_ms: float
    backends: int


def busiest(db: Engine, name: str, stop: threading.Event, seen: list[int]) -> None:
    """The most connections PostgreSQL held for the database, polled until ``stop``."""
    with db.connect() as connection:
        while not stop.wait(0.05):
            count = connection.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = :name AND pid <> pg_backend_pid()"
                ),
                {"name": name},
            )
            seen.append(int(count or 0))


def measure(
    label: str, ran: Bench, servers: list[Server], db: Engine, name: str, commands: int
) -> Measured:
    """``commands`` /varulv at each server by turns (each server's at once), every lobby
    waited for."""
    postmaster = postmaster_of(db)
    stop, seen = threading.Event(), [0]
    watcher = threading.Thread(target=busiest, args=(db, name, stop, seen), daemon=True)
    watcher.start()
    to_lobby: list[float] = []
    cpu = 0.0
    try:
        for server in servers:
            channels, prepared = new_commands(ran.fake, commands)
            opened = opened_at(ran.fake, ran.pool, server, postmaster, channels, prepared)
            to_lobby += opened.to_screen
            cpu += opened.cpu["postgres"]
    finally:
        stop.set()
        watcher.join()
    return Measured(label, to_lobby, cpu / (commands * len(servers)) * 1000, max(seen))


def report(measured: Measured) -> None:
    lobby = measured.to_lobby
    print(
        f"{measured.label}: /varulv to its lobby p50 {statistics.median(lobby) * 1000:.0f} ms, "
        f"p99 {percentile(lobby, 99) * 1000:.0f} ms, max {max(lobby) * 1000:.0f} ms "
        f"({len(lobby)}); PostgreSQL's CPU about {measured.postgres_cpu_ms:.2f} ms a /varulv; "
        f"at most {measured.backends} connections to PostgreSQL; load {load_average():.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--commands", type=int, default=40, help="/varulv at each process")
    parser.add_argument("--direct-connections", type=int, default=9)
    parser.add_argument("--pool", type=int, default=20, help="PgBouncer's server connections")
    args = parser.parse_args(argv)
    program = pgbouncer_program()
    if program is None:
        print("no pgbouncer found: install Debian's pgbouncer package")
        return 2
    with bench() as ran:
        for label in ("direct", "pgbouncer"):
            url = migrated_database(ran.url, f"pooled_{label}")
            name = str(make_url(sqlalchemy_url(url)).database)
            db = create_engine(sqlalchemy_url(url))
            with pgbouncer(program, ran.url, args.pool) as port:
                if label == "direct":
                    where = url
                    env = {"VARULV_DATABASE_CONNECTIONS": str(args.direct_connections)}
                else:
                    where = pooled_url(url, port)
                    env = {"VARULV_DATABASE_CONNECTIONS": "30", "VARULV_PREPARED_STATEMENTS": "off"}
                servers = []
                try:
                    for number in range(args.processes):
                        servers.append(
                            start_server(
                                f"{label}{number}", "slackapp.cli", ran.fake, where, 1, settings=env
                            )
                        )
                    warm_up(ran.fake, ran.pool, servers)
                    report(measure(label, ran, servers, db, name, args.commands))
                finally:
                    for server in servers:
                        server.stop()
                    db.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
