"""The sandbox's JSON API, with the real app process behind the fake Slack.

Each person's view holds what they would see in Slack and nothing more: never another
person's DM, never someone else's ephemeral message.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psutil
import pytest
import requests
import yaml

from slackapp import cli
from slackapp.blocks.checking import get_the_referee
from slackapp.fakeslack import FakeSlack
from slackapp.fakeslack.webapi import ApiRequest
from slackapp.referee_file import referee_archive
from slackapp.sandbox import CHANNEL_ID, PEOPLE, SandboxPage
from slackapp.sandbox.run import Sandbox
from slackapp.serving import free_port
from tests import processes
from tests.databases import migrated_database
from tests.waiting import PATIENCE, until

pytestmark = pytest.mark.long(10)

ROOT = Path(__file__).resolve().parents[2]
LINNEA, NILS, SAGA, MANS = (person.id for person in PEOPLE[:4])
JSON = dict[str, Any]


@pytest.fixture(scope="module")
def sandbox(postgres: str) -> Iterator[Sandbox]:
    """The sandbox on a database of the run's server, as with ``DATABASE_URL`` (the plain
    ``varulv`` test below starts one with its embedded PostgreSQL, as a person's run does)."""
    with Sandbox(port=0, database_url=migrated_database(postgres, "sandbox")) as running:
        # A form's trigger lives as long as the tests' patience, not Slack's 3 s: a busy
        # machine may open a form late, and the expiry has a test of its own (test_fakeslack).
        running.fake.grants.trigger_ttl = PATIENCE
        yield running


class Client:
    """The page's side of the API, for one sandbox."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.url = sandbox.url

    def get(self, path: str, **params: Any) -> JSON:
        response = requests.get(f"{self.url}{path}", params=params, timeout=35)
        assert response.status_code == 200, response.text
        answer: JSON = response.json()
        return answer

    def post(self, path: str, body: JSON, expected: int = 200) -> JSON:
        response = requests.post(f"{self.url}{path}", json=body, timeout=15)
        assert response.status_code == expected, response.text
        answer: JSON = response.json()
        return answer

    def state(self, person: str) -> JSON:
        return self.get("/api/state", **{"as": person})

    def command(self, person: str, text: str) -> JSON:
        return self.post("/api/command", {"as": person, "channel": CHANNEL_ID, "text": text})

    def act(self, person: str, channel: str, message: JSON, label: str, value: Any = None) -> JSON:
        return self.post(
            "/api/act",
            {
                "as": person,
                "channel": channel,
                "ts": message["ts"],
                "action_id": action_id(message, label),
                "value": value,
            },
        )

    def wait_for(self, person: str, where: str, containing: str, timeout: float = PATIENCE) -> JSON:
        """The newest message in ``where`` ("channel" or "dm") that ``person`` sees
        containing ``containing``, following the API's long-poll until it shows up."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.state(person)
            messages: list[JSON] = state[where]["messages"]
            for message in reversed(messages):
                if containing in json.dumps(message, ensure_ascii=False):
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"{person} never saw {containing!r} in {where}:\n{self.sandbox.app_log_tail()}"
                )
            self.get("/api/changes", since=state["version"], wait=min(left, 5))


def buttons(message: JSON) -> dict[str, str]:
    """The buttons of a message as the API returns it: label to action_id, in order."""
    return {
        element["text"]["text"]: element["action_id"]
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if element["type"] == "button"
    }


def action_id(message: JSON, label: str) -> str:
    found = buttons(message)
    if label not in found:
        raise LookupError(f"no button {label!r} in {message['text']!r}; buttons: {list(found)}")
    return found[label]


@pytest.fixture
def client(sandbox: Sandbox) -> Client:
    return Client(sandbox)


def test_the_workspace_is_fika_with_six_people(client: Client) -> None:
    workspace = client.get("/api/workspace")
    assert workspace["channel"] == {"id": CHANNEL_ID, "name": "fika"}
    assert [p["name"] for p in workspace["people"]] == [p.name for p in PEOPLE]
    assert len(PEOPLE) == 6
    # Each reads Slack in their own locale and time zone: the page draws dates for them.
    zones = {p["name"]: (p["locale"], p["tz"]) for p in workspace["people"]}
    assert zones["Linnea"] == ("sv-SE", "Europe/Stockholm")
    assert zones["Tove"] == ("en-US", "America/New_York")
    assert workspace["names"][workspace["app"]["id"]] == "Varulv"
    # The composer's hint for /varulv is the one Slack shows, from the app's manifest.
    manifest = yaml.safe_load((ROOT / "manifest.yml").read_text())
    [command] = manifest["features"]["slash_commands"]
    assert workspace["command"] == {
        "command": command["command"],
        "hint": command["usage_hint"],
        "description": command["description"],
    }


