"""Load benchmark: Varulv under many concurrent games, against the bare Bolt floor, in one run.

    python -m benchmarks.load                 # the full run that BENCHMARKS.md reports
    python -m benchmarks.load --games 20 --open-games 200 --processes 1   # a quick look

It starts PostgreSQL (embedded, or ``DATABASE_URL``), a local stand-in for Slack's Web API, the
app (``varulv serve``: one process, then two on the same database) and the floor (a Bolt app
that only acknowledges, ``benchmarks/floor.py``, with the same workers and threads). For each G
it plays G games at once, each with three scripted people and two bots, phase by phase: every
phase is one storm of signed requests, at most 50 in flight, fired at the app and then, once the
app has done the work, the very same requests at the floor. It prints:

- acknowledgement latency p50/p95/p99 of slash commands and clicks, app and floor, and the ratio;
- Slack Web API calls per game, by G (they must not grow with G);
- SQL statements per interaction with 50, 200 and 1,000 other games open (must not grow);
- deadline lateness p50/p99 with 1,000 open games whose deadlines fall in one window;
- peak memory (VmHWM) of each app process.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path

from sqlalchemy import create_engine

from benchmarks.fire import fire
from benchmarks.lateness import deadline_lateness
from benchmarks.opened import close_games, open_games
from benchmarks.processes import (
    ROOT,
    Slack,
    add_slack_ms,
    database,
)
from benchmarks.report import report
from benchmarks.statements import statements_per_interaction
from benchmarks.storms import run_games
from slackapp.db.engine import sqlalchemy_url
from slackapp.db.migrate import upgrade


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--open-games", type=int, default=1000)
    parser.add_argument("--window", type=float, default=60.0, help="seconds the deadlines span")
    parser.add_argument(
        "--samples",
        type=int,
        default=3600,
        help="play G games again until about this many requests are timed (p99 needs many)",
    )
    parser.add_argument("--json", help="also write the raw numbers here")
    parser.add_argument("--detail", action="store_true", help="percentiles of every storm")
    parser.add_argument("--skip-deadlines", action="store_true", help="no lateness run")
    parser.add_argument(
        "--app-root",
        help="serve the app from another checkout (an earlier commit, for a before/after); "
        "only the storms are measured then, since the rest runs this checkout's code",
    )
    add_slack_ms(parser)
    args = parser.parse_args(argv)

    random.seed(7)
    with (
        database() as url,
        Slack(slack_ms=args.slack_ms) as fake,
        ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool,
    ):
        db = create_engine(sqlalchemy_url(url))
        if args.app_root is None:
            upgrade(db)  # else the other checkout's app brings the schema to its own version
        pool.submit(fire, "http://127.0.0.1:9/", [], 1).result()  # start the client process
        runs = []
        for workers in args.processes:
            for games in args.games:
                print(f"… {games} games, {workers} process(es)", file=sys.stderr, flush=True)
                repeat = max(1, args.samples // (games * 12))  # about 12 requests per game
                root = Path(args.app_root) if args.app_root else ROOT
                runs.append(run_games(fake, db, url, pool, games, workers, repeat, root))
        statements: dict[int, dict[str, str]] = {}
        opened = 0
        for target in [] if args.app_root else sorted({50, 200, args.open_games}):
            far = [datetime.now(UTC) + timedelta(hours=1)] * (target - opened)
            open_games(fake, db, target - opened, f"CS{target}", far)
            opened = target
            statements[target] = statements_per_interaction(fake, url, target)
        for target in statements:
            close_games(db, f"CS{target}")
        lateness = []
        for workers in [] if args.skip_deadlines or args.app_root else args.processes:
            print(f"… deadlines of {args.open_games} games, {workers} process(es)", file=sys.stderr)
            lateness.append(deadline_lateness(fake, db, url, args.open_games, workers, args.window))
        db.dispose()
    print(report(runs, statements, lateness, args.detail))
    if args.json:
        raw = {
            "runs": [
                {
                    "games": r.games,
                    "processes": r.processes,
                    "app": r.app.samples,
                    "floor": r.floor.samples,
                    "calls_by_method": r.calls_by_method,
                    "peak_mb": r.peak_mb,
                }
                for r in runs
            ],
            "statements": statements,
            "lateness": [{"processes": x.processes, "late": x.late} for x in lateness],
        }
        Path(args.json).write_text(json.dumps(raw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
