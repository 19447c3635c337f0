"""How many Web API calls a second the stand-in for Slack answers, by how many callers at once.

    python -m benchmarks.standin                # the stand-in as it is
    python -m benchmarks.standin --backlog 5    # with Python's default listen backlog

The callers run in a process of their own, each call on a fresh connection (as slack_sdk's
client makes them), all asking ``users.info``.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context

from slack_sdk import WebClient

from benchmarks.processes import TOKEN, Slack, add_slack_ms
from benchmarks.stats import percentile
from slackapp.fakeslack import server

CALLS = 300
PEOPLE = 50


def hammer(api_url: str, callers: int) -> str:
    def call(number: int) -> float:
        client = WebClient(token=TOKEN, base_url=api_url)
        started = time.perf_counter()
        client.users_info(user=f"UQ{number % PEOPLE:03d}")
        return time.perf_counter() - started

    with ThreadPoolExecutor(callers) as pool:
        started = time.perf_counter()
        seconds = list(pool.map(call, range(CALLS)))
        elapsed = time.perf_counter() - started
    return (
        f"{callers:2d} callers: {CALLS / elapsed:5.0f} calls a second, p50 "
        f"{percentile(seconds, 0.5) * 1000:.1f} ms, p99 {percentile(seconds, 0.99) * 1000:.1f} ms"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backlog", type=int, help="the listen backlog to serve with instead")
    add_slack_ms(parser)
    args = parser.parse_args(argv)
    if args.backlog is not None:
        server.SlackServer.request_queue_size = args.backlog
    with (
        Slack(slack_ms=args.slack_ms) as fake,
        ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool,
    ):
        for number in range(PEOPLE):
            fake.add_user(f"UQ{number:03d}", f"uq{number:03d}")
        for callers in (1, 4, 8, 16):
            print(pool.submit(hammer, fake.api_url, callers).result(), flush=True)


if __name__ == "__main__":
    main()
