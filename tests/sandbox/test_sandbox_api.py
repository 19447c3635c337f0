"""The sandbox's JSON API, with the real app process behind the fake Slack.

Each person's view holds what they would see in Slack and nothing more: never another
person's DM, never someone else's ephemeral message.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import psutil
import pytest
import requests
import yaml

from slackapp import cli
from slackapp.fakeslack import FakeSlack
from slackapp.sandbox import CHANNEL_ID, PEOPLE
from slackapp.sandbox.run import Sandbox
from tests import processes

ROOT = Path(__file__).resolve().parents[2]
LINNEA, NILS, SAGA, MANS = (person.id for person in PEOPLE[:4])
JSON = dict[str, Any]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(port=0) as running:
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

    def wait_for(self, person: str, where: str, containing: str, timeout: float = 20) -> JSON:
        """The newest message in ``where`` ("channel" or "dm") that ``person`` sees
        containing ``containing``, following the API's long-poll until it shows up."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.state(person)
            for message in reversed(state[where]["messages"]):
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


def test_long_poll_answers_at_once_when_behind_and_waits_when_not(client: Client) -> None:
    now = client.get("/api/changes", since=-1, wait=0)["version"]
    assert client.get("/api/changes", since=now, wait=0)["version"] == now
    answer: JSON = {}

    def poll() -> None:
        answer.update(client.get("/api/changes", since=now, wait=20))

    poller = threading.Thread(target=poll)
    poller.start()
    client.post("/api/message", {"as": SAGA, "channel": CHANNEL_ID, "text": "fika?"})
    poller.join(timeout=25)
    assert answer["version"] > now


def test_a_said_message_is_seen_by_everyone(client: Client) -> None:
    client.post("/api/message", {"as": MANS, "channel": CHANNEL_ID, "text": "Kanelbullar!"})
    for person in PEOPLE:
        said = client.wait_for(person.id, "channel", "Kanelbullar!")
        assert said["user"] == MANS
        assert not said["ephemeral"]


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
    monkeypatch.setattr(cli, "_sandbox", lambda port, open_browser: started.append("sandbox") or 0)
    monkeypatch.setattr(cli, "_serve", lambda: started.append("serve") or 0)
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
