"""Acknowledgements with 1,000 idle connections held open on the app, against none, in one run.

    python -m benchmarks.idle                    # what BENCHMARKS.md reports
    python -m benchmarks.idle --idle 200 --requests 100    # a quick look

It starts PostgreSQL (embedded, or ``DATABASE_URL``), the local stand-in for Slack and the app
(``varulv serve``, one worker), then sends rounds of signed ``/varulv help`` and ``/varulv
score`` commands (at most ten in flight, each on a fresh connection), alternately with and
without ``--idle`` half-open connections held by a process of their own: half stop inside the
request's head, half send a body shorter than their ``Content-Length``. The app drops each one
when ``VARULV_REQUEST_SECONDS`` have passed; the holder opens it again at once, as an attacker
would. Every loop is bounded: the holder stops by itself after ``--hold-seconds``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import resource
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.sharedctypes import Synchronized
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks.fire import Prepared, Timed, fire
from benchmarks.processes import Server, Slack, database, start_server
from benchmarks.stats import percentile

IN_FLIGHT = 10
CHANNEL = "C0IDLE"


def half_request(index: int) -> bytes:
    head = b"POST /slack/events HTTP/1.1\r\nHost: varulv\r\n"
    if index % 2:
        head += b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 4000\r\n\r\n"
        head += b"payload=%7B"
    return head


def hold(*args: Any) -> None:
    """In a process of its own: :func:`_hold`."""
    asyncio.run(_hold(*args))


async def _hold(
    url: str,
    count: int,
    seconds: float,
    stop: Event,
    open_now: Synchronized[int],
    opened: Synchronized[int],
) -> None:
    """Keep ``count`` half-open connections on ``url`` until ``stop`` (or ``seconds``)."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    end = time.monotonic() + seconds

    async def one(index: int) -> None:
        while time.monotonic() < end:
            try:
                reader, writer = await asyncio.open_connection(host, port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            writer.write(half_request(index))
            with open_now.get_lock():
                open_now.value += 1
                opened.value += 1
            with contextlib.suppress(OSError):
                await reader.read()  # until the server drops it
            with open_now.get_lock():
                open_now.value -= 1
            writer.close()

    tasks = [asyncio.create_task(one(index)) for index in range(count)]
    while time.monotonic() < end and not stop.is_set():
        await asyncio.sleep(0.1)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def commands(fake: Slack, count: int) -> list[Prepared]:
    with fake.preparing("command") as prepared:
        for index in range(count):
            words = "help" if index % 2 else "score"
            fake.slash_command(f"U{index % 50:03d}IDLE", text=words, channel_id=CHANNEL)
    return prepared


def sockets_of(server: Server) -> int:
    """Sockets open in the app's worker processes."""
    total = 0
    for pid in server.processes()[1:]:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    total += fd.readlink().name.startswith("socket:")
    return total


@contextlib.contextmanager
def idle_connections(url: str, count: int, seconds: float, server: Server) -> Iterator[list[int]]:
    """Inside the block, ``count`` half-open connections are held. Yields [sockets in the app's
    worker once they are, connections opened], the second filled in when the block ends."""
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    open_now = context.Value("i", 0)
    opened = context.Value("i", 0)
    holder = context.Process(target=hold, args=(url, count, seconds, stop, open_now, opened))
    holder.start()
    deadline = time.monotonic() + 30
    while open_now.value < count and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the worker has accepted them all
    state = [sockets_of(server), 0]
    try:
        yield state
    finally:
        state[1] = opened.value
        stop.set()
        holder.join(30)
        if holder.is_alive():
            holder.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=300, help="per round")
    parser.add_argument("--rounds", type=int, default=3, help="with, and as many without")
    parser.add_argument("--hold-seconds", type=float, default=300)
    options = parser.parse_args(argv)

    # Each idle connection is one file in the holder and one in the app (which inherits this).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = options.idle * 2 + 1000
    if soft < wanted and (hard == resource.RLIM_INFINITY or hard >= wanted):
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))

    latencies: dict[bool, list[float]] = {False: [], True: []}
    failures: dict[bool, int] = {False: 0, True: 0}
    held: list[list[int]] = []
    with (
        database() as url,
        Slack() as fake,
        ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool,
    ):
        server = start_server("app", "slackapp.cli", fake, url, workers=1)
        try:
            fire(server.events_url, commands(fake, 10), 1)  # the first request checks the token
            for _ in range(options.rounds):
                for with_idle in (False, True):
                    prepared = commands(fake, options.requests)
                    if with_idle:
                        with idle_connections(
                            server.url, options.idle, options.hold_seconds, server
                        ) as state:
                            timed = pool.submit(
                                fire, server.events_url, prepared, IN_FLIGHT
                            ).result()
                            held.append(state)
                    else:
                        timed = pool.submit(fire, server.events_url, prepared, IN_FLIGHT).result()
                    record(timed, latencies[with_idle], failures, with_idle)
            errors = server.errors_logged()
        finally:
            server.stop()
    report(options, latencies, failures, held, errors)
    return 0


def record(timed: list[Timed], into: list[float], failures: dict[bool, int], key: bool) -> None:
    for each in timed:
        if each.status == 200:
            into.append(each.seconds * 1000)
        else:
            failures[key] += 1


def report(
    options: argparse.Namespace,
    latencies: dict[bool, list[float]],
    failures: dict[bool, int],
    held: list[list[int]],
    errors: int,
) -> None:
    print("| idle connections | n | not 200 | p50 ms | p99 ms | p99 ratio |")
    print("|---|---|---|---|---|---|")
    base_p99 = percentile(latencies[False], 0.99)
    for with_idle in (False, True):
        values = latencies[with_idle]
        p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
        label = str(options.idle) if with_idle else "0"
        ratio = p99 / base_p99
        row = (label, len(values), failures[with_idle], f"{p50:.1f}", f"{p99:.1f}", f"{ratio:.2f}x")
        print("| " + " | ".join(str(cell) for cell in row) + " |")
    sockets = ", ".join(str(count) for count, _ in held)
    print(f"\nsockets open in the app's worker during each round with them: {sockets}")
    print(
        f"half-open connections opened in all (re-opened after the app dropped them): "
        f"{sum(opened for _, opened in held)}"
    )
    print(f"ERROR lines in the app's log: {errors}")


if __name__ == "__main__":
    raise SystemExit(main())
