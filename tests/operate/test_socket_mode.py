"""Socket Mode, as the README runs Varulv on one's own machine: ``varulv serve`` with an
app-level token and no signing secret connects out to Slack (the stand-in), and a whole game
plays over the WebSocket, across Slack asking for a new connection and across the socket
going away. Then the stand-in's Socket Mode itself, against slack_sdk's own client: hello,
tickets, acks with and without answers, and retries."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import parse_qsl

import pytest
import websockets.sync.client
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.client import BaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from sqlalchemy import Engine, create_engine, text
from websockets.exceptions import InvalidStatus

from slackapp.fakeslack import UNLIMITED, FakeSlack, Message
from slackapp.fakeslack.socket_mode import ACK_TIMEOUT, APP_TOKEN, SocketMode
from slackapp.server import STOPPING
from tests import processes
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, AppProcess, start_app
from tests.e2e.driver import Table
from tests.operate.conftest import PEOPLE, fresh_database
from tests.operate.test_stopping import ASKING, JOINING, waiting_on_locks
from tests.reliability.support import new_people, signed
from tests.waiting import PATIENCE, until

pytestmark = pytest.mark.long(16)

ALVA, BENGT, CARIN, _ = PEOPLE
PATIENT_ACK = 10.0
"""Seconds the stand-in waits for an ack where one is expected, as its HTTP side does: a busy
machine that acknowledges late is not an app that failed to. Slack's own three seconds
(``ACK_TIMEOUT``) only where an ack is meant to run out."""


@dataclass
class OverSocket:
    """The app process as the driver sees it in Socket Mode: it has no request URL."""

    process: AppProcess
    events_url: None = None

    def log_tail(self, lines: int = 60) -> str:
        return self.process.log_tail(lines)


@dataclass
class SocketDeployment:
    fake: FakeSlack
    link: SocketMode
    app: OverSocket
    db: Engine

    def table(self) -> Table:
        for user_id, name in PEOPLE.items():
            self.fake.add_user(user_id, name)
        return Table(self.fake, self.app, self.db)


@pytest.fixture(scope="module")
def over_socket(postgres: str) -> Iterator[SocketDeployment]:
    """``varulv serve`` with SLACK_APP_TOKEN and SLACK_BOT_TOKEN only; it has no HTTP port to
    poll, so it is up once the stand-in has greeted its WebSocket connection."""
    url = fresh_database(postgres, "socket")
    with (
        FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as fake,
        SocketMode(fake, ack_timeout=PATIENT_ACK) as link,
    ):
        env = {"SLACK_APP_TOKEN": APP_TOKEN, "SLACK_SIGNING_SECRET": ""}
        process = start_app(fake, url, env=env, ready=lambda _: link.hellos >= 1)
        engine = create_engine(url)
        try:
            yield SocketDeployment(fake, link, OverSocket(process), engine)
        finally:
            process.stop()
            process.kill()  # anything left in its process group
            process.log.unlink(missing_ok=True)
            engine.dispose()


def test_a_whole_game_over_socket_mode_across_reconnects(over_socket: SocketDeployment) -> None:
    fake, link = over_socket.fake, over_socket.link
    assert link.open_connections == 1
    table = over_socket.table()
    people = [ALVA, BENGT, CARIN]

    table.seat_people(ALVA, [BENGT, CARIN], bots=True)
    table.start(ALVA)

    # Slack refreshes the connection: the app must open a new one and let the old one go.
    link.disconnect("refresh_requested")
    link.wait_for_connection(2)
    table.play_night(people)
    table.wait_for_phase("day")

    # Slack's end goes away without a word: the app notices and connects again by itself.
    link.drop()
    link.wait_for_connection(3)
    table.heard_enough([ALVA, BENGT])
    table.wait_for_phase("vote")

    table.vote({ALVA: "bengt", BENGT: "carin", CARIN: "bengt"})
    table.wait_for_phase("over")
    reveal = table.reveal()
    assert reveal.channel == table.channel and not reveal.is_ephemeral
    assert all(f"<@{person}>" in reveal.rendered_text for person in people)
    table.stored_outcome_matches_referee()

    kinds = {
        (e["type"], e["payload"].get("type") or e["payload"].get("command")) for e in link.sent
    }
    assert kinds == {("slash_commands", "/varulv"), ("interactive", "block_actions")}
    assert len(link.ack_latencies) == len(link.sent), "every envelope was acknowledged once"
    # A connection for each loss at least, each opened with its own apps.connections.open
    # (slack_sdk's websocket-client client asks for a spare URL now and then).
    assert link.hellos >= 3
    assert len(fake.calls_to("apps.connections.open")) >= link.hellos


def test_an_event_is_acknowledged_and_home_is_drawn(over_socket: SocketDeployment) -> None:
    fake, link = over_socket.fake, over_socket.link
    fake.add_user(ALVA, "alva")
    sent_before = len(link.sent)
    answer = fake.app_home_opened(ALVA)
    assert answer.status_code == 200
    envelope = link.sent[sent_before]
    assert envelope["type"] == "events_api"
    assert (envelope["retry_attempt"], envelope["retry_reason"]) == (0, "")
    assert envelope["accepts_response_payload"] is False
    fake.wait_for(lambda: fake.home_view(ALVA), what="the Home tab")


def answered_after(fake: FakeSlack, seen: int) -> Callable[[], bool]:
    """Whether Carin has more private answers than ``seen``."""
    return lambda: len(fake.ephemerals(CARIN)) > seen


def test_a_lost_connection_is_made_again_and_nothing_is_lost(
    over_socket: SocketDeployment,
) -> None:
    """Slack's end cut off with no close frame (``sever``), then closed with one (``drop``):
    each time the app connects again by itself, an event sent meanwhile waits for it (as
    Slack's retries do) and is acknowledged, a command after it is answered, and nothing is
    logged as an ERROR. How long it took is printed (``benchmarks/socket_mode.py`` measures
    it), not asserted."""
    fake, link = over_socket.fake, over_socket.link
    table = over_socket.table()
    for cut in (link.sever, link.drop, link.sever):
        greeted = link.hellos
        acknowledged = len(link.ack_latencies)
        cut_at = time.perf_counter()
        cut()
        assert fake.app_home_opened(BENGT).status_code == 200, "the event waited, then landed"
        link.wait_for_connection(greeted + 1)
        print(f"{cut.__name__}: connected again in {time.perf_counter() - cut_at:.2f} s")
        assert len(link.ack_latencies) == acknowledged + 1
        answered = len(fake.ephemerals(CARIN))
        table.command(CARIN, "help")
        table.wait(answered_after(fake, answered), "the command answered")
    logged = [json.loads(line) for line in over_socket.app.process.log.read_text().splitlines()]
    errors = [line for line in logged if line["level"] == "ERROR"]
    assert errors == [], errors


def kept_fields(fake: FakeSlack, act: Callable[[], object]) -> dict[str, str]:
    """The form fields ``act`` (a command or a click) would send, unsent."""
    return dict(parse_qsl(signed(fake, act).body, keep_blank_values=True))


def test_a_payload_bolt_could_not_route_is_refused_as_over_http(
    over_socket: SocketDeployment,
) -> None:
    """Over Socket Mode as over HTTP: a click with a NUL in its message's ts (PostgreSQL would
    refuse it), a command with one in its text, and a click whose actions are no list are
    logged and not acknowledged (Slack tells the person it failed); nothing is stored, nothing
    is logged as an ERROR, and the same click as Slack sends it is stepped."""
    fake, link = over_socket.fake, over_socket.link
    table = over_socket.table()
    table.command(ALVA)
    lobby = table.lobby()
    click = kept_fields(fake, lambda: fake.click(BENGT, lobby, lobby.button("Join").action_id))
    payload = json.loads(click["payload"])
    nul_ts = {**payload, "container": {**payload["container"], "message_ts": "1\x002.3"}}
    no_list = {**payload, "actions": "Join"}
    command = kept_fields(
        fake, lambda: fake.slash_command(CARIN, text="help", channel_id=table.channel)
    )
    before = len(link.ack_latencies)
    link.ack_timeout = ACK_TIMEOUT  # these are never acknowledged: Slack gives up after 3 s
    try:
        refused = [
            link.post_form({"payload": json.dumps(nul_ts)}),
            link.post_form({"payload": json.dumps(no_list)}),
            link.post_form({**command, "text": "he\x00lp"}),
        ]
    finally:
        link.ack_timeout = PATIENT_ACK
    assert [answer.status_code for answer in refused] == [504] * 3, "none acknowledged"
    assert len(link.ack_latencies) == before
    assert table.seat_keys() == [ALVA] and fake.ephemerals(CARIN, table.channel) == []
    assert link.post_form(click).status_code == 200
    table.wait(lambda: table.seat_keys() == [ALVA, BENGT] or None, "the click stepped")
    logged = [json.loads(line) for line in over_socket.app.process.log.read_text().splitlines()]
    warned = [
        line["message"]
        for line in logged
        if line["message"].startswith("refused a Socket Mode request")
    ]
    assert len(warned) == 3, warned
    assert "NUL" in warned[0] and "actions" in warned[1] and "NUL" in warned[2]
    assert [line for line in logged if line["level"] == "ERROR"] == []


def test_only_the_app_level_token_opens_a_connection(over_socket: SocketDeployment) -> None:
    fake = over_socket.fake
    errors = {}
    for name, token in (("bot", BOT_TOKEN), ("unknown", "xapp-1-A0001-1-forged")):
        with pytest.raises(SlackApiError) as refused:
            WebClient(base_url=fake.api_url).apps_connections_open(app_token=token)
        errors[name] = refused.value.response["error"]
    assert errors == {"bot": "not_allowed_token_type", "unknown": "invalid_auth"}
    opened = WebClient(base_url=fake.api_url).apps_connections_open(app_token=APP_TOKEN)
    assert str(opened["url"]).startswith(f"{over_socket.link.url}/link/?ticket=")


# -- the stand-in's Socket Mode, with slack_sdk's client in this process ----------------------

Handler = Callable[[BaseSocketModeClient, SocketModeRequest], None]
"""What slack_sdk calls with each envelope: the client it came on, and the request."""


@pytest.fixture
def stand_in() -> Iterator[tuple[FakeSlack, SocketMode]]:
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as fake:
        fake.add_user(ALVA, "alva")
        with SocketMode(fake, ack_timeout=PATIENT_ACK) as link:
            yield fake, link


@pytest.fixture
def connect(stand_in: tuple[FakeSlack, SocketMode]) -> Iterator[Callable[[Handler], None]]:
    """Connect slack_sdk's built-in client (what Bolt's SocketModeHandler runs), answering
    each envelope with the handler given."""
    fake, link = stand_in
    clients: list[SocketModeClient] = []

    def connected(handler: Handler) -> None:
        web = WebClient(token=BOT_TOKEN, base_url=fake.api_url)
        client = SocketModeClient(app_token=APP_TOKEN, web_client=web, ping_interval=1)
        clients.append(client)
        client.socket_mode_request_listeners.append(handler)
        client.connect()
        link.wait_for_connection(1, timeout=PATIENCE)

    yield connected
    for client in clients:
        client.auto_reconnect_enabled = False
    link.drop()  # else the client's close waits out its read timeout
    for client in clients:
        client.close()


def test_hello_comes_first_and_a_ticket_opens_one_connection(
    stand_in: tuple[FakeSlack, SocketMode],
) -> None:
    fake, link = stand_in
    url = str(WebClient(base_url=fake.api_url).apps_connections_open(app_token=APP_TOKEN)["url"])
    with websockets.sync.client.connect(url) as connection:
        hello = json.loads(connection.recv(timeout=PATIENCE))
        assert hello["type"] == "hello"
        assert hello["num_connections"] == 1
        assert hello["connection_info"] == {"app_id": fake.identity.app_id}
        assert set(hello["debug_info"]) >= {"host", "approximate_connection_time"}
        with pytest.raises(InvalidStatus) as refused:
            websockets.sync.client.connect(url)
        assert refused.value.response.status_code == 401
    assert link.hellos == 1


def test_a_command_acknowledged_with_a_message_shows_it(
    stand_in: tuple[FakeSlack, SocketMode], connect: Callable[[Handler], None]
) -> None:
    fake, link = stand_in

    def answer(client: BaseSocketModeClient, request: SocketModeRequest) -> None:
        reply = SocketModeResponse(request.envelope_id, {"text": f"seen {request.type}"})
        client.send_socket_mode_response(reply)

    connect(answer)
    assert fake.slash_command(ALVA, text="help").status_code == 200
    shown = fake.wait_for(lambda: fake.ephemerals(ALVA), what="the command's answer")
    assert [m.rendered_text for m in shown] == ["seen slash_commands"]
    assert link.sent[0]["payload"]["text"] == "help"
    assert len(link.ack_latencies) == 1


def test_an_event_not_acknowledged_in_time_comes_again(
    stand_in: tuple[FakeSlack, SocketMode], connect: Callable[[Handler], None]
) -> None:
    fake, link = stand_in
    seen: list[tuple[str, int | None, str | None]] = []

    def late_the_first_time(client: BaseSocketModeClient, request: SocketModeRequest) -> None:
        seen.append((request.envelope_id, request.retry_attempt, request.retry_reason))
        if request.retry_attempt:
            client.send_socket_mode_response(SocketModeResponse(request.envelope_id))

    link.ack_timeout = ACK_TIMEOUT  # Slack's own three seconds, so the first try runs out
    connect(late_the_first_time)
    assert fake.app_home_opened(ALVA).status_code == 200
    # A busy machine may ack a retry late too, and earn another retry: never a fresh envelope.
    attempts = list(seen)  # one more may still be arriving
    assert [(attempt, reason) for _, attempt, reason in attempts][:2] == [(0, ""), (1, "timeout")]
    assert [reason for _, _, reason in attempts[1:]] == ["timeout"] * (len(attempts) - 1)
    assert len({envelope_id for envelope_id, _, _ in attempts}) == 1, "the same envelope again"
    assert len(link.ack_latencies) == 1


def test_without_a_connection_a_command_fails_as_slack_shows_it(
    stand_in: tuple[FakeSlack, SocketMode],
) -> None:
    fake, link = stand_in
    answer = fake.slash_command(ALVA)
    assert answer.status_code == 503
    (failure,) = fake.ephemerals(ALVA)
    assert failure.rendered_text == '/varulv failed with the error "dispatch_failed"'
    assert link.sent == []


def test_sigterm_over_socket_mode_finishes_every_acknowledged_step_and_its_answer(
    postgres: str,
) -> None:
    """As over HTTP (``test_stopping``): SIGTERM while acknowledged steps wait mid-step, and
    every one of them still finishes, with its private answer, before the process exits with
    status 0 and no ERROR line."""
    url = fresh_database(postgres, "socket_stopping")
    with (
        FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN], limits=UNLIMITED) as fake,
        SocketMode(fake, ack_timeout=PATIENT_ACK) as link,
    ):
        env = {"SLACK_APP_TOKEN": APP_TOKEN, "SLACK_SIGNING_SECRET": ""}
        process = start_app(fake, url, env=env, ready=lambda _: link.hellos >= 1)
        db = create_engine(url)
        try:
            host, *people = new_people(fake, 1 + JOINING + ASKING)
            joining, asking = people[:JOINING], people[JOINING:]
            table = Table(fake, OverSocket(process), db)
            table.command(host)
            lobby = table.lobby()
            join = lobby.button("Join").action_id
            channel = table.channel
            sends = [kept_fields(fake, clicking(fake, p, lobby, join)) for p in joining]
            sends += [kept_fields(fake, commanding(fake, p, channel, "stop")) for p in asking]
            with db.connect() as holder:
                # Every step reads the games table: they all wait, acknowledged, mid-step.
                holder.execute(text("LOCK TABLE games IN ACCESS EXCLUSIVE MODE"))
                with ThreadPoolExecutor(len(sends)) as pool:
                    statuses = list(pool.map(lambda f: link.post_form(f).status_code, sends))
                assert statuses == [200] * (JOINING + ASKING), "every one acknowledged"
                with db.connect() as watcher:
                    until(lambda: waiting_on_locks(watcher) > 0, "steps waiting mid-step")
                processes.signal_group(process.process, signal.SIGTERM)
                until(lambda: STOPPING in process.log.read_text(), "the app to begin stopping")
                holder.rollback()  # the lock goes: the steps in hand go on

            assert process.process.wait(timeout=60) == 0, process.log_tail()
            seated = {seat["user_id"] for seat in table.seats()}
            assert seated == {host, *joining}, "every acknowledged Join was stepped"
            for person in asking:
                assert fake.ephemerals(person), f"{person}'s answer was sent before the exit"
            logged = [json.loads(line) for line in process.log.read_text().splitlines()]
            assert [line for line in logged if line["level"] == "ERROR"] == []
        finally:
            process.stop()
            process.kill()
            process.log.unlink(missing_ok=True)
            db.dispose()


def clicking(fake: FakeSlack, user: str, message: Message, action_id: str) -> Callable[[], object]:
    return lambda: fake.click(user, message, action_id)


def commanding(fake: FakeSlack, user: str, channel: str, words: str = "") -> Callable[[], object]:
    return lambda: fake.slash_command(user, text=words, channel_id=channel)
