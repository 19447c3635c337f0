"""What a scrape of ``/metrics`` costs, and whether scraping changes the 1,000 deadlines' figures.

    python -m benchmarks.scrape                  # what BENCHMARKS.md reports
    python -m benchmarks.scrape --rounds 1 --deadlines 200   # a quick look
    python -m benchmarks.scrape --rounds 0 --app-root /tmp/old   # another tree's scrape, by turns

It starts PostgreSQL (embedded, or ``DATABASE_URL``), the local stand-in for Slack and the app
(``varulv serve``, one process). First, with ``--deadlines`` games open at night (so the
database's figures have rows to count) and one whole game played (so every kind of step and
call has its series), the app's CPU over ``--scrapes`` scrapes one after
another, less its CPU over as long with none, by turns with as many requests of ``/healthz``
(the floor: the same server answering a request that does nothing). Then the 1,000 deadlines of
``benchmarks.outbox --only deadlines``, by turns without scraping and with ``/metrics`` scraped
every ``--every`` seconds, ``--rounds`` times each. With ``--app-root``, that tree's app (another
version's; the option may be given again) is started beside this one's and its scrapes are
measured by turns with this one's.
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests
from sqlalchemy import Engine

from benchmarks.opened import close_games, open_games
from benchmarks.outbox import deadlines_together
from benchmarks.processes import (
    ROOT,
    Slack,
    add_slack_ms,
    bench,
    load_average,
    start_server,
    warm_up,
)
from benchmarks.storms import Storms

TURNS = 3


def scrape_cost(
    fake: Slack,
    db: Engine,
    url: str,
    pool: ProcessPoolExecutor,
    games: int,
    scrapes: int,
    roots: list[Path],
) -> list[dict[str, float]]:
    """For the app of each tree in ``roots``, by turns: CPU milliseconds of the app per request
    of ``/metrics`` and, as the floor, of ``/healthz`` (the same server answering a request that
    does nothing); the scrape's median wall time in ms; and the size of one answer in bytes."""
    prefix = "CS"
    open_games(fake, db, games, prefix, [datetime.now(UTC) + timedelta(hours=1)] * games)
    apps = []
    try:
        for root in roots:
            apps.append(start_server("app", "slackapp.cli", fake, url, 1, root))
        warm_up(fake, pool, apps)
        session = requests.Session()
        sizes, idle_rates = [], []
        for number, app in enumerate(apps):
            # One whole game first, so a scrape shows a series for every kind of step and call.
            Storms(fake, db, pool, app, None, 1, run=f"SCRAPE{number}").play()
            sizes.append(len(session.get(app.metrics_url, timeout=30).content))
        time.sleep(2)  # the warm-up's replies out of the way
        for app in apps:
            idle_began, idle_cpu = time.monotonic(), app.cpu_seconds()
            time.sleep(5)
            idle_rates.append((app.cpu_seconds() - idle_cpu) / (time.monotonic() - idle_began))
        cpu: list[dict[str, list[float]]] = [{"/healthz": [], "/metrics": []} for _ in apps]
        walls: list[list[float]] = [[] for _ in apps]
        for _ in range(TURNS):
            for app, spent_on, idle_rate, wall in zip(apps, cpu, idle_rates, walls, strict=True):
                for path, spent in spent_on.items():
                    began, before = time.monotonic(), app.cpu_seconds()
                    for _ in range(scrapes):
                        started = time.monotonic()
                        where = app.metrics_url if path == "/metrics" else f"{app.url}{path}"
                        session.get(where, timeout=30).raise_for_status()
                        if path == "/metrics":
                            wall.append(time.monotonic() - started)
                    used = app.cpu_seconds() - before - idle_rate * (time.monotonic() - began)
                    spent.append(used / scrapes * 1000)
        return [
            {
                "metrics_ms": statistics.median(spent_on["/metrics"]),
                "healthz_ms": statistics.median(spent_on["/healthz"]),
                "wall_ms": statistics.median(wall) * 1000,
                "bytes": size,
            }
            for spent_on, wall, size in zip(cpu, walls, sizes, strict=True)
        ]
    finally:
        for app in apps:
            app.stop()
        close_games(db, prefix)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deadlines", type=int, default=1000)
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--every", type=float, default=1.0, help="seconds between scrapes")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--app-root",
        type=Path,
        action="append",
        default=[],
        help="another tree (another version's), measured by turns too; may be given again",
    )
    add_slack_ms(parser)
    args = parser.parse_args(argv)
    with bench(args.slack_ms) as ran:
        url, db, fake, pool = ran.url, ran.db, ran.fake, ran.pool
        roots = [ROOT, *args.app_root]
        costs = scrape_cost(fake, db, url, pool, args.deadlines, args.scrapes, roots)
        for root, cost in zip(roots, costs, strict=True):
            print(
                f"{root}: one scrape with {args.deadlines} games open: {cost['metrics_ms']:.2f} ms"
                f" of the app's CPU against {cost['healthz_ms']:.2f} ms for /healthz (the floor: "
                f"the same server, a request that does nothing; median of {TURNS} turns of "
                f"{args.scrapes}), {cost['metrics_ms'] - cost['healthz_ms']:.2f} ms above it; "
                f"{cost['wall_ms']:.2f} ms to answer, {cost['bytes']:.0f} bytes "
                f"(load {load_average():.1f})",
                flush=True,
            )
        for round_number in range(args.rounds):
            for every in (None, args.every):
                result = deadlines_together(fake, db, url, pool, args.deadlines, every)
                scraped = (
                    f"scraped every {every:g} s ({result['scrapes']:.0f} scrapes, p99 "
                    f"{result['scrape_p99_ms']:.1f} ms)"
                    if every
                    else "not scraped"
                )
                print(
                    f"round {round_number + 1}, {scraped}: every day board posted "
                    f"{result['cleared_s']:.1f} s after the deadline, all committed after "
                    f"{result['committed_s']:.1f} s, the app's CPU {result['background_cpu_s']:.1f}"
                    f" s (load {load_average():.1f})",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