def test_the_page_is_served_and_fetches_nothing_from_elsewhere(client: Client) -> None:
    page = requests.get(client.url, timeout=5)
    assert page.status_code == 200
    assert "/static/app.js" in page.text
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    for name in ("index.html", "app.js", "style.css"):
        text = requests.get(f"{client.url}/static/{name}", timeout=5).text
        assert "http://" not in text.replace("http://127.0.0.1", "")
        assert "https://" not in text
    assert requests.get(f"{client.url}/static/../run.py", timeout=5).status_code == 404
    assert requests.get(f"{client.url}/static/%2e%2e/server.py", timeout=5).status_code == 404


def test_the_referee_file_is_served_where_the_game_says(client: Client) -> None:
    """``/varulv last`` says the app serves the referee at ``/varulv_referee.pyz``; in the
    sandbox the page's address is the only one a person has, so it is served there too."""
    said = re.search(r"serves at `(/[^`]+)`", get_the_referee())
    assert said is not None
    served = requests.get(f"{client.url}{said.group(1)}", timeout=5)
    assert served.status_code == 200
    assert served.headers["Content-Type"] == "application/zip"
    assert served.content == referee_archive()


def test_long_poll_answers_at_once_when_behind_and_waits_when_not(
    client: Client, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = client.get("/api/changes", since=-1, wait=0)["version"]
    assert client.get("/api/changes", since=now, wait=0)["version"] == now
    # The message is said only once the poll has seen nothing new: it is then answered
    # with the change only if it waited for it, not at once.
    looked = threading.Event()
    wait_for = sandbox.fake.wait_for

    def watched(predicate: Callable[[], object], *args: Any, **kwargs: Any) -> object:
        def changed() -> object:
            seen = predicate()
            if not seen:
                looked.set()
            return seen

        return wait_for(changed, *args, **kwargs)

    monkeypatch.setattr(sandbox.fake, "wait_for", watched)
    answer: JSON = {}

    def poll() -> None:
        answer.update(client.get("/api/changes", since=now, wait=30))

    poller = threading.Thread(target=poll)
    poller.start()
    assert looked.wait(PATIENCE), "the long-poll looked for a change"
    client.post("/api/message", {"as": SAGA, "channel": CHANNEL_ID, "text": "fika?"})
    poller.join(PATIENCE)
    assert answer["version"] > now, "it waited, and answered with the change"


def test_a_said_message_is_seen_by_everyone(client: Client) -> None:
    client.post("/api/message", {"as": MANS, "channel": CHANNEL_ID, "text": "Kanelbullar!"})
    for person in PEOPLE:
        said = client.wait_for(person.id, "channel", "Kanelbullar!")
        assert said["user"] == MANS
        assert not said["ephemeral"]


def test_a_message_the_app_deletes_leaves_the_page(client: Client, sandbox: Sandbox) -> None:
    """chat.delete, as the app sends it for a second copy of a message: gone for everyone."""
    fake = sandbox.fake
    posted = fake.add_message(fake.api.bot_message(CHANNEL_ID, "a second copy, going", []))
    assert client.wait_for(MANS, "channel", "a second copy, going")["ts"] == posted.ts
    version = client.state(MANS)["version"]
    fake.api.chat_delete(ApiRequest("chat.delete", {"channel": CHANNEL_ID, "ts": posted.ts}))
    client.get("/api/changes", since=version, wait=5)
    for person in PEOPLE:
        shown = client.state(person.id)["channel"]["messages"]
        assert posted.ts not in [message["ts"] for message in shown]


def test_a_command_reaches_the_app_and_its_answer_is_private(client: Client) -> None:
    assert client.command(SAGA, "/varulv help") == {"ok": True}
    help_screen = client.wait_for(SAGA, "channel", "How to play Varulv")
    assert help_screen["ephemeral"] and help_screen["from_app"]
    for other in (LINNEA, NILS, MANS):
        assert "How to play Varulv" not in json.dumps(client.state(other))


def test_an_unknown_command_gets_slackbots_private_answer(client: Client) -> None:
    assert client.command(NILS, "/fika now")["error"] == "unknown_command"
    answer = client.wait_for(NILS, "channel", "is not a valid command")
    assert answer["user"] == "USLACKBOT" and answer["ephemeral"]
    assert "is not a valid command" not in json.dumps(client.state(SAGA))


def test_a_game_by_api_keeps_each_dm_to_its_person(client: Client) -> None:
    client.command(LINNEA, "/varulv")
    lobby = client.wait_for(NILS, "channel", "is setting a table")
    client.act(NILS, CHANNEL_ID, lobby, "Join")
    lobby = client.wait_for(LINNEA, "channel", "Seated (2)")
    client.act(LINNEA, CHANNEL_ID, lobby, "Fill with bots")
    lobby = client.wait_for(LINNEA, "channel", "Seated (5)")
    client.act(LINNEA, CHANNEL_ID, lobby, "Start")
    client.wait_for(LINNEA, "channel", "Night falls")

    linnea, nils = client.state(LINNEA), client.state(NILS)
    linnea_dm, nils_dm = linnea["dm"], nils["dm"]
    assert linnea_dm["id"] and nils_dm["id"] and linnea_dm["id"] != nils_dm["id"]
    nils_night = client.wait_for(NILS, "dm", "Your card")
    # Linnea's view names neither Nils's DM nor anything in it; Saga was never seated.
    assert nils_dm["id"] not in json.dumps(linnea)
    assert nils_night["ts"] not in json.dumps(linnea)
    assert client.state(SAGA)["dm"] == {"id": None, "messages": []}

    # Nobody can click in someone else's DM, even knowing where it is; its owner can.
    # (Skip, or Got it for a card that does not wake: either way the night ends in "Sleep well".)
    choice = "Skip" if "Skip" in buttons(nils_night) else "Got it"
    click = {"channel": nils_dm["id"], "ts": nils_night["ts"]}
    click["action_id"] = action_id(nils_night, choice)
    refused = client.post("/api/act", {"as": LINNEA, **click}, expected=403)
    assert refused["error"] == "not_visible"
    assert client.post("/api/act", {"as": NILS, **click}) == {"ok": True}
    client.wait_for(NILS, "dm", "Sleep well")

    # The app's private answers go to the one who asked only.
    client.command(NILS, "/varulv")
    already = client.wait_for(NILS, "channel", "A game is already running")
    assert already["ephemeral"]
    assert "A game is already running" not in json.dumps(client.state(LINNEA))

    client.command(LINNEA, "/varulv stop")
    client.wait_for(LINNEA, "channel", "stopped this game")


def test_people_are_shown_by_their_display_names_never_by_their_handles(client: Client) -> None:
    seated = (LINNEA, NILS, SAGA)
    client.command(LINNEA, "/varulv")
    for joiner, count in ((NILS, 2), (SAGA, 3)):
        client.act(
            joiner, CHANNEL_ID, client.wait_for(joiner, "channel", "setting a table"), "Join"
        )
        client.wait_for(LINNEA, "channel", f"Seated ({count})")
    lobby = client.wait_for(LINNEA, "channel", "Seated (3)")
    # The lobby names people by mention, which the page draws as Slack does: by the name the
    # workspace shows for them now, with no name asked of Slack yet.
    mentioned = re.findall(r"<@(U[A-Z0-9]+)>", json.dumps(lobby["blocks"]))
    assert set(seated) <= set(mentioned), mentioned
    shown = client.get("/api/workspace")["names"]
    assert {shown[person] for person in seated} == {"Linnea", "Nils", "Saga"}
    client.act(LINNEA, CHANNEL_ID, lobby, "Start")
    # Three of the five cards are the Seer, the Robber and the Troublemaker: someone seated
    # holds one of them, and its buttons name the others as Slack shows them.
    names = {person.id: person.name for person in PEOPLE}
    named = {
        label: person
        for person in seated
        for label in buttons(client.wait_for(person, "dm", "Your card"))
        if label not in {"Skip", "Got it", "Both centre cards"} and "centre" not in label
    }
    assert named, "no seat is named on a button"
    for label, viewer in named.items():
        assert label in {names[other] for other in seated if other != viewer}, label
    workspace = client.get("/api/workspace")
    assert {workspace["names"][person.id] for person in PEOPLE} == set(names.values())
    for person in PEOPLE:
        shown = json.dumps(client.state(person.id), ensure_ascii=False)
        assert not [p.handle for p in PEOPLE if p.handle in shown], person.name
    client.command(LINNEA, "/varulv stop")
    client.wait_for(LINNEA, "channel", "stopped this game")


class AppStandIn:
    """Takes the app's place at the fake's request URL for a while, keeping what it is sent."""

    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        self.received: list[tuple[dict[str, str], str]] = []
        received = self.received

        class Recorder(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                received.append((dict(self.headers), body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = HTTPServer(("127.0.0.1", 0), Recorder)
        self._app_url = fake.app_url

    def __enter__(self) -> AppStandIn:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.fake.app_url = f"http://127.0.0.1:{self._server.server_address[1]}/slack/events"
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.fake.app_url = self._app_url
        self._server.shutdown()
        self._server.server_close()

    def payloads(self) -> list[JSON]:
        return [json.loads(parse_qs(body)["payload"][0]) for _, body in self.received]


BUN_SELECT = {
    "type": "static_select",
    "action_id": "pick_a_bun",
    "placeholder": {"type": "plain_text", "text": "Pick a bun"},
    "options": [
        {"text": {"type": "plain_text", "text": name}, "value": value}
        for name, value in (("Kanelbulle", "kanel"), ("Semla", "semla"))
    ],
}


def test_a_select_is_sent_to_the_app_as_slack_sends_it(client: Client, sandbox: Sandbox) -> None:
    fake = sandbox.fake
    blocks = [{"type": "actions", "block_id": "buns", "elements": [BUN_SELECT]}]
    message = fake.add_message(fake.api.bot_message(CHANNEL_ID, "Pick a bun", blocks))
    pick = {"as": SAGA, "channel": CHANNEL_ID, "ts": message.ts, "action_id": "pick_a_bun"}
    with AppStandIn(fake) as app:
        assert client.post("/api/act", {**pick, "value": "semla"}) == {"ok": True}
        refused = client.post("/api/act", {**pick, "value": "pizza"}, expected=400)
    assert refused["error"] == "invalid_choice"
    [(headers, _)] = app.received
    [payload] = app.payloads()
    assert payload["type"] == "block_actions"
    assert payload["user"]["id"] == SAGA
    [action] = payload["actions"]
    assert action["action_id"] == "pick_a_bun"
    assert action["selected_option"]["value"] == "semla"
    assert payload["container"]["message_ts"] == message.ts
    assert headers["X-Slack-Signature"].startswith("v0=")
    assert headers["X-Slack-Request-Timestamp"].isdigit()


@pytest.mark.parametrize(
    ("path", "body", "status", "error"),
    [
        (
            "/api/command",
            {"as": "U0NOBODY", "channel": CHANNEL_ID, "text": "/varulv"},
            400,
            "unknown_person",
        ),
        (
            "/api/command",
            {"as": LINNEA, "channel": "D00000001", "text": "/varulv"},
            403,
            "cannot_post_here",
        ),
        ("/api/command", {"as": LINNEA, "channel": CHANNEL_ID}, 400, "no_text"),
        ("/api/message", {"as": LINNEA, "channel": CHANNEL_ID, "text": "  "}, 400, "no_text"),
        (
            "/api/act",
            {"as": LINNEA, "channel": CHANNEL_ID, "ts": "1.000001", "action_id": "x"},
            404,
            "message_not_found",
        ),
        (
            "/api/home/act",
            {"as": MANS, "block_id": "nowhere", "action_id": "usually_play"},
            404,
            "element_not_found",
        ),
        ("/api/home/act", {"as": "U0NOBODY", "action_id": "x"}, 400, "unknown_person"),
        ("/api/nothing", {}, 404, "not_found"),
    ],
)
def test_bad_requests_are_refused(
    client: Client, path: str, body: JSON, status: int, error: str
) -> None:
    assert client.post(path, body, expected=status)["error"] == error


def test_only_json_posts_are_taken(client: Client) -> None:
    # A form post is what another site's page could send without asking; it is refused.
    response = requests.post(
        f"{client.url}/api/command",
        data={"as": LINNEA, "channel": CHANNEL_ID, "text": "/varulv"},
        timeout=5,
    )
    assert response.status_code == 415
    stranger = requests.get(f"{client.url}/api/state", params={"as": "U0NOBODY"}, timeout=5)
    assert stranger.status_code == 400


# -- the command line ------------------------------------------------------------------------


def test_plain_varulv_starts_the_sandbox_without_a_bot_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[str] = []

    def sandbox(port: int | None, open_browser: bool) -> int:
        started.append("sandbox")
        return 0

    def serve() -> int:
        started.append("serve")
        return 0

    monkeypatch.setattr(cli, "_sandbox", sandbox)
    monkeypatch.setattr(cli, "_serve", serve)
    for name in ("SLACK_BOT_TOKEN", "SLACK_CLIENT_ID"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main([]) == 0
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-real")
    assert cli.main([]) == 0
    assert cli.main(["sandbox", "--port", "3001"]) == 0
    assert started == ["sandbox", "serve", "sandbox"]


def test_plain_varulv_serves_the_page_on_port_and_ctrl_c_stops_everything() -> None:
    # A short temporary folder: PostgreSQL's socket path must stay under 108 bytes.
    folder = Path(tempfile.mkdtemp(prefix="vs-"))
    folder.chmod(0o755)  # the embedded PostgreSQL drops root and must reach its folder
    port = free_port()
    env = {**os.environ, "TMPDIR": str(folder), "PORT": str(port)}
    for name in ("SLACK_BOT_TOKEN", "SLACK_CLIENT_ID", "DATABASE_URL"):
        env.pop(name, None)
    process = processes.start(
        [sys.executable, "-m", "slackapp.cli"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        address = None
        for line in process.stdout:
            if "Varulv sandbox: http://" in line:
                address = line.split("Varulv sandbox: ")[1].strip()
                break
        assert address == f"http://127.0.0.1:{port}", "the sandbox listens on PORT"
        assert "<!doctype html>" in requests.get(address, timeout=5).text.lower()
        assert requests.get(f"{address}/api/workspace", timeout=5).status_code == 200
        children = psutil.Process(process.pid).children(recursive=True)
        assert children, "the app runs as its own process"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        still_running = [
            c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE
        ]
        assert not still_running
        leftovers = [
            p.info["pid"]
            for p in psutil.process_iter(["pid", "cmdline"])
            if any(str(folder) in part for part in (p.info["cmdline"] or []))
        ]
        assert not leftovers, f"still running in {folder}: {leftovers}"
        assert not list(folder.glob("varulv-sandbox-*")), "the sandbox left its folder behind"
    finally:
        processes.end(process)
        if process.stdout is not None:
            process.stdout.close()
        shutil.rmtree(folder, ignore_errors=True)
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{address}/api/workspace", timeout=2)


# -- hostile requests ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("since=nan", "bad_since"),
        ("since=inf", "bad_since"),
        ("since=-inf", "bad_since"),
        ("since=1e400", "bad_since"),
        ("since=1.5", "bad_since"),
        ("since=abc", "bad_since"),
        ("since=", "bad_since"),
        ("since=1&wait=nan", "bad_wait"),
        ("since=1&wait=inf", "bad_wait"),
        ("since=1&wait=1e400", "bad_wait"),
        ("since=1&wait=soon", "bad_wait"),
    ],
)
def test_a_long_poll_with_a_number_that_is_not_one_is_refused(
    client: Client, query: str, error: str
) -> None:
    response = requests.get(f"{client.url}/api/changes?{query}", timeout=5)
    assert response.status_code == 400
    assert response.json() == {"ok": False, "error": error}


@pytest.fixture
def impatient_page(sandbox: Sandbox) -> Iterator[SandboxPage]:
    """The sandbox's page and API, on a port of its own, waiting one second for slow clients."""
    page = SandboxPage(sandbox.api, port=0, read_timeout=1.0).start()
    yield page
    page.stop()


def raw_exchange(page: SandboxPage, request: bytes, *, linger: float = 5.0) -> bytes:
    """Send ``request`` as it is over one connection; everything the server answers."""
    host, port = urlsplit(page.url).hostname, urlsplit(page.url).port
    with socket.create_connection((str(host), int(port or 0)), timeout=linger) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def posted(content_length: str, body: bytes = b"{}") -> bytes:
    return (
        b"POST /api/message HTTP/1.1\r\nHost: sandbox\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + content_length.encode() + b"\r\n\r\n" + body
    )


@pytest.mark.parametrize(
    ("content_length", "body", "error"),
    [
        ("abc", b"{}", "bad_content_length"),
        ("-1", b"{}", "bad_content_length"),
        ("1e3", b"{}", "bad_content_length"),
        ("99999999999", b"{}", "too_large"),
        ("100", b'{"as": "U0LINNEA"', "incomplete_body"),  # and then nothing more
    ],
)
def test_a_body_that_is_not_what_it_says_is_refused_without_hanging(
    impatient_page: SandboxPage, content_length: str, body: bytes, error: str
) -> None:
    started = time.monotonic()
    # The connection stays open on our side: the server must answer and close it by itself.
    answer = raw_exchange(impatient_page, posted(content_length, body))
    took = time.monotonic() - started
    head, _, payload = answer.partition(b"\r\n\r\n")
    status = head.split(b"\r\n")[0]
    assert status.split()[1] in (b"400", b"413"), status
    assert json.loads(payload) == {"ok": False, "error": error}
    assert b"connection: close" in head.lower()
    print(f"answered {content_length!r} in {took:.2f}s")


def test_a_request_that_never_comes_frees_its_connection(impatient_page: SandboxPage) -> None:
    # Half a request line, then silence: the server closes the connection after its timeout.
    assert raw_exchange(impatient_page, b"GET /api/workspa") == b""
    assert requests.get(f"{impatient_page.url}/api/workspace", timeout=5).status_code == 200


def test_a_body_that_is_not_json_or_not_utf8_is_refused(client: Client) -> None:
    for body in (b"\xff\xfe{}", b"[" * 100_000 + b"]" * 100_000, b"{"):
        response = requests.post(
            f"{client.url}/api/message",
            data=body[:60_000],
            headers={"Content-Type": "application/json"},
            timeout=5,
        )
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_json"


def test_a_tab_closed_mid_answer_logs_one_quiet_line(
    impatient_page: SandboxPage,
    sandbox: Sandbox,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    version = sandbox.fake.version
    host, port = urlsplit(impatient_page.url).hostname, urlsplit(impatient_page.url).port
    caplog.set_level(logging.INFO, logger="slackapp.sandbox.server")
    connection = socket.create_connection((str(host), int(port or 0)), timeout=5)
    # A long-poll that answers in half a second; the tab is gone by then (a reset, not a FIN).
    connection.sendall(
        f"GET /api/changes?since={version}&wait=0.5 HTTP/1.1\r\nHost: sandbox\r\n\r\n".encode()
    )
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()
    until(
        lambda: [r for r in caplog.records if r.name == "slackapp.sandbox.server"],
        "the server to log the page leaving",
    )
    [line] = [r for r in caplog.records if r.name == "slackapp.sandbox.server"]
    assert line.levelno == logging.INFO
    assert line.getMessage() == "the page left before its answer to /api/changes"
    assert line.exc_info is None
    assert "Traceback" not in capfd.readouterr().err
    # And the server goes on serving.
    assert requests.get(f"{impatient_page.url}/api/workspace", timeout=5).status_code == 200


# -- modals ----------------------------------------------------------------------------------


def open_settings(client: Client, person: str) -> JSON:
    """Type ``/varulv settings``; the modal the person then sees."""
    assert client.command(person, "/varulv settings") == {"ok": True}
    deadline = time.monotonic() + PATIENCE
    while (modal := client.state(person)["modal"]) is None:
        assert time.monotonic() < deadline, client.sandbox.app_log_tail()
        client.get("/api/changes", since=client.state(person)["version"], wait=2)
    opened: JSON = modal
    return opened


def entered(modal: JSON, **changes: Any) -> JSON:
    """What the page sends for ``modal``: each input's initial value, with ``changes``."""
    values: JSON = {}
    for block in modal["blocks"]:
        if block["type"] != "input":
            continue
        element = block["element"]
        if element["type"] == "checkboxes":
            value: Any = [option["value"] for option in element.get("initial_options", [])]
        elif element["type"] == "radio_buttons":
            value = (element.get("initial_option") or {}).get("value")
        else:
            value = element.get("initial_value")
        values[block["block_id"]] = {element["action_id"]: changes.get(block["block_id"], value)}
    return values


def test_settings_open_as_a_modal_for_the_one_who_asked_and_save(client: Client) -> None:
    # Linnea owns the sandbox's workspace: the others, with no table open, may not.
    assert client.command(SAGA, "/varulv settings") == {"ok": True}
    refused = client.wait_for(SAGA, "channel", "can change this channel's Varulv settings")
    assert refused["ephemeral"] and client.state(SAGA)["modal"] is None
    modal = open_settings(client, LINNEA)
    assert modal["title"]["text"] == "Varulv settings"
    assert modal["submit"]["text"] == "Save" and modal["close"]["text"] == "Cancel"
    inputs = {b["block_id"]: b["element"]["type"] for b in modal["blocks"] if b["type"] == "input"}
    assert inputs == {
        "night_seconds": "number_input",
        "day_seconds": "number_input",
        "vote_seconds": "number_input",
        "bots_allowed": "checkboxes",
        "season": "radio_buttons",
        "language": "radio_buttons",
        "open_to_everyone": "checkboxes",
    }
    for other in (SAGA, NILS, MANS):
        assert client.state(other)["modal"] is None

    # Out of bounds: the app's errors come back by block, and the modal stays open.
    submit = {"as": LINNEA, "view_id": modal["id"]}
    answer = client.post("/api/submit", {**submit, "values": entered(modal, night_seconds="5")})
    assert answer["ok"] is True
    assert set(answer["errors"]) == {"night_seconds"}
    assert "30" in answer["errors"]["night_seconds"]
    assert client.state(LINNEA)["modal"]["id"] == modal["id"]
    # A required input left empty is not sent at all, as Slack's client does.
    answer = client.post("/api/submit", {**submit, "values": entered(modal, day_seconds="")})
    assert answer["errors"] == {"day_seconds": "Please complete this required field."}

    answer = client.post("/api/submit", {**submit, "values": entered(modal, night_seconds="90")})
    assert answer == {"ok": True}
    assert client.state(LINNEA)["modal"] is None
    note = client.wait_for(NILS, "channel", "changed the Varulv settings")
    assert not note["ephemeral"] and f"<@{LINNEA}>" in note["text"]
    assert "night 1 minute 30 seconds" in note["text"]
    # Opened again, the modal shows what was saved.
    again = open_settings(client, LINNEA)
    night = next(b for b in again["blocks"] if b.get("block_id") == "night_seconds")
    assert night["element"]["initial_value"] == "90"
    assert client.post("/api/close", {"as": LINNEA, "view_id": again["id"]}) == {"ok": True}
    assert client.state(LINNEA)["modal"] is None


def test_the_settings_switch_the_channel_to_swedish_and_back(client: Client) -> None:
    """The sandbox shows what Slack would show: the language is the settings modal's."""
    modal = open_settings(client, LINNEA)
    language = next(b for b in modal["blocks"] if b.get("block_id") == "language")
    named = [option["text"]["text"] for option in language["element"]["options"]]
    assert named == ["English", "Svenska"]
    submit = {"as": LINNEA, "view_id": modal["id"]}
    answer = client.post("/api/submit", {**submit, "values": entered(modal, language="sv")})
    assert answer == {"ok": True}
    client.wait_for(NILS, "channel", "ändrade Varulvs inställningar")
    try:
        client.command(LINNEA, "/varulv")
        lobby = client.wait_for(NILS, "channel", "dukar ett bord")
        assert "Sätt dig" in buttons(lobby) and "Join" not in buttons(lobby)
        client.act(LINNEA, CHANNEL_ID, lobby, "Avbryt")
        question = client.wait_for(LINNEA, "channel", "Ställa in bordet?")
        client.act(LINNEA, CHANNEL_ID, question, "Ja, ställ in")
        client.wait_for(NILS, "channel", "ställde in bordet")
        swedish = open_settings(client, LINNEA)
        assert swedish["title"]["text"] == "Varulvs inställningar"
    finally:
        back = open_settings(client, LINNEA) if client.state(LINNEA)["modal"] is None else None
        shown = back or client.state(LINNEA)["modal"]
        again = {"as": LINNEA, "view_id": shown["id"], "values": entered(shown, language="en")}
        assert client.post("/api/submit", again) == {"ok": True}
    client.wait_for(NILS, "channel", "changed the Varulv settings")


def test_a_modal_submission_reaches_the_app_shaped_like_slacks(
    client: Client, sandbox: Sandbox
) -> None:
    modal = open_settings(client, LINNEA)
    values = entered(modal, vote_seconds="45", bots_allowed=[])
    with AppStandIn(sandbox.fake) as app:
        body = {"as": LINNEA, "view_id": modal["id"], "values": values}
        answer = client.post("/api/submit", body)
    assert answer == {"ok": True}
    [(headers, _)] = app.received
    assert headers["X-Slack-Signature"].startswith("v0=")
    [payload] = app.payloads()
    assert payload["type"] == "view_submission"
    assert payload["user"]["id"] == LINNEA and payload["user"]["team_id"] == payload["team"]["id"]
    assert payload["trigger_id"] and payload["response_urls"] == []
    view = payload["view"]
    assert view["id"] == modal["id"] and view["hash"] == modal["hash"]
    assert view["callback_id"] == "varulv_settings"
    assert view["private_metadata"] == CHANNEL_ID
    state = view["state"]["values"]
    assert state["vote_seconds"]["vote_seconds"] == {"type": "number_input", "value": "45"}
    assert state["night_seconds"]["night_seconds"]["type"] == "number_input"
    assert state["bots_allowed"]["bots_allowed"] == {"type": "checkboxes", "selected_options": []}
    # The stand-in answered with an empty body: the modal closed, as Slack closes it.
    assert client.state(LINNEA)["modal"] is None


@pytest.mark.parametrize(
    ("values", "status", "error"),
    [
        ({"night_seconds": {"night_seconds": 60}}, 400, "bad_values"),
        ({"bots_allowed": {"bots_allowed": ["everything"]}}, 400, "invalid_choice"),
        ({"nowhere": {"nothing": "1"}}, 400, "invalid_choice"),
        ("night=60", 400, "bad_values"),
    ],
)
def test_a_modal_takes_only_what_its_inputs_offer(
    client: Client, values: Any, status: int, error: str
) -> None:
    modal = open_settings(client, LINNEA)
    try:
        body = {"as": LINNEA, "view_id": modal["id"], "values": values}
        assert client.post("/api/submit", body, expected=status)["error"] == error
        # Nobody else can press in Linnea's modal, and an old view id is not the open one.
        stranger = {"as": NILS, "view_id": modal["id"], "values": {}}
        assert client.post("/api/submit", stranger, expected=404)["error"] == "view_not_found"
        gone = {"as": LINNEA, "view_id": "V0000000000"}
        assert client.post("/api/close", gone, expected=404)["error"] == "view_not_found"
    finally:
        client.post("/api/close", {"as": LINNEA, "view_id": modal["id"]})


# -- emoji -----------------------------------------------------------------------------------

STATIC = ROOT / "slackapp" / "sandbox" / "static"
NOTO = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")
"""The font emoji.ttf is cut from (Debian's fonts-noto-color-emoji), where installed."""


def test_the_page_brings_its_own_emoji_font_with_its_licence(client: Client) -> None:
    from fontTools.ttLib import TTFont

    from scripts.emoji_font import PRESENTATION, covered, page_emoji, unicode_range

    page = requests.get(client.url, timeout=5).text
    assert '<link rel="stylesheet" href="/static/emoji.css">' in page
    css = requests.get(f"{client.url}/static/emoji.css", timeout=5)
    assert css.status_code == 200 and 'url("/static/emoji.ttf")' in css.text
    assert 'font-family: "Varulv Emoji"' in css.text
    style = requests.get(f"{client.url}/static/style.css", timeout=5).text
    assert 'font-family: "Varulv Emoji", -apple-system' in style
    font_file = requests.get(f"{client.url}/static/emoji.ttf", timeout=5)
    assert font_file.headers["Content-Type"] == "font/ttf"
    licence = requests.get(f"{client.url}/static/emoji-OFL.txt", timeout=5).text
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence

    font = TTFont(io.BytesIO(font_file.content))
    drawn = covered(font)
    table = re.search(r"const EMOJI = \{(.*?)\};", (STATIC / "app.js").read_text(), re.DOTALL)
    assert table is not None
    names = dict(re.findall(r'(\w+): "([^"]+)"', table.group(1)))
    required = {ord(c) for c in "".join(names.values())} - set(PRESENTATION)
    if NOTO.exists():  # and every emoji written in the page itself (🐺, 👥…)
        required |= {ord(c) for c in page_emoji()} & covered(TTFont(NOTO))
    assert len(required) > 50
    assert required <= drawn, f"not in emoji.ttf: {[chr(c) for c in required - drawn]}"
    # Only what the page shows: nothing else of Noto's three thousand emoji.
    assert drawn - set(PRESENTATION) <= {ord(c) for c in page_emoji()}
    assert f"unicode-range: {unicode_range(drawn | set(PRESENTATION))};" in css.text

    # Every :shortcode: the app writes is one the page turns into an emoji the font draws.
    used = {
        name
        for path in (ROOT / "slackapp").rglob("*.py")
        for name in re.findall(r":([a-z0-9_+-]+):", path.read_text())
        if name not in ("func", "class", "meth", "mod", "attr", "data")
    }
    assert used, "the app writes no emoji shortcodes any more?"
    assert used <= set(names), f"shortcodes the page cannot draw: {used - set(names)}"
    assert all(ord(names[name][0]) in drawn for name in used)
