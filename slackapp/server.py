"""Serving: Bolt over HTTP behind uvicorn (each request read whole on the event loop, then
handled on a thread), or over Socket Mode."""

from __future__ import annotations

import io
import logging
import os
import resource
import shutil
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import uvicorn
from slack_bolt import App, BoltRequest
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.adapter.wsgi.http_response import WsgiHttpResponse
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from sqlalchemy import func, select

from slackapp import metrics
from slackapp.app import Varulv, build
from slackapp.asgi import Buffered, HeadDeadline
from slackapp.config import INSTALL_PATH, OAUTH_REDIRECT_PATH, Settings, hand_down_database_url
from slackapp.db.engine import database_url, make_engine, outside_transaction
from slackapp.db.models import TIMED_PHASES, Game, InboxEntry, OutboxEntry
from slackapp.logs import SOCKET_MODE_LOGGER, configure_logging, logging_config
from slackapp.referee_file import REFEREE_PATH, referee_archive
from slackapp.shapes import malformed, misnamed
from slackapp.timers import Deadlines

log = logging.getLogger(__name__)

StartResponse = Callable[..., Any]
EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 1 << 20
"""Slack's largest requests (a message's blocks and state, a modal) are tens of kilobytes."""
MAX_CONNECTIONS = 4000
"""Per process: idle ones cost a socket each, and Slack itself needs only a few; beyond this
many, uvicorn answers 503."""
OLDEST_WORK = select(
    func.now(),
    select(func.min(OutboxEntry.due_at)).where(OutboxEntry.done_at.is_(None)).scalar_subquery(),
    select(func.min(Game.deadline))
    .where(Game.phase.in_([phase.value for phase in TIMED_PHASES]))
    .scalar_subquery(),
    select(func.min(InboxEntry.received_at)).where(InboxEntry.done_at.is_(None)).scalar_subquery(),
)
METRICS_CONNECTIONS = 1
"""What ``/metrics`` reads from the database is one statement a scrape."""
GRACEFUL_SECONDS = 10
"""How long a stopping server lets the requests in hand finish."""


class Router:
    """``/slack/events`` (and the OAuth pages) to Bolt; ``/healthz`` and ``/readyz`` for the
    platform. ``/metrics`` has a port of its own (:func:`metrics_served`)."""

    def __init__(
        self, varulv: Varulv, keeps_timers: bool = False, ready_behind_seconds: float = 120
    ) -> None:
        self.varulv = varulv
        self.keeps_timers = keeps_timers
        """This process's timers run while it serves (``/healthz`` says when they stopped)."""
        self.ready_behind_seconds = ready_behind_seconds
        """A message due, or a deadline passed, this long ago and still waiting: the processes
        that deliver and keep the timers are not keeping up (``/readyz`` says so)."""
        self.slack = SlackRequestHandler(varulv.app)
        secret = varulv.signing_secret
        self.verifier = SignatureVerifier(secret) if secret else None
        """Slack's v0 signature over the raw bytes, signed within five minutes of now."""
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
            return self.alive(start_response)
        if path == "/readyz":
            return self.ready(start_response)
        if path == REFEREE_PATH:  # the referee file, for anyone to check a game with
            start_response("200 OK", [("Content-Type", "application/zip")])
            return [referee_archive()]
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
        if not self.signed(
            body,
            environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", ""),
            environ.get("HTTP_X_SLACK_SIGNATURE", ""),
        ):
            return _answer(start_response, "401 Unauthorized", b"invalid request\n")
        environ["wsgi.input"] = io.BytesIO(body)
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

    def signed(self, body: bytes, timestamp: str, signature: str) -> bool:
        """Signed by Slack (slack_sdk's check); a timestamp that is no number, or a signature
        that is no ASCII, is unsigned too rather than an error."""
        if self.verifier is None:
            return False
        try:
            return self.verifier.is_valid(body, timestamp, signature)
        except (ValueError, TypeError):
            return False

    def alive(self, start_response: StartResponse) -> Iterable[bytes]:
        """Liveness: 200 while this process answers and its timers run. No database: a
        restart would not bring a database back (``/readyz`` says when it is away)."""
        if self.keeps_timers and not self.varulv.deadlines.keeping_time():
            return _answer(start_response, "503 Service Unavailable", b"timers stopped\n")
        return _answer(start_response, "200 OK", b"ok\n")

    def ready(self, start_response: StartResponse) -> Iterable[bytes]:
        """Readiness: 200 while the database answers and deliveries, deadlines and requests
        keep up: no message due, no deadline passed and no acknowledged request waiting since
        more than ``ready_behind_seconds`` ago (whichever process should have handled it), and
        this process's timers running. One query."""
        try:
            with outside_transaction(self.varulv.sessions) as session:
                now, message_due, deadline, request = session.execute(OLDEST_WORK).one()
        except Exception as error:
            log.warning("readiness: database unreachable: %s", type(error).__name__)
            return _answer(start_response, "503 Service Unavailable", b"database unreachable\n")
        behind = now - timedelta(seconds=self.ready_behind_seconds)
        if message_due is not None and message_due < behind:
            return _answer(start_response, "503 Service Unavailable", b"deliveries behind\n")
        if deadline is not None and deadline < behind:
            return _answer(start_response, "503 Service Unavailable", b"deadlines behind\n")
        if request is not None and request < behind:
            return _answer(start_response, "503 Service Unavailable", b"requests behind\n")
        return self.alive(start_response)


