"""Serving locally: a server in a thread of its own (a WSGI app's among them), ``varulv serve``
in a process of its own, and a free port for either. The sandbox uses them, and so do the tests
and the benchmarks."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any, Protocol
from urllib.parse import urlsplit
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.types import WSGIApplication

import requests

from slackapp.config import child_environment

LOCALHOST = "127.0.0.1"
SERVE = ("-m", "slackapp.cli", "serve")
"""``varulv serve``, run with this Python."""


def free_port(host: str = LOCALHOST) -> int:
    """A port nothing listens on now (the OS's choice)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class ServerThread:
    """A server's ``serve_forever`` on a daemon thread, started once and stopped by
    ``shutdown`` (which returns once serving has ended)."""

    def __init__(
        self, serve_forever: Callable[[], object], shutdown: Callable[[], object], name: str
    ) -> None:
        self._serve_forever = serve_forever
        self._shutdown = shutdown
        self._name = name
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._serve_forever, name=self._name, daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._shutdown()
            self._thread.join()
            self._thread = None


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a request in hand never holds the process up at exit


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line a request: what asks every few seconds (Prometheus) would fill the log."""


def wsgi_server(host: str, port: int, app: WSGIApplication) -> WSGIServer:
    """``app`` on ``host:port`` (0: a free port), a thread a request, with no log line a
    request; it serves once ``serve_forever`` runs (:class:`ServerThread`)."""
    return make_server(host, port, app, _ThreadingWSGIServer, _QuietHandler)


def app_environment(
    *,
    bot_token: str,
    signing_secret: str,
    api_url: str,
    database_url: str,
    port: int,
    extra: Mapping[str, str | None] | None = None,
) -> dict[str, str]:
    """The environment of ``varulv serve`` for one workspace over HTTP on 127.0.0.1:``port``,
    with Slack at ``api_url``: this process's, never with Socket Mode or "Add to Slack"
    credentials nor ``/metrics`` (several such processes run at once), keeping its own timers
    whatever this process was told, then ``extra`` (None unsets)."""
    return child_environment(
        {
            "SLACK_BOT_TOKEN": bot_token,
            "SLACK_SIGNING_SECRET": signing_secret,
            "SLACK_API_URL": api_url,
            "DATABASE_URL": database_url,
            "PORT": str(port),
            "HOST": LOCALHOST,
            "SLACK_APP_TOKEN": None,
            "SLACK_CLIENT_ID": None,
            "SLACK_CLIENT_SECRET": None,
            "VARULV_METRICS_PORT": "0",
            "VARULV_TIMERS": None,
            **(extra or {}),
        }
    )


class Polled(Protocol):
    """A started process, as far as waiting for it to be ready needs."""

    def poll(self) -> int | None: ...


def start_process(
    arguments: Sequence[str], env: Mapping[str, str], log: Path
) -> subprocess.Popen[bytes]:
    """``python ARGUMENTS`` (such as :data:`SERVE`) in a session of its own, its output in
    ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, *arguments],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


class ExitedAtStart(RuntimeError):
    """The process ended before it was ready; ``code`` is its exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(f"exited with status {code} while starting")
        self.code = code


def healthy(url: str, timeout: float = 5.0) -> bool:
    """``URL/healthz`` answers 200; no answer (refused, or slow on a busy machine) is a no."""
    address = urlsplit(url)
    try:
        # A bare connection first: while a server starts, most polls are refused, and a refusal
        # through requests costs a chain of exceptions many times a plain socket's.
        port = address.port or (443 if address.scheme == "https" else 80)
        socket.create_connection((address.hostname, port), timeout).close()
        return requests.get(f"{url}/healthz", timeout=timeout).status_code == 200
    except (OSError, requests.RequestException):
        return False


def wait_until_ready(
    process: Polled,
    ready: Callable[[], bool],
    patience: float,
    *,
    cancelled: Callable[[], bool] = lambda: False,
) -> bool:
    """Until ``ready()``, polling ten times a second: True once ready, False when ``patience``
    seconds passed or ``cancelled()``; :class:`ExitedAtStart` if the process ended first."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline and not cancelled():
        code = process.poll()
        if code is not None:
            raise ExitedAtStart(code)
        if ready():
            return True
        time.sleep(0.1)
    return False
