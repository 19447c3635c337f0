"""The app's WSGI router as an ASGI app, served by uvicorn.

A request is read whole on the event loop, bounded in size and in time, and only then handed to
one of the app's threads: a slow or idle client holds a socket, never a thread, so it cannot
keep an acknowledgement or ``/healthz`` waiting. uvicorn waits for a request's head without a
deadline (its keep-alive timeout ends at the first byte), so :class:`HeadDeadline` adds one.
"""

from __future__ import annotations

import asyncio
import io
import logging
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]


class TooLarge(Exception):
    pass


class Buffered:
    """An ASGI app that reads each request's body (at most ``max_body`` bytes, within
    ``seconds``) and then calls the WSGI ``app`` with it on one of ``threads`` threads.

    ``start`` and ``stop`` run (on a thread) when the server starts serving and once it has
    stopped: ASGI's lifespan."""

    def __init__(
        self,
        app: WsgiApp,
        threads: int,
        max_body: int,
        seconds: float,
        start: Callable[[], object] = lambda: None,
        stop: Callable[[], object] = lambda: None,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.seconds = seconds
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="varulv-http")
        self.start = start
        self.stop = stop

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":  # no websockets
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

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await loop.run_in_executor(None, self.start)
                except Exception as error:
                    log.exception("the app could not start")
                    await send({"type": "lifespan.startup.failed", "message": repr(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await loop.run_in_executor(None, self.stop)
                self.pool.shutdown(wait=False)
                await send({"type": "lifespan.shutdown.complete"})
                return

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


class HeadDeadline(HttpToolsProtocol):
    """uvicorn's HTTP protocol (httptools), closing a connection once a request's head has been
    awaited :attr:`seconds`: from the connection's start, or from its first byte on a
    kept-alive connection (the body's deadline is :class:`Buffered`'s). Only public callbacks
    are extended: asyncio's ``connection_made``/``connection_lost`` and the parser's
    ``on_message_begin``/``on_headers_complete``."""

    seconds: ClassVar[float] = 10.0
    """Set once per process before it serves (uvicorn's workers import this class afresh)."""
    deadline: asyncio.TimerHandle | None = None
    begun = False
    """A request's first byte has come: a head cut short is worth a line in the log."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.arm(transport)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.begun = True
        if self.deadline is None:
            self.arm(self.transport)

    def on_headers_complete(self) -> None:
        self.disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self.disarm()
        super().connection_lost(exc)

    def arm(self, transport: asyncio.Transport) -> None:
        self.deadline = asyncio.get_running_loop().call_later(self.seconds, self.expire, transport)

    def expire(self, transport: asyncio.Transport) -> None:
        if self.begun:  # a connection that never said a word is dropped without one
            log.info("a request's head did not arrive in %s s", self.seconds)
        transport.abort()

    def disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None
