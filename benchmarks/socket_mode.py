"""How long a Socket Mode app is deaf after its connection goes, by slack_sdk's client.

    python -m benchmarks.socket_mode               # what BENCHMARKS.md reports
    python -m benchmarks.socket_mode --rounds 1    # a quick look

The stand-in's Socket Mode (``slackapp.fakeslack.socket_mode``) and, in this process, each of
slack_sdk's synchronous clients as Bolt's handlers run them: the built-in one at Bolt's default
ping (10 s) and at the one ``varulv serve`` gives it (``slackapp.server.SOCKET_PING_SECONDS``),
and the websocket-client one (the test extra's ``websocket-client``) at 5 s. Each acknowledges
every envelope. Three ways to lose the connection, ``--rounds`` times each: ``sever`` (the
socket cut with no close frame, as when Slack's end vanishes), ``drop`` (closed with a close
frame) and ``refresh`` (Slack's ``disconnect`` message, ten seconds before it closes). Each
time, an event is sent at once (the stand-in holds it until a connection is there, as Slack's
retries would): the figure is the time from losing the connection to that event's
acknowledgement, through the clients' public interfaces only. Also counted: the ERROR lines
each client logged (as ``varulv serve`` logs them), and how many ``apps.connections.open``
calls (Tier 1 at Slack) each loss cost.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from collections.abc import Callable

from slack_sdk import WebClient
from slack_sdk.socket_mode.builtin import SocketModeClient as BuiltinClient
from slack_sdk.socket_mode.client import BaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.socket_mode.websocket_client import SocketModeClient as WebsocketClientClient

from slackapp.fakeslack import FakeSlack
from slackapp.fakeslack.socket_mode import APP_TOKEN, SocketMode
from slackapp.logs import quiet_libraries
from slackapp.server import SOCKET_PING_SECONDS

PERSON = "U0BENCH"
Client = BuiltinClient | WebsocketClientClient
CLIENTS: dict[str, Callable[[WebClient], Client]] = {
    "builtin, 10 s ping (Bolt's default)": lambda web: BuiltinClient(
        app_token=APP_TOKEN, web_client=web, ping_interval=10
    ),
    f"builtin, {SOCKET_PING_SECONDS} s ping (varulv serve)": lambda web: BuiltinClient(
        app_token=APP_TOKEN, web_client=web, ping_interval=SOCKET_PING_SECONDS
    ),
    "websocket-client, 5 s ping": lambda web: WebsocketClientClient(
        app_token=APP_TOKEN, web_client=web, ping_interval=5
    ),
}


class Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def acknowledge(client: BaseSocketModeClient, request: SocketModeRequest) -> None:
    client.send_socket_mode_response(SocketModeResponse(request.envelope_id))


def deaf_seconds(make: Callable[[WebClient], Client], rounds: int) -> None:
    errors = Errors()
    logging.getLogger().addHandler(errors)
    with FakeSlack("bench-secret", tokens=["xoxb-bench"]) as fake:
        fake.add_user(PERSON, "bench")
        with SocketMode(fake, wait_for_link=180) as link:
            client = make(WebClient(token="xoxb-bench", base_url=fake.api_url))
            client.socket_mode_request_listeners.append(acknowledge)
            client.connect()
            link.wait_for_connection(1)
            losses: dict[str, Callable[[], None]] = {
                "sever": link.sever,
                "drop": link.drop,
                "refresh": lambda: link.disconnect("refresh_requested"),
            }
            for name, lose in losses.items():
                seconds: list[float] = []
                errors.count = 0
                opened = len(fake.calls_to("apps.connections.open"))
                for _ in range(rounds):
                    lost_at = time.perf_counter()
                    lose()
                    answer = fake.app_home_opened(PERSON)
                    seconds.append(time.perf_counter() - lost_at)
                    assert answer.status_code == 200, answer.status_code
                    link.wait_for_connection(link.hellos, timeout=60)  # the old one gone
                opens = (len(fake.calls_to("apps.connections.open")) - opened) / rounds
                print(
                    f"  {name:8} deaf for {statistics.median(seconds):6.2f} s median, "
                    f"{max(seconds):6.2f} s at most; {errors.count / rounds:.1f} ERROR lines "
                    f"and {opens:.1f} apps.connections.open a loss",
                    flush=True,
                )
            client.auto_reconnect_enabled = False
            link.drop()
            client.close()
    logging.getLogger().removeHandler(errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)  # counted (Errors), not printed
    quiet_libraries()  # the ERROR lines counted are those varulv serve would log
    for name, make in CLIENTS.items():
        print(name, flush=True)
        deaf_seconds(make, args.rounds)


if __name__ == "__main__":
    main()
