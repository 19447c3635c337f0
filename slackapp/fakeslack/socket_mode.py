"""Slack's Socket Mode, served locally: the app calls ``apps.connections.open`` with its app-level
token, connects to the one-time WebSocket URL it gets, is greeted with ``hello``, and from then on
receives what people do as envelopes, which it acknowledges by ``envelope_id``.

Shapes follow Slack's: slash commands and modal submissions accept a response payload (the
ack's message or ``response_action``), clicks do not; only Events API envelopes carry
``retry_attempt`` and ``retry_reason``, and only they are sent again when not acknowledged in
time. Slack asks the app to reconnect with ``disconnect``; the app opens a new connection
through ``apps.connections.open`` and drops the old one.

Uses the ``websockets`` package (in the test extra: only the tests serve Socket Mode).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from types import TracebackType
from typing import TYPE_CHECKING, Literal
from urllib.parse import parse_qs, urlsplit

import requests
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from websockets.http11 import Request, Response
from websockets.sync.server import Server, ServerConnection, serve

from slackapp.fakeslack.client import made_response
from slackapp.fakeslack.models import JSON
from slackapp.fakeslack.webapi import ApiError, ApiRequest
from slackapp.serving import ServerThread

if TYPE_CHECKING:
    from slackapp.fakeslack.fake import FakeSlack

APP_TOKEN = "xapp-1-A0001-1-fakeslack"
"""An app-level token shaped like Slack's, with ``connections:write``."""
ACK_TIMEOUT = 3.0
"""Slack's rule: an envelope not acknowledged within three seconds has failed."""
EVENT_RETRIES = 3
"""Slack sends an unacknowledged event again, three times at most."""
LINK_HOST = "applink-fakeslack"
"""What ``debug_info.host`` names, as Slack names the server holding the connection."""
APPROXIMATE_CONNECTION_TIME = 18060
"""Seconds Slack says a connection lasts before it asks for a refresh (its usual figure)."""
RESPONSE_PAYLOAD_INTERACTIONS = frozenset({"view_submission", "block_suggestion"})
"""Interactions whose ack may carry an answer; a click's may not."""

EnvelopeType = Literal["slash_commands", "interactive", "events_api"]
DisconnectReason = Literal["refresh_requested", "warning", "link_disabled"]


@dataclass
class _Link:
    """One open WebSocket connection from the app."""

    connection: ServerConnection
    closing: threading.Timer | None = None


@dataclass
class _Awaited:
    """An envelope sent and not yet acknowledged."""

    acked: threading.Event = field(default_factory=threading.Event)
    ack: JSON | None = None


