"""Whether a worker's memory levels off: its resident set after 100 whole games and after 1,000.

    python -m benchmarks.memory                      # what BENCHMARKS.md reports
    python -m benchmarks.memory --games 200 --every 50   # a quick look

It starts PostgreSQL (embedded, or ``DATABASE_URL``), the local stand-in for Slack and the app
(``varulv serve``, one process that answers, steps and delivers), then plays whole games,
``--at-once`` at a time, each with three people and two bots from ``/varulv`` to the reveal
(the load benchmark's script). After every ``--every`` games, once the app has made no Web API
call for a moment, it reads the process's resident set (``VmRSS``) and prints it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.processes import add_slack_ms, bench, load_average, start_server, warm_up
from benchmarks.storms import Storms


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="whole games in all")
    parser.add_argument("--every", type=int, default=100, help="games between two readings")
    parser.add_argument("--at-once", type=int, default=50, help="games played together")
    add_slack_ms(parser)
    args = parser.parse_args(argv)
    if args.every % args.at_once or args.games % args.every:
        parser.error("--every must be a multiple of --at-once, and --games of --every")
    with bench(args.slack_ms) as ran:
        url, db, fake, pool = ran.url, ran.db, ran.fake, ran.pool
        app = start_server("app", "slackapp.cli", fake, url, 1)
        try:
            warm_up(fake, pool, [app])
            readings = [(0, resident_mb(app.process.pid))]
            print(f"games      0: {readings[0][1]:6.1f} MB (load {load_average():.1f})", flush=True)
            for batch in range(args.games // args.at_once):
                storms = Storms(fake, db, pool, app, None, args.at_once, run=f"M{batch:03d}")
                storms.play()
                played = (batch + 1) * args.at_once
                if played % args.every == 0:
                    storms.settle(quiet=1.0)
                    readings.append((played, resident_mb(app.process.pid)))
                    print(
                        f"games {played:6d}: {readings[-1][1]:6.1f} MB (load {load_average():.1f})",
                        flush=True,
                    )
            errors = app.errors_logged()
        finally:
            app.stop()
    first = next(mb for games, mb in readings if games >= args.every)
    last = readings[-1][1]
    per_game_kb = (last - first) * 1024 / max(1, readings[-1][0] - args.every)
    print(
        f"\nresident set after {args.every} games {first:.1f} MB, after {readings[-1][0]} "
        f"{last:.1f} MB: {last / first:.3f}x, {per_game_kb:.2f} KB a game; errors logged {errors}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
