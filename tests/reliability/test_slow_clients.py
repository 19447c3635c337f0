"""Idle and slow clients hold a socket each, never a thread: acknowledgements and ``/healthz``
are answered while they hang on, and a request that does not arrive in time is dropped."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing, suppress
from urllib.parse import urlsplit

import psutil
import pytest
import requests
from sqlalchemy import Engine

from slackapp.fakeslack import FakeSlack
from tests.e2e.conftest import AppProcess
from tests.e2e.driver import Table
from tests.processes import signal_group
from tests.reliability.support import new_people, running_app, signed_command
from tests.waiting import until

pytestmark = pytest.mark.long(10)

REQUEST_SECONDS = 2


@pytest.fixture(scope="module")
def app(fake: FakeSlack, database_url: str) -> Iterator[AppProcess]:
    env = {"VARULV_REQUEST_SECONDS": str(REQUEST_SECONDS)}
    with running_app(fake, database_url, env=env) as process:
        yield process


def half_open(app: AppProcess, index: int) -> socket.socket:
    """A connection that stops mid-request: an unfinished head, or a body shorter than its
    ``Content-Length``, alternately."""
    address = urlsplit(app.url)
    connection = socket.create_connection((address.hostname, address.port), timeout=5)
    head = b"POST /slack/events HTTP/1.1\r\nHost: varulv\r\n"
    if index % 2:
        head += b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n"
        head += b"token=abc&"
    connection.sendall(head)
    return connection


def acknowledged_while_idle(fake: FakeSlack, app: AppProcess, db: Engine, idle: int) -> None:
    """With ``idle`` half-open connections held, a signed ``/varulv help`` is acknowledged and
    ``/healthz`` answers, each within Slack's 3 seconds, and help is answered after the ack."""
    (person,) = new_people(fake, 1)
    table = Table(fake, app, db)
    with ExitStack() as held:
        for index in range(idle):
            held.enter_context(closing(half_open(app, index)))
        health = requests.get(f"{app.url}/healthz", timeout=3)
        assert health.status_code == 200
        answer = fake.send(signed_command(fake, person, table.channel, "help"), app.events_url)
        assert answer.status_code == 200
        table.ephemeral(person, "least comfortable arguing out loud")  # help, after the ack
        table.command(person)  # and a command whose step runs after the ack
        table.lobby()


def test_eight_idle_connections_do_not_block_an_acknowledgement(
    fake: FakeSlack, app: AppProcess, db: Engine
) -> None:
    acknowledged_while_idle(fake, app, db, 8)


def test_many_idle_connections_do_not_block_an_acknowledgement(
    fake: FakeSlack, app: AppProcess, db: Engine
) -> None:
    acknowledged_while_idle(fake, app, db, 300)


@pytest.mark.parametrize("kind", ["head", "body"])
def test_a_request_that_does_not_arrive_in_time_is_dropped(app: AppProcess, kind: str) -> None:
    connection = half_open(app, 0 if kind == "head" else 1)
    with closing(connection):
        connection.settimeout(REQUEST_SECONDS * 5)
        started = time.monotonic()
        answer = b""
        while chunk := connection.recv(4096):  # until the server closes it
            answer += chunk
        waited = time.monotonic() - started
    assert waited >= REQUEST_SECONDS * 0.9, "not dropped before its time"
    if kind == "body":
        assert answer.startswith(b"HTTP/1.1 408"), answer
    assert requests.get(f"{app.url}/healthz", timeout=3).status_code == 200


def test_a_request_in_flight_when_the_server_is_told_to_stop_is_still_answered(
    fake: FakeSlack, database_url: str
) -> None:
    """SIGTERM stops an idle worker at once, yet a request already under way (here its body is
    still arriving) is read, acknowledged and answered before the worker exits."""
    (person,) = new_people(fake, 1)
    request = signed_command(fake, person, "C0STOPPING", "help")
    body = request.body.encode()
    with running_app(fake, database_url) as app:
        address = urlsplit(app.url)
        connection = socket.create_connection((address.hostname, address.port), timeout=10)
        with closing(connection):
            head = "".join(f"{name}: {value}\r\n" for name, value in request.headers.items())
            connection.sendall(
                f"POST /slack/events HTTP/1.1\r\nHost: varulv\r\n{head}"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body[:10]
            )
            wait_until_accepted(app, connection)  # the request is in flight
            signal_group(app.process, signal.SIGTERM)  # as a platform stops a process
            until(lambda: "Worker shutting down" in app.log_tail(), "the worker to stop")
            connection.sendall(body[10:])
            answer = b""
            while chunk := connection.recv(4096):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer
        assert app.process.wait(timeout=20) == 0, app.log_tail()


def wait_until_accepted(app: AppProcess, connection: socket.socket) -> None:
    """Until one of the server's workers holds the other end of ``connection``."""
    mine = connection.getsockname()

    def accepted() -> bool:
        for worker in psutil.Process(app.process.pid).children():
            with suppress(psutil.Error):
                if any(held.raddr == mine for held in worker.net_connections("tcp")):
                    return True
        return False

    until(accepted, "a worker to accept the connection")
