"""Sends prepared, signed requests at a server with a bounded number in flight, and times each.

It runs in a process of its own (see ``load.py``), so that the stand-in for Slack, which answers
the app's Web API calls in the benchmark's main process, never delays the stopwatch.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Prepared:
    """One request as Slack would send it: the kind (for the report), body and headers."""

    kind: str
    body: bytes
    headers: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Timed:
    kind: str
    seconds: float
    status: int
    sent_at: float = 0.0
    """Wall-clock time the request started (``time.time()``), to line it up with what the
    stand-in for Slack saw."""
    answered: bool = False
    """The acknowledgement carried an answer to show (a body with text)."""


def fire(
    url: str, requests: Sequence[Prepared], in_flight: int, every: float | None = None
) -> list[Timed]:
    """Send every request, at most ``in_flight`` at once; each on a fresh connection, as Slack.
    With ``every``, the requests go out that many seconds apart whatever the answers (as
    people type, who do not wait for each other), rather than each as soon as one is in."""
    return asyncio.run(_fire_all(url, requests, in_flight, every))


async def _fire_all(
    url: str, requests: Sequence[Prepared], in_flight: int, every: float | None
) -> list[Timed]:
    parts = urlsplit(url)
    host, port, path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path or "/"
    gate = asyncio.Semaphore(in_flight)
    start = asyncio.Event()
    loop = asyncio.get_running_loop()

    async def one(number: int, request: Prepared) -> Timed:
        await start.wait()
        if every is not None:
            await asyncio.sleep(max(0.0, began + number * every - loop.time()))
        async with gate:
            return await _post(host, port, path, request)

    tasks = [asyncio.create_task(one(number, request)) for number, request in enumerate(requests)]
    began = loop.time()
    await asyncio.sleep(0)  # let every task reach the gate, then release the first wave at once
    start.set()
    return list(await asyncio.gather(*tasks))


async def _post(host: str, port: int, path: str, request: Prepared) -> Timed:
    head = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    head += [f"{name}: {value}" for name, value in request.headers]
    head.append(f"Content-Length: {len(request.body)}")
    raw = ("\r\n".join(head) + "\r\n\r\n").encode() + request.body
    started = time.perf_counter()
    sent_at = time.time()
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(raw)
        await writer.drain()
        answer = await reader.read()  # the server closes the connection after answering
        seconds = time.perf_counter() - started
        writer.close()
    except OSError:
        return Timed(request.kind, time.perf_counter() - started, 0, sent_at)
    status_line = answer.split(b"\r\n", 1)[0].split()
    status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else 0
    answered = b'"text"' in answer.split(b"\r\n\r\n", 1)[-1]
    return Timed(request.kind, seconds, status, sent_at, answered)