def _answer(start_response: StartResponse, status: str, body: bytes) -> Iterable[bytes]:
    start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


def asgi_app(settings: Settings, database_url: str) -> Buffered:
    """One serving process's app: its requests, and (from ASGI's lifespan startup until its
    shutdown) its deliverer and timers, which share the work with every other process on the
    database through its leases."""
    HeadDeadline.seconds = settings.request_seconds
    varulv = build(settings, database_url)
    router = Router(
        varulv, keeps_timers=settings.timers, ready_behind_seconds=settings.ready_behind_seconds
    )
    return Buffered(
        router,
        settings.threads,
        MAX_BODY_BYTES,
        settings.request_seconds,
        start=lambda: varulv.start(timers=settings.timers),
        stop=varulv.stop,
    )


def from_environment() -> Buffered:
    """:func:`asgi_app` as each of uvicorn's worker processes builds it (``WEB_CONCURRENCY`` >
    1): from the environment, which :func:`serve_http` gave the database's address."""
    configure_logging()
    settings = Settings.from_env()
    return asgi_app(settings, database_url(settings.database_url, settings.data_dir))


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    return {
        "host": settings.host,
        "port": settings.port,
        "http": HeadDeadline,
        "lifespan": "on",
        "limit_concurrency": MAX_CONNECTIONS,
        "timeout_graceful_shutdown": GRACEFUL_SECONDS,
        "access_log": False,  # one line per Slack request is noise; the app logs what it did
        "log_config": logging_config(),  # uvicorn's own lines as JSON too
        "server_header": False,
    }


def serve_http(settings: Settings, url: str) -> None:
    """uvicorn serves Slack: one process, or ``WEB_CONCURRENCY`` of them under uvicorn's own
    supervisor; each delivers, and keeps the timers unless told ``VARULV_TIMERS=off``."""
    allow_many_files()
    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then raises the signal again under the
    # handlers it found: these make that an exit with status 0, as a stop that went well.
    stop_on_signals()
    bind = f"{settings.host}:{settings.port}"
    log.info("Varulv listens for Slack at http://%s%s", bind, EVENTS_PATH)
    if settings.multi_workspace:
        log.info("Workspaces add Varulv at http://%s%s", bind, INSTALL_PATH)
    options = uvicorn_options(settings)
    if settings.workers == 1:
        with metrics_served(settings, url):
            uvicorn.Server(uvicorn.Config(asgi_app(settings, url), **options)).run()
        return
    hand_down_database_url(url)  # the workers' own Settings.from_env() reads it
    samples = metrics.prepare_multiprocess()  # the workers, spawned, inherit where it is
    try:
        with metrics_served(settings, url, samples):  # the supervisor adds up the workers
            uvicorn.run(
                "slackapp.server:from_environment",
                factory=True,
                workers=settings.workers,
                **options,
            )
    finally:
        shutil.rmtree(samples, ignore_errors=True)


@contextmanager
def metrics_served(settings: Settings, url: str, workers: str | None = None) -> Iterator[None]:
    """``/metrics`` on ``VARULV_METRICS_PORT`` while the block runs (nothing when it is 0),
    reading the database's figures on one connection of its own; ``workers``: the folder the
    workers write their samples to, added up by this, their supervisor."""
    if settings.metrics_port is None:
        yield
        return
    engine = make_engine(url, METRICS_CONNECTIONS, settings.prepared_statements)
    server = metrics.metrics_server(engine, settings.host, settings.metrics_port, workers)
    server.start()
    log.info("Varulv serves /metrics at http://%s:%d/metrics", settings.host, settings.metrics_port)
    try:
        yield
    finally:
        server.stop()
        engine.dispose()


def stopped(signum: int, frame: object) -> None:
    raise SystemExit(0)


def stop_on_signals() -> None:
    """SIGTERM (a platform stopping the process) or SIGINT (Ctrl-C) ends it with status 0,
    through the ``finally`` that stops it well."""
    for stop in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop, stopped)


