"""The app's WSGI router served by gunicorn's asyncio worker.

A request is read whole on the event loop, bounded in size and in time, and only then handed to
one of the app's threads: a slow or idle client holds a socket, never a thread, so it cannot
keep an acknowledgement or ``/healthz`` waiting. gunicorn's worker waits for the first request
of a connection without a deadline, so :class:`Worker` adds one.
"""

from __future__ import annotations

import asyncio
import io
import logging
import resource
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gunicorn.asgi.protocol import ASGIProtocol
from gunicorn.workers import gasgi

log = logging.getLogger(__name__)

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]

SPARE_FILES = 200
"""File descriptors kept for the database, Slack's Web API and the logs when the idle
connections are many."""


class TooLarge(Exception):
    pass


class Buffered:
    """An ASGI app that reads each request's body (at most ``max_body`` bytes, within
    ``seconds``) and then calls the WSGI ``app`` with it on one of ``threads`` threads."""

    def __init__(self, app: WsgiApp, threads: int, max_body: int, seconds: float) -> None:
        self.app = app
        self.max_body = max_body
        self.seconds = seconds
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="varulv-http")

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # no websockets, and no lifespan (turned off)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and not (declared.isdigit() and int(declared) <= self.max_body):
            await _respond(send, 413, b"too large\n")
            return
        try:
            async with asyncio.timeout(self.seconds):  # no task of its own, unlike wait_for
                body = await self._body(receive)
        except TooLarge:
            await _respond(send, 413, b"too large\n")
            return
        except TimeoutError:
            log.info("a request's body did not arrive in %s s", self.seconds)
            await _respond(send, 408, b"request timeout\n")
            return
        if body is None:  # the client went away
            return
        loop = asyncio.get_running_loop()
        status, headers, answer = await loop.run_in_executor(self.pool, self._call, scope, body)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    async def _body(self, receive: Receive) -> bytes | None:
        chunks = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunks += message.get("body", b"")
            if len(chunks) > self.max_body:
                raise TooLarge
            if not message.get("more_body"):
                return bytes(chunks)

    def _call(
        self, scope: dict[str, Any], body: bytes
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        started: list[Any] = []

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            started[:] = [status, headers]
            return lambda data: None

        try:
            chunks = self.app(environ(scope, body), start_response)
            try:
                answer = b"".join(chunks)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
        except Exception:
            log.exception("a request failed")
            return 500, [(b"content-type", b"text/plain")], b"server error\n"
        status, headers = started
        encoded = [
            (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers
        ]
        return int(status.split()[0]), encoded, answer


def environ(scope: dict[str, Any], body: bytes) -> dict[str, Any]:
    """The WSGI environ (PEP 3333) of an ASGI request whose body has been read."""
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client") or ("", 0)
    values: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": scope.get("root_path", "").encode().decode("latin-1"),
        "PATH_INFO": scope["path"].encode().decode("latin-1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "REMOTE_ADDR": str(client[0]),
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        value = raw_value.decode("latin-1")
        if name == "CONTENT_TYPE":
            values[name] = value
        elif name != "CONTENT_LENGTH":
            key = f"HTTP_{name}"
            values[key] = f"{values[key]},{value}" if key in values else value
    return values


def _header(scope: dict[str, Any], wanted: bytes) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == wanted:
            return str(value.decode("latin-1").strip())
    return None


async def _respond(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain"), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class HeadDeadline(ASGIProtocol):  # type: ignore[misc]
    """gunicorn's protocol, closing a connection whose first request's head has not arrived
    within the worker's ``request_seconds`` (later requests have gunicorn's keep-alive
    deadline), and refusing connections beyond the worker's limit."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if self.worker.nr_conns > self.worker.connection_limit:
            transport.abort()  # type: ignore[attr-defined]
            return
        self._head_deadline = self.worker.loop.call_later(
            self.worker.request_seconds, self._head_too_slow
        )

    def _on_headers_complete(self) -> Any:
        self._cancel_head_deadline()
        return super()._on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_deadline()
        super().connection_lost(exc)

    def _cancel_head_deadline(self) -> None:
        deadline = getattr(self, "_head_deadline", None)
        if deadline is not None:
            deadline.cancel()

    def _head_too_slow(self) -> None:
        self.transport.abort()


class Worker(gasgi.ASGIWorker):  # type: ignore[misc]
    """gunicorn's asyncio worker, serving with :class:`HeadDeadline`, and stopping as soon as it
    is told to rather than at its next once-a-second heartbeat."""

    request_seconds = 10.0
    """How long a request (its head, then its body) may take to arrive."""
    connection_limit = 1000
    _serving: asyncio.Task[None] | None = None

    async def _serve(self) -> None:
        self._serving = asyncio.current_task()
        await super()._serve()

    def handle_exit_signal(self) -> None:
        self._wake_to_stop(super().handle_exit_signal)

    def handle_quit_signal(self) -> None:
        self._wake_to_stop(super().handle_quit_signal)

    def _wake_to_stop(self, handle: Callable[[], None]) -> None:
        """gunicorn's serving loop checks ``alive`` once a second, between sleeps, and takes a
        cancelled sleep for a stop: cancel it, once, when every listener is serving (the loop
        is then in that sleep), and the graceful shutdown that follows still finishes the
        requests in flight."""
        sleeping = self.alive and len(self.servers) == len(self.sockets)
        handle()
        if sleeping and self._serving is not None and not self.alive:
            self._serving.cancel()

    def init_process(self) -> None:
        # Idle connections cost a file each: allow as many as the system lets this process
        # have, less what the app itself needs.
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard != resource.RLIM_INFINITY and soft < hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        self.connection_limit = min(self.cfg.worker_connections, soft - SPARE_FILES)
        # gunicorn has no setting for the protocol class its worker serves with.
        gasgi.ASGIProtocol = HeadDeadline
        super().init_process()