class SocketMode:
    """Socket Mode for the app installed in ``fake``: its Web API method and WebSocket server.

    Use as a context manager (or start()/stop()). While started, the fake delivers people's
    commands, clicks and events over the newest connection instead of over HTTP.
    """

    def __init__(
        self,
        fake: FakeSlack,
        app_token: str = APP_TOKEN,
        *,
        ack_timeout: float = ACK_TIMEOUT,
        wait_for_link: float = 30.0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.fake = fake
        self.app_token = app_token
        self.ack_timeout = ack_timeout
        self.wait_for_link = wait_for_link
        """Seconds an event waits for the app to be connected (Slack retries events)."""
        self.sent: list[JSON] = []
        """Every envelope sent, retries included, oldest first."""
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._tickets: set[str] = set()
        self._links: list[_Link] = []
        self._hellos = 0
        self._awaited: dict[str, _Awaited] = {}
        self._latencies: list[float] = []
        self._server: Server = serve(self._serve, host, port, process_request=self._check_ticket)
        self._thread = ServerThread(
            self._server.serve_forever, self._server.shutdown, "fakeslack-socket-mode"
        )
        fake.api.add_method("apps.connections.open", self.connections_open, checks_own_token=True)

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> SocketMode:
        """Serve WebSocket connections, and deliver over them from now on."""
        self._thread.start()
        self.fake.deliver_over(self)
        return self

    def stop(self) -> None:
        """Deliver over HTTP again, close every connection and free the port."""
        self.fake.deliver_over(None)
        with self._lock:
            for link in self._links:
                if link.closing is not None:
                    link.closing.cancel()
        self._thread.stop()

    def __enter__(self) -> SocketMode:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``ws://host:port``, where the connection URLs point."""
        host, port = self._server.socket.getsockname()[:2]
        return f"ws://{host}:{port}"

    # -- what a test can see -------------------------------------------------------

    @property
    def hellos(self) -> int:
        """Connections greeted so far, since the server started."""
        with self._lock:
            return self._hellos

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._links)

    @property
    def ack_latencies(self) -> list[float]:
        """Seconds from sending each envelope to its acknowledgement, oldest first."""
        with self._lock:
            return list(self._latencies)

    def wait_for_connection(self, greeted: int, timeout: float = 30.0) -> None:
        """Until ``greeted`` connections have been greeted with ``hello`` in all, and only the
        newest is still open: the app has connected, or reconnected and let the old connection
        go (until then it may not be reading the new one). TimeoutError after ``timeout``."""
        with self._changed:
            if not self._changed.wait_for(
                lambda: self._hellos >= greeted and len(self._links) == 1, timeout
            ):
                raise TimeoutError(
                    f"{self._hellos} of {greeted} Socket Mode connections greeted, "
                    f"{len(self._links)} open"
                )

    # -- Slack asking the app to reconnect -----------------------------------------

    def disconnect(
        self, reason: DisconnectReason = "refresh_requested", grace: float = 10.0
    ) -> None:
        """Send ``disconnect`` on every open connection, and close each one ``grace`` seconds
        later unless the app has closed it first (Slack warns about ten seconds ahead)."""
        message = json.dumps(
            {"type": "disconnect", "reason": reason, "debug_info": {"host": LINK_HOST}}
        )
        with self._lock:
            links = list(self._links)
        for link in links:
            link.closing = threading.Timer(grace, link.connection.close)
            link.closing.daemon = True
            link.closing.start()
            with contextlib.suppress(ConnectionClosed):  # already going
                link.connection.send(message)

    def drop(self) -> None:
        """Close every connection with no ``disconnect`` first, as when Slack's end goes away;
        the app finds out by itself and connects again."""
        with self._lock:
            links = list(self._links)
        for link in links:
            link.connection.close(CloseCode.GOING_AWAY)

    def sever(self) -> None:
        """Cut every connection's socket with no close frame, as when Slack's end vanishes or
        the network between goes: the app learns of it from its socket alone."""
        with self._lock:
            links = list(self._links)
        for link in links:
            with contextlib.suppress(OSError):  # already gone
                link.connection.socket.shutdown(socket.SHUT_RDWR)

    # -- apps.connections.open -----------------------------------------------------

    def connections_open(self, request: ApiRequest) -> JSON:
        """A one-time WebSocket URL; only the app-level token may ask for one."""
        if not request.token:
            raise ApiError("not_authed")
        if request.token != self.app_token:
            known = self.fake.grants.token_error(request.token) is None
            raise ApiError("not_allowed_token_type" if known else "invalid_auth")
        ticket = str(uuid.uuid4())
        with self._lock:
            self._tickets.add(ticket)
        app_id = self.fake.identity.app_id
        return {"url": f"{self.url}/link/?ticket={ticket}&app_id={app_id}"}

    def _check_ticket(self, connection: ServerConnection, request: Request) -> Response | None:
        url = urlsplit(request.path)
        ticket = (parse_qs(url.query).get("ticket") or [""])[0]
        with self._lock:
            known = url.path.rstrip("/") == "/link" and ticket in self._tickets
            self._tickets.discard(ticket)  # one connection per URL
        if known:
            return None
        return connection.respond(HTTPStatus.UNAUTHORIZED, "invalid or used ticket\n")

    # -- one connection ------------------------------------------------------------

    def _serve(self, connection: ServerConnection) -> None:
        link = _Link(connection)
        try:
            with self._lock:
                count = len(self._links) + 1
            connection.send(json.dumps(_hello(self.fake.identity.app_id, count)))
            with self._changed:  # envelopes may use it only once greeted
                self._links.append(link)
                self._hellos += 1
                self._changed.notify_all()
            for message in connection:
                self._read_ack(message)
        except ConnectionClosed:
            pass
        finally:
            if link.closing is not None:
                link.closing.cancel()
            with self._changed:
                if link in self._links:
                    self._links.remove(link)
                self._changed.notify_all()

    def _read_ack(self, message: str | bytes) -> None:
        try:
            ack = json.loads(message)
        except ValueError:
            return
        if not isinstance(ack, dict) or not isinstance(ack.get("envelope_id"), str):
            return
        with self._lock:
            awaited = self._awaited.get(ack["envelope_id"])
        if awaited is not None and not awaited.acked.is_set():
            awaited.ack = ack
            awaited.acked.set()

    # -- delivering ----------------------------------------------------------------

    def post_form(
        self, fields: Mapping[str, str], headers: Mapping[str, str] | None = None
    ) -> requests.Response:
        """A slash command (its fields), or an interaction (its ``payload``), as an envelope."""
        _no_headers(headers)
        if "payload" in fields:
            payload = json.loads(fields["payload"])
            accepts = payload.get("type") in RESPONSE_PAYLOAD_INTERACTIONS
            return self._deliver("interactive", payload, accepts)
        return self._deliver("slash_commands", dict(fields), True)

    def post_json(
        self, payload: JSON, headers: Mapping[str, str] | None = None
    ) -> requests.Response:
        """An Events API callback as an envelope, sent again until acknowledged."""
        _no_headers(headers)
        return self._deliver("events_api", payload, False)

    def _deliver(self, kind: EnvelopeType, payload: JSON, accepts: bool) -> requests.Response:
        """Send one envelope and wait for its ack, answered as over HTTP: 200 with the ack's
        payload; 503 when the app is not connected (Slack's ``dispatch_failed``); 504 when it
        did not acknowledge in time."""
        envelope_id = str(uuid.uuid4())
        awaited = _Awaited()
        with self._lock:
            self._awaited[envelope_id] = awaited
        events = kind == "events_api"
        try:
            started: float | None = None
            for attempt in range(1 + (EVENT_RETRIES if events else 0)):
                envelope: JSON = {
                    "envelope_id": envelope_id,
                    "payload": payload,
                    "type": kind,
                    "accepts_response_payload": accepts,
                }
                if events:
                    envelope["retry_attempt"] = attempt
                    envelope["retry_reason"] = "timeout" if attempt else ""
                # Events wait for a connection, as Slack keeps retrying them; a person's
                # command or click fails at once when the app is not there.
                if not self._send(envelope, self.wait_for_link if events else 0.0):
                    return _answer(HTTPStatus.SERVICE_UNAVAILABLE)
                started = started or time.perf_counter()
                if awaited.acked.wait(self.ack_timeout):
                    with self._lock:
                        self._latencies.append(time.perf_counter() - started)
                    return _answer(HTTPStatus.OK, awaited.ack if accepts else None)
            return _answer(HTTPStatus.GATEWAY_TIMEOUT)
        finally:
            with self._lock:
                del self._awaited[envelope_id]

    def _send(self, envelope: JSON, wait: float) -> bool:
        """On the newest open connection, waiting up to ``wait`` seconds for one; whether sent."""
        text = json.dumps(envelope)
        deadline = time.monotonic() + wait
        while True:
            with self._changed:
                remaining = max(0.0, deadline - time.monotonic())
                if not self._changed.wait_for(lambda: self._links, remaining):
                    return False
                link = self._links[-1]
            try:
                link.connection.send(text)
            except ConnectionClosed:  # it closed as we sent: wait for it to be gone
                self._wait_gone(link)
                continue
            with self._lock:
                self.sent.append(envelope)
            return True

    def _wait_gone(self, link: _Link) -> None:
        with self._changed:
            self._changed.wait_for(lambda: link not in self._links, 1.0)


def _hello(app_id: str, num_connections: int) -> JSON:
    return {
        "type": "hello",
        "num_connections": num_connections,
        "debug_info": {
            "host": LINK_HOST,
            "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3],
            "build_number": 1,
            "approximate_connection_time": APPROXIMATE_CONNECTION_TIME,
        },
        "connection_info": {"app_id": app_id},
    }


def _answer(status: HTTPStatus, ack: JSON | None = None) -> requests.Response:
    """An ack as the fake reads HTTP answers: the ack's payload is the body."""
    payload = (ack or {}).get("payload")
    body = b"" if payload is None else json.dumps(payload).encode()
    response = made_response(status.value, body, status.phrase)
    response.headers["Content-Type"] = "application/json"
    return response


def _no_headers(headers: Mapping[str, str] | None) -> None:
    if headers:
        raise ValueError(f"Socket Mode envelopes have no HTTP headers: {dict(headers)}")