def allow_many_files() -> None:
    """Idle connections cost a file each: allow as many as the system lets this process have."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


STOPPING = "Varulv stops taking envelopes over Socket Mode"
WORKING = "Varulv keeps the timers and delivers"
"""What ``varulv work`` logs once it does."""
TIMERS_CHECK_SECONDS = 5.0
"""How often ``varulv work`` and Socket Mode check that their timers still run."""
SOCKET_PING_SECONDS = 1
"""How often slack_sdk's Socket Mode client pings Slack and checks its connection. A connection
cut off is found after five failed checks, so this is what bounds how long the app is deaf
(Bolt's 10 s made it a minute); a connection with no pong for four of these is made again."""


def serve_socket_mode(settings: Settings, database_url: str) -> None:
    """Socket Mode through Bolt's handler on slack_sdk's built-in client, checking its
    connection every second: deaf for about 6 s after a connection is cut off, 1 s after Slack
    closes one, 3 s across a refresh (``python -m benchmarks.socket_mode``; the websocket-client
    client was quicker only when cut off, and deaf 10 s across each refresh).

    SIGTERM (or SIGINT) stops it as it stops HTTP: no new envelope is taken, the ones in hand
    are acknowledged, then the acknowledged steps finish and their answers go (``Varulv.stop``),
    and the process exits with status 0."""
    varulv = build(settings, database_url)
    handler = CheckedSocketMode(
        varulv.app,
        settings.app_token,
        logger=logging.getLogger(SOCKET_MODE_LOGGER),
        ping_interval=SOCKET_PING_SECONDS,
    )
    stop_on_signals()
    varulv.start(timers=settings.timers)
    try:
        with metrics_served(settings, database_url):
            handler.connect()  # type: ignore[no-untyped-call]
            log.info("Varulv listens for Slack over Socket Mode")
            until_stopped(varulv.deadlines if settings.timers else None)
    finally:
        handler.stop()
        varulv.stop()


EXIT_GRACE_SECONDS = 30.0
"""How long a process whose timers stalled has to stop well before it is ended at once: a
sweep stuck for good holds a thread the interpreter would wait for at exit for ever."""


def until_stopped(
    timers: Deadlines | None,
    every: float = TIMERS_CHECK_SECONDS,
    grace: float = EXIT_GRACE_SECONDS,
    end_now: Callable[[int], object] = os._exit,
) -> None:
    """Wait for a signal to end the process; should the ``timers`` it keeps stop meanwhile
    (a process with no ``/healthz`` to say so), exit with status 1, to be started again: as
    well as it can, and at once (``end_now``) once ``grace`` has passed."""
    while not threading.Event().wait(every):
        if timers is not None and not timers.keeping_time():
            log.error("the timers stopped: the process exits to be started again")
            ending = threading.Timer(grace, _end, (grace, end_now))
            ending.daemon = True
            ending.start()
            raise SystemExit(1)


def _end(grace: float, end_now: Callable[[int], object]) -> None:
    log.error("the process did not stop within %.0f s: it ends at once", grace)
    for handler in logging.getLogger().handlers:
        handler.flush()
    end_now(1)


def keep_time(settings: Settings, database_url: str) -> None:
    """``varulv work``: the timers (the deadlines and the sweeps) and the deliverer, with no
    requests to serve, beside ``varulv serve`` processes told ``VARULV_TIMERS=off``, so that a
    storm of deadlines is stepped and posted here and never holds up their acknowledgements.
    It takes over the requests of processes gone, as every process does.

    It has no ``/healthz``: should its timers stop, it exits with status 1, for the platform to
    start it again. SIGTERM (or SIGINT) stops it as it stops ``varulv serve``: it takes no
    further deadline, the steps under way finish, and what they leave to show is delivered by
    the processes still running; it exits with status 0."""
    varulv = build(settings, database_url)
    stop_on_signals()
    varulv.start(timers=True)
    try:
        with metrics_served(settings, database_url):
            log.info(WORKING)
            until_stopped(varulv.deadlines)
    finally:
        log.info("Varulv stops keeping the timers once the steps under way are done")
        varulv.stop()


class CheckedSocketMode(SocketModeHandler):
    """Bolt's Socket Mode handler, with each envelope's payload checked as an HTTP request's
    body is (:class:`Router`): one Bolt could not route, or holding what PostgreSQL refuses,
    is logged and not acknowledged, as Bolt leaves a request it failed. ``stop()`` takes no
    new envelope and lets the ones in hand be acknowledged before the connection closes."""

    def __init__(self, app: App, app_token: str | None, **options: Any) -> None:
        super().__init__(app, app_token, **options)
        self._changed = threading.Condition()
        self._in_hand = 0
        self._stopping = False

    def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]  # as Bolt's own
        with self._changed:
            if self._stopping:  # not acknowledged: Slack tries it again elsewhere, or says so
                return
            self._in_hand += 1
        try:
            problem = socket_mode_problem(req)
            if problem is not None:
                log.warning("refused a Socket Mode request Bolt could not route: %s", problem)
                return
            super().handle(client, req)
        finally:
            with self._changed:
                self._in_hand -= 1
                self._changed.notify_all()

    def stop(self, seconds: float = GRACEFUL_SECONDS) -> None:
        """Take no new envelope, wait (up to ``seconds``) for those in hand, then close."""
        log.info(STOPPING)
        with self._changed:
            self._stopping = True
            self._changed.wait_for(lambda: self._in_hand == 0, seconds)
        self.close()  # type: ignore[no-untyped-call]


def socket_mode_problem(req: SocketModeRequest) -> str | None:
    """What is wrong with an envelope's payload, as :meth:`Router.events` judges a body."""
    try:
        request = BoltRequest(mode="socket_mode", body=req.payload)
        return malformed(request.body) or misnamed(request.context)
    except Exception as error:  # fields Bolt cannot read
        return repr(error)
