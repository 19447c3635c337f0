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

The app runs with a ``gc.callbacks`` hook in each of its processes that logs every pause of
Python's cycle collector, so that the report says how much of each kind of round the collector
took, and how many of the slowest acknowledgements waited for one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import multiprocessing
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.sharedctypes import Synchronized
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks.fire import Prepared, Timed, fire
from benchmarks.processes import Server, Slack, add_slack_ms, database, start_server
from benchmarks.stats import percentile

IN_FLIGHT = 10
CHANNEL = "C0IDLE"
GC_LOG = "VARULV_IDLE_GC_LOG"
"""Set for the app's processes: where they log the collector's pauses (one file a process)."""


def serve_logging_gc(log_prefix: str) -> int:
    """``varulv serve``, each process appending ``wall-clock end, generation, milliseconds,
    CPU milliseconds`` to ``log_prefix.PID`` for every collection."""
    began = [0.0, 0.0]
    files: dict[int, Any] = {}

    def pause(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[:] = time.perf_counter(), time.thread_time()
            return
        took = (time.perf_counter() - began[0]) * 1000
        cpu = (time.thread_time() - began[1]) * 1000  # the pass's own work, whatever the load
        pid = os.getpid()
        if pid not in files:
            files[pid] = open(f"{log_prefix}.{pid}", "a", buffering=1)  # noqa: SIM115
        files[pid].write(f"{time.time():.6f} {info['generation']} {took:.3f} {cpu:.3f}\n")

    gc.callbacks.append(pause)
    from slackapp.cli import main as varulv

    return varulv(["serve"])


Pause = tuple[float, int, float, float]
"""A collection: wall-clock end, generation, milliseconds, CPU milliseconds."""


def pauses_logged(log_prefix: str, pids: list[int]) -> list[Pause]:
    found: list[Pause] = []
    for pid in pids:
        path = Path(f"{log_prefix}.{pid}")
        for line in path.read_text().splitlines() if path.exists() else []:
            end, generation, took, cpu = line.split()
            found.append((float(end), int(generation), float(took), float(cpu)))
    return sorted(found)


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
    """Sockets open in the app's processes."""
    total = 0
    for pid in server.processes():
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


Key = tuple[str, int, bool]
"""A kind of round: the server, the repetition, with idle connections or without."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=200, help="per round")
    parser.add_argument("--rounds", type=int, default=5, help="pairs of rounds per repetition")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--hold-seconds", type=float, default=300)
    add_slack_ms(parser)
    options = parser.parse_args(argv)
    kinds = ["app"]

    # Each idle connection is one file in the holder and one in the app (which inherits this).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = options.idle * 2 + 1000
    if soft < wanted and (hard == resource.RLIM_INFINITY or hard >= wanted):
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))

    acks: dict[Key, list[Timed]] = {}
    round_p99s: dict[Key, list[float]] = {}
    windows: dict[Key, list[tuple[float, float]]] = {}
    held: list[list[int]] = []
    pauses: dict[str, list[Pause]] = {}
    errors: dict[str, int] = {}
    gc_logs = Path(tempfile.mkdtemp(prefix="varulv-idle-gc-"))
    with (
        database() as url,
        Slack(slack_ms=options.slack_ms) as fake,
        ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool,
    ):
        servers: dict[str, Server] = {}
        try:
            for kind in kinds:
                os.environ[GC_LOG] = str(gc_logs / kind)  # the app's processes inherit these
                servers[kind] = start_server(kind, "benchmarks.idle", fake, url, workers=1)
                fire(servers[kind].events_url, commands(fake, 10), 1)  # checks the token
            for repetition in range(options.repetitions):
                for _ in range(options.rounds):
                    for kind, server in servers.items():
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
                                timed = pool.submit(
                                    fire, server.events_url, prepared, IN_FLIGHT
                                ).result()
                            key = (kind, repetition, with_idle)
                            acks.setdefault(key, []).extend(timed)
                            round_p99s.setdefault(key, []).append(
                                percentile(answered_ms(timed), 0.99)
                            )
                            windows.setdefault(key, []).append(
                                (
                                    min(t.sent_at for t in timed),
                                    max(t.sent_at + t.seconds for t in timed),
                                )
                            )
            for kind, server in servers.items():
                errors[kind] = server.errors_logged()
                pauses[kind] = pauses_logged(str(gc_logs / kind), server.processes())
        finally:
            for server in servers.values():
                server.stop()
            for path in gc_logs.iterdir():
                path.unlink()
            gc_logs.rmdir()
    report(options, kinds, acks, round_p99s, held, errors)
    report_gc(options, kinds, acks, windows, pauses)
    return 0


def answered_ms(timed: list[Timed]) -> list[float]:
    return [each.seconds * 1000 for each in timed if each.status == 200]


def report(
    options: argparse.Namespace,
    kinds: list[str],
    acks: dict[Key, list[Timed]],
    round_p99s: dict[Key, list[float]],
    held: list[list[int]],
    errors: dict[str, int],
) -> None:
    """Each repetition's acknowledgements pooled, and the median of its pairs' p99 ratios (a
    pair is a round without idle connections and the round with them that follows it), which
    one round slowed by the machine's other work moves less."""
    print(
        f"| full passes | repetition | n | not 200 | p50 ms, 0 / {options.idle} idle "
        f"| p99 ms, 0 / {options.idle} idle | p99 ratio | median of the pairs' p99 ratios |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for kind in kinds:
        for repetition in [*range(options.repetitions), None]:
            sides = [
                [
                    each
                    for (k, r, idle), timed in acks.items()
                    if k == kind and idle == with_idle and repetition in (None, r)
                    for each in timed
                ]
                for with_idle in (False, True)
            ]
            values = [answered_ms(side) for side in sides]
            p50s = [percentile(side, 0.5) for side in values]
            p99s = [percentile(side, 0.99) for side in values]
            failed = sum(len(side) - len(ms) for side, ms in zip(sides, values, strict=True))
            row = (
                kind,
                "all" if repetition is None else repetition + 1,
                "/".join(str(len(ms)) for ms in values),
                failed,
                " / ".join(f"{p:.1f}" for p in p50s),
                " / ".join(f"{p:.1f}" for p in p99s),
                f"{p99s[1] / p99s[0]:.2f}x",
                f"**{statistics.median(pair_ratios(round_p99s, kind, repetition)):.2f}x**",
            )
            print("| " + " | ".join(str(cell) for cell in row) + " |")
    sockets = sorted(count for count, _ in held)
    print(
        f"\nsockets open in the app's worker during the rounds with idle connections: "
        f"{sockets[0]} to {sockets[-1]}; half-open connections opened in all (again after the "
        f"app dropped them): {sum(opened for _, opened in held)}"
    )
    print(f"ERROR lines in the apps' logs: {errors}")


def pair_ratios(
    round_p99s: dict[Key, list[float]], kind: str, repetition: int | None
) -> list[float]:
    return [
        with_idle / without
        for (k, r, idle), p99s in round_p99s.items()
        if k == kind and not idle and repetition in (None, r)
        for without, with_idle in zip(p99s, round_p99s[(k, r, True)], strict=True)
    ]


def report_gc(
    options: argparse.Namespace,
    kinds: list[str],
    acks: dict[Key, list[Timed]],
    windows: dict[Key, list[tuple[float, float]]],
    pauses: dict[str, list[Pause]],
) -> None:
    """The collector's pauses in the app's worker within each kind of round, and how many of
    the slowest acknowledgements (the slowest 1 %) overlapped a pause of 5 ms or more."""
    print(
        "\n| full passes | idle connections | rounds' s | collections gen 0/1/2 | paused ms "
        "| longest ms gen 0/1/2 | slowest 1 % overlapping a pause ≥ 5 ms |"
    )
    print("|---|---|---|---|---|---|---|")
    for kind in kinds:
        for with_idle in (False, True):
            spans = [
                w
                for (k, _, idle), ws in windows.items()
                if (k, idle) == (kind, with_idle)
                for w in ws
            ]
            timed = [
                t for (k, _, idle), ts in acks.items() if (k, idle) == (kind, with_idle) for t in ts
            ]
            inside = [p for p in pauses[kind] if any(a <= p[0] <= b for a, b in spans)]
            counts = "/".join(str(sum(1 for p in inside if p[1] == g)) for g in range(3))
            longest = "/".join(
                f"{max((p[2] for p in inside if p[1] == g), default=0.0):.1f}" for g in range(3)
            )
            done = sorted((t for t in timed if t.status == 200), key=lambda t: t.seconds)
            slowest = done[-max(1, len(done) // 100) :]
            long_pauses = [p for p in inside if p[2] >= 5]
            hit = sum(
                1
                for each in slowest
                if any(
                    each.sent_at <= end and end - took / 1000 <= each.sent_at + each.seconds
                    for end, _, took, _ in long_pauses
                )
            )
            row = (
                kind,
                options.idle if with_idle else 0,
                f"{sum(b - a for a, b in spans):.1f}",
                counts,
                f"{sum(p[2] for p in inside):.1f}",
                longest,
                f"{hit} of {len(slowest)}",
            )
            print("| " + " | ".join(str(cell) for cell in row) + " |")
    print(
        "\n| full passes | from the first round on | median CPU ms | longest CPU ms "
        "| median wall ms | in rounds with idle connections / without |"
    )
    print("|---|---|---|---|---|---|")
    for kind in kinds:
        began = min(a for (k, _, _), ws in windows.items() if k == kind for a, _ in ws)
        full = [p for p in pauses[kind] if p[1] == 2 and p[0] >= began]  # after start-up's
        cpu = [p[3] for p in full]
        wall = [p[2] for p in full]
        during = [
            sum(
                1
                for p in full
                if any(
                    a <= p[0] <= b
                    for (k, _, idle), ws in windows.items()
                    if (k, idle) == (kind, with_idle)
                    for a, b in ws
                )
            )
            for with_idle in (True, False)
        ]
        passes = (
            kind,
            len(full),
            f"{percentile(cpu, 0.5):.1f}",
            f"{max(cpu, default=0.0):.1f}",
            f"{percentile(wall, 0.5):.1f}",
            f"{during[0]} / {during[1]}",
        )
        print("| " + " | ".join(str(cell) for cell in passes) + " |")


if __name__ == "__main__":
    if os.environ.get(GC_LOG):
        raise SystemExit(serve_logging_gc(os.environ[GC_LOG]))
    raise SystemExit(main())
