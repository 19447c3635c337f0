"""Idle and slow clients hold a socket each, never a thread: acknowledgements and ``/healthz``
are answered while they hang on, and a request that does not arrive in time is dropped."""

from __future__ import annotations

import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack, closing, suppress
from urllib.parse import urlsplit

import psutil
import pytest
import requests
from sqlalchemy import Engine

from slackapp.fakeslack import FakeSlack
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, AppProcess
from tests.e2e.driver import Table
from tests.processes import signal_group
from tests.reliability.support import new_people, running_app, signed_command
from tests.waiting import PATIENCE, until

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
    ``/healthz`` answers (a server they held up would answer neither), and help is answered
    after the ack."""
    (person,) = new_people(fake, 1)
    table = Table(fake, app, db)
    with ExitStack() as held:
        for index in range(idle):
            held.enter_context(closing(half_open(app, index)))
        health = requests.get(f"{app.url}/healthz", timeout=10)
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
    """Dropped by its deadline, and by nothing sooner: the server says it dropped it once
    ``REQUEST_SECONDS`` had passed (a head cut short is closed; a body cut short is answered
    408)."""
    said = f"a request's {kind} did not arrive in {REQUEST_SECONDS} s"
    dropped_before = app.log.read_text().count(said)
    connection = half_open(app, 0 if kind == "head" else 1)
    with closing(connection):
        connection.settimeout(PATIENCE)
        answer = b""
        while chunk := connection.recv(4096):  # until the server closes it
            answer += chunk
    until(lambda: app.log.read_text().count(said) > dropped_before, f"the log to say {said!r}")
    if kind == "body":
        assert answer.startswith(b"HTTP/1.1 408"), answer
    else:
        assert answer == b"", answer
    assert requests.get(f"{app.url}/healthz", timeout=10).status_code == 200


def test_a_request_in_flight_when_the_server_is_told_to_stop_is_still_answered(
    fake: FakeSlack, database_url: str
) -> None:
    """SIGTERM stops the server from taking new connections at once, yet a request already
    under way (here its body is still arriving) is read, acknowledged and answered before the
    server exits."""
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
            until(lambda: "Shutting down" in app.log_tail(), "the server to stop")
            connection.sendall(body[10:])
            answer = b""
            while chunk := connection.recv(4096):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer
        assert app.process.wait(timeout=20) == 0, app.log_tail()


def wait_until_accepted(app: AppProcess, connection: socket.socket) -> None:
    """Until the server (or one of its worker processes) holds the other end of
    ``connection``."""
    mine = connection.getsockname()

    def accepted() -> bool:
        server = psutil.Process(app.process.pid)
        for worker in [server, *server.children()]:
            with suppress(psutil.Error):
                if any(held.raddr == mine for held in worker.net_connections("tcp")):
                    return True
        return False

    until(accepted, "the server to accept the connection")


class Crowd:
    """``idle`` connections that stop inside a request, and ``dripping`` that send their head a
    byte a second, held open on a thread of their own: each one the server drops is opened
    again at once, as an attacker would."""

    def __init__(self, app: AppProcess, idle: int, dripping: int) -> None:
        self.app = app
        self.idle = [half_open(app, index) for index in range(idle)]
        self.dripping = [self.drip_start() for _ in range(dripping)]
        self.head = b"POST /slack/events HTTP/1.1\r\nHost: varulv\r\nX-Slow: " + b"a" * 4000
        self.reopened = 0
        self.dropped = threading.Event()
        """Set once the server has dropped one of them (they never finish in time)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._hold, name="crowd", daemon=True)

    def drip_start(self) -> socket.socket:
        address = urlsplit(self.app.url)
        connection = socket.create_connection((address.hostname, address.port), timeout=5)
        connection.setblocking(False)
        return connection

    def __enter__(self) -> Crowd:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for connection in self.idle + self.dripping:
            connection.close()

    def _hold(self) -> None:
        step = 0
        while not self._stop.wait(1.0):  # the pace of the drip, not a wait for anything
            for index, connection in enumerate(self.dripping):
                try:
                    connection.send(self.head[step % len(self.head) : step % len(self.head) + 1])
                except OSError:
                    connection.close()
                    self.dripping[index] = self.drip_start()
                    self.reopened += 1
                    self.dropped.set()
            for index, connection in enumerate(self.idle):
                if self._dropped(connection):
                    connection.close()
                    self.idle[index] = half_open(self.app, index)
                    self.reopened += 1
                    self.dropped.set()
            step += 1

    @staticmethod
    def _dropped(connection: socket.socket) -> bool:
        connection.setblocking(False)
        try:
            return connection.recv(4096) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True
        finally:
            connection.setblocking(True)


def test_a_game_is_played_while_hundreds_of_clients_hang_on(database_url: str, db: Engine) -> None:
    """500 idle connections and 50 sending their head a byte a second, held the whole game:
    every command and click is acknowledged (the stand-in, like Slack, gives up on one that
    does not come), and the game reaches its reveal; how fast is the benchmarks' to say."""
    with (
        FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as fake,
        running_app(fake, database_url, env={"VARULV_REQUEST_SECONDS": "2"}) as app,
        Crowd(app, idle=500, dripping=50) as crowd,
    ):
        people = new_people(fake, 3)
        table = Table(fake, app, db)
        table.seat_people(people[0], people[1:])
        table.start(people[0])
        table.play_night(people)
        table.nobody_dies_tonight(people)
        table.reveal()
        assert fake.ack_latencies, "every command and click was acknowledged"
        assert crowd.dropped.wait(30), "the server drops those that do not finish in time"
