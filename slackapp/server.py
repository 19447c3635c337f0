"""Serving: Bolt over HTTP behind gunicorn (an asyncio worker reading each request whole,
then threads), or over Socket Mode."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import logging
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from gunicorn.app.base import BaseApplication
from slack_bolt import BoltRequest
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.adapter.wsgi.http_response import WsgiHttpResponse
from sqlalchemy import text

from slackapp.acks import AckFirst, AcrossWorkers, QuietCollector
from slackapp.app import Varulv, build
from slackapp.asgi import Buffered, Worker
from slackapp.config import INSTALL_PATH, OAUTH_REDIRECT_PATH, Settings
from slackapp.delivery.notices import Listener
from slackapp.logs import configure_logging, logging_config
from slackapp.shapes import malformed, misnamed

log = logging.getLogger(__name__)

StartResponse = Callable[..., Any]
EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 1 << 20
"""Slack's largest requests (a message's blocks and state, a modal) are tens of kilobytes."""
MAX_CONNECTIONS = 4000
"""Per worker: idle ones cost a socket each, and Slack itself needs only a few."""
SIGNATURE_MAX_AGE = 5 * 60
"""Slack's rule: a request signed longer ago than this may be a replay."""
BACKGROUND_STOP_SECONDS = 10.0
BACKGROUND_RESTART_SECONDS = 1.0
BACKGROUND_NICENESS = 5
"""The web workers answer Slack within its 3 s; the deliveries and deadlines can wait for a core."""


class Router:
    """``/slack/events`` (and the OAuth pages) to Bolt, ``/healthz`` for the platform."""

    def __init__(self, varulv: Varulv) -> None:
        self.varulv = varulv
        self.slack = SlackRequestHandler(varulv.app)
        self.slack_paths = {EVENTS_PATH}
        if varulv.app.oauth_flow is not None:  # "Add to Slack" and Slack's redirect back
            self.slack_paths |= {INSTALL_PATH, OAUTH_REDIRECT_PATH}

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == EVENTS_PATH and environ.get("REQUEST_METHOD") == "POST":
            return self.events(environ, start_response)
        if path in self.slack_paths:
            return self.slack(environ, start_response)
        if path == "/healthz":
            return self.health(start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]

    def events(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """A request from Slack: refused before anything in it is read unless Slack signed it,
        recently; then Bolt's. A signed body Bolt cannot read gets a 400, never a 500."""
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            return _answer(start_response, "413 Content Too Large", b"too large\n")
        body = environ["wsgi.input"].read(length)
        if self.varulv.signing_secret is None or not signed_by_slack(
            self.varulv.signing_secret,
            body,
            environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", ""),
            environ.get("HTTP_X_SLACK_SIGNATURE", ""),
        ):
            return _answer(start_response, "401 Unauthorized", b"invalid request\n")
        environ["wsgi.input"] = io.BytesIO(body)
        with self.varulv.acks.acknowledging():
            try:  # as Bolt's WSGI adapter does, with the envelope checked before routing
                raw = WsgiHttpRequest(environ)
                request = BoltRequest(
                    body=raw.get_body(), query=raw.query_string, headers=raw.get_headers()
                )
                problem = malformed(request.body) or misnamed(request.context)
            except Exception as error:  # not UTF-8, not JSON, or fields Bolt cannot read
                problem = repr(error)
            if problem is not None:
                log.warning("refused a signed request Bolt could not route: %s", problem)
                return _answer(start_response, "400 Bad Request", b"malformed request\n")
            answer = self.varulv.app.dispatch(request)
            response = WsgiHttpResponse(answer.status, answer.headers, answer.body)
            start_response(response.status, response.get_headers())
            return response.get_body()

    def health(self, start_response: StartResponse) -> Iterable[bytes]:
        try:
            with self.varulv.sessions() as session:
                session.execute(text("SELECT 1"))
        except Exception:
            log.exception("health check: database unreachable")
            start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"database unreachable\n"]
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok\n"]


def signed_by_slack(secret: str, body: bytes, timestamp: str, signature: str) -> bool:
    """Slack's v0 signature over the raw bytes, within five minutes of now (no replays)."""
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12):
        return False
    if abs(time.time() - int(timestamp)) > SIGNATURE_MAX_AGE or not signature.isascii():
        return False
    base = b"v0:" + timestamp.encode() + b":" + body
    expected = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def _answer(start_response: StartResponse, status: str, body: bytes) -> Iterable[bytes]:
    start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


class Gunicorn(BaseApplication):  # type: ignore[misc]
    """gunicorn in-process: each worker builds its own app and timers after the fork."""

    def __init__(self, factory: Callable[[], Buffered], options: dict[str, Any]) -> None:
        self.factory = factory
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            if key in self.cfg.settings:  # an older gunicorn lacks some (the control socket)
                self.cfg.set(key, value)

    def load(self) -> Buffered:
        return self.factory()


def acks_first(workers: AcrossWorkers, enabled: bool) -> AckFirst:
    """The gate that lets acknowledgements go before steps; not ``enabled``, it stands open
    (steps start at once)."""
    if not enabled:
        return AckFirst(patience=0.0, steps_while_busy=1 << 20, workers=workers)
    return AckFirst(workers=workers)


def serve_http(settings: Settings, database_url: str) -> None:
    """gunicorn's workers answer Slack; a background process shows the outbox and keeps the
    timers (slackapp.delivery.notices says why and how they talk)."""
    workers = AcrossWorkers()  # before the fork: every worker shares it

    threads = settings.threads

    def factory() -> Buffered:
        acks = acks_first(workers, settings.acks_first)
        varulv = build(settings, database_url, acks, relays=True)
        QuietCollector(varulv.acks).start()
        return Buffered(Router(varulv), threads, MAX_BODY_BYTES, settings.request_seconds)

    class SlackWorker(Worker):
        request_seconds = settings.request_seconds

    options = {
        "bind": f"{settings.host}:{settings.port}",
        "workers": settings.workers,
        "worker_class": SlackWorker,
        "worker_connections": MAX_CONNECTIONS,
        "asgi_lifespan": "off",  # the app starts its timers when gunicorn loads it
        "timeout": 30,
        "graceful_timeout": 5,
        "accesslog": None,
        "logconfig_dict": logging_config(),  # gunicorn's own lines as JSON too
        # One control socket per user would be shared by every `varulv serve` on the host.
        "control_socket_disable": True,
    }
    log.info("Varulv listens for Slack at http://%s%s", options["bind"], EVENTS_PATH)
    if settings.multi_workspace:
        log.info("Workspaces add Varulv at http://%s%s", options["bind"], INSTALL_PATH)
    with Background(settings, database_url, workers):
        Gunicorn(factory, options).run()


class Background:
    """The background process (deliveries and timers), forked from the server before gunicorn
    starts its workers, started again should it die, stopped with the server."""

    def __init__(self, settings: Settings, database_url: str, workers: AcrossWorkers) -> None:
        self.settings = settings
        self.database_url = database_url
        self.workers = workers
        self.pid = 0
        self._alive = -1
        """Read end of a pipe only the background process holds open: EOF once it is gone
        (whatever reaps it: gunicorn's arbiter reaps every child it has)."""
        self._stopping = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="varulv-watch", daemon=True)

    def __enter__(self) -> Background:
        self._start()
        self._watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        if not select.select([self._alive], [], [], BACKGROUND_STOP_SECONDS)[0]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def _start(self) -> None:
        """Fork: everything is imported already, and no other thread runs yet to leave a lock
        held in the child."""
        parent = os.getpid()
        alive, keep_alive = os.pipe()
        pid = os.fork()
        if pid == 0:  # the background process
            os.close(alive)
            status = 1
            try:
                run_background(self.settings, self.database_url, self.workers, parent)
                status = 0
            except BaseException:
                log.exception("the background process failed")
            finally:
                os._exit(status)
        os.close(keep_alive)
        if self._alive >= 0:
            os.close(self._alive)
        self.pid, self._alive = pid, alive

    def _watch(self) -> None:
        while True:
            while os.read(self._alive, 1):
                pass
            if self._stopping.wait(BACKGROUND_RESTART_SECONDS):
                return
            log.error("the background process stopped; starting it again")
            self._start()


def run_background(
    settings: Settings, database_url: str, workers: AcrossWorkers, parent: int
) -> None:
    """The background process: the deliverer, the timers, and the ear for the web workers'
    notices; until SIGTERM or SIGINT, or the server that started it is gone."""
    configure_logging()
    os.nice(BACKGROUND_NICENESS)
    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopped.set())
    varulv = build(settings, database_url, acks_first(workers, settings.acks_first))
    listener = Listener(
        database_url,
        on_outbox=varulv.deliverer.kick,
        on_deadline=varulv.deadlines.arm,
        on_connect=varulv.deliverer.sweep,
    )
    varulv.start()
    listener.start()
    log.info("the background process delivers and keeps the timers")
    while not stopped.wait(1.0) and os.getppid() == parent:
        pass
    listener.stop()
    varulv.stop()


def serve_socket_mode(settings: Settings, database_url: str) -> None:
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    varulv = build(settings, database_url)
    varulv.start()
    SocketModeHandler(varulv.app, settings.app_token).start()  # type: ignore[no-untyped-call]
