"""The sandbox's web page and the small JSON API it plays through.

The page is static (``static/``); everything it shows comes from the fake Slack, seen as one
person at a time. Each request names that person (``as``), and the answer holds only what
they would see in Slack: the channel with their own ephemerals, their own DM with the app and
their own Home tab. Acting goes through the fake exactly as a Slack client would: signed
slash commands and ``block_actions`` sent to the app's real endpoint.

    GET  /api/workspace                 the channel, the people, the names mentions resolve to
    GET  /api/changes?since=N&wait=S    long-poll: the workspace version once it is not N
    GET  /api/state?as=U                what U sees
    POST /api/command  {as, channel, text}              U types "/varulv …" in a channel
    POST /api/message  {as, channel, text}              U says something in a channel
    POST /api/act      {as, channel, ts, action_id, value?}   U clicks or picks in a message
    POST /api/home     {as}                             U opens the app's Home tab
    POST /api/home/act {as, block_id, action_id}        U clicks a button on it
    POST /api/submit   {as, view_id, values}            U submits their open modal
    POST /api/close    {as, view_id}                    U closes it
    GET  /varulv_referee.pyz            the referee file, as the app serves it

``values`` holds what the person entered in each input of the modal, by block_id and then
action_id: the text typed, the option value picked, a list of them for checkboxes.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

import requests

from slackapp.config import COMMAND, USAGE_HINT
from slackapp.fakeslack import JSON, FakeSlack, Message
from slackapp.fakeslack import blocks as block_kit
from slackapp.referee_file import REFEREE_PATH, referee_archive
from slackapp.serving import ServerThread

STATIC = Path(__file__).with_name("static")
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".ttf": "font/ttf",
    ".txt": "text/plain; charset=utf-8",
}
# The page fetches nothing but its own files and this API: no fonts, scripts or images from
# anywhere else, even when a message carries an image URL.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'"
)

CHANNEL_ID = "C0FIKA"
CHANNEL_NAME = "fika"
APP_NAME = "Varulv"
SLACKBOT = "USLACKBOT"
COMMAND_DESCRIPTION = "Open a table for one night of werewolf"
LONGEST_WAIT = 30.0
"""Seconds a long-poll may hang: under typical proxy and browser idle limits."""
READ_TIMEOUT = 10.0
"""Seconds a client may take to send a request, or leave a kept-alive connection idle."""
LARGEST_BODY = 64 * 1024
"""Bytes of JSON a request may carry: far more than a message of 4,000 characters needs."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Person:
    """Someone at the fika table, played from the page."""

    id: str
    name: str
    """The display name, as Slack shows the person (``users.info``: ``profile.display_name``)."""
    real_name: str
    handle: str
    """The legacy username Slack's payloads still carry as ``user_name``; never shown."""
    locale: str = "sv-SE"
    """Their Slack locale: the page draws dates, times and Slack's own words in it."""
    tz: str = "Europe/Stockholm"
    """Their profile's time zone: the page shows every date token on their own clock."""


PEOPLE: tuple[Person, ...] = (
    Person("U0LINNEA", "Linnea", "Linnea Holm", "lholm"),
    Person("U0NILS", "Nils", "Nils Ekberg", "nekberg", "en-GB", "Europe/London"),
    Person("U0SAGA", "Saga", "Saga Lind", "slind"),
    Person("U0MANS", "Måns", "Måns Öberg", "moberg", "sv-FI", "Europe/Helsinki"),
    Person("U0TOVE", "Tove", "Tove Sandell", "tsandell", "en-US", "America/New_York"),
    Person("U0VIGGO", "Viggo", "Viggo Strand", "vstrand"),
)
"""Six people; none shares a name with the app's bots (Astrid, Bosse, Cissi…). Most read
Slack in Swedish in Stockholm; Nils in London, Måns in Helsinki and Tove in New York read it
in their own locale, so the page shows one moment on several clocks, as Slack does."""


class RequestError(Exception):
    """A request the API refuses, with the HTTP status and a short machine-readable reason."""

    def __init__(self, status: HTTPStatus, error: str) -> None:
        super().__init__(error)
        self.status = status
        self.error = error


class SandboxApi:
    """What the page may ask of the fake, one person at a time."""

    def __init__(
        self,
        fake: FakeSlack,
        people: Sequence[Person] = PEOPLE,
        channel_id: str = CHANNEL_ID,
    ) -> None:
        self.fake = fake
        self.people = {person.id: person for person in people}
        self.channel_id = channel_id

    # -- reading -------------------------------------------------------------------

    def workspace(self) -> JSON:
        # As Slack shows a mention: the profile's name as it is now in the stand-in.
        names = {person_id: self.fake.shown_name(person_id) for person_id in self.people}
        names[self.fake.identity.bot_user_id] = APP_NAME
        names[SLACKBOT] = "Slackbot"
        return {
            "app": {"id": self.fake.identity.bot_user_id, "name": APP_NAME},
            "channel": {"id": self.channel_id, "name": self._channel_name()},
            "channels": self.fake.channels(),
            "people": [
                {"id": p.id, "name": p.name, "locale": p.locale, "tz": p.tz}
                for p in self.people.values()
            ],
            "names": names,
            "command": {
                "command": COMMAND,
                "hint": USAGE_HINT,
                "description": COMMAND_DESCRIPTION,
            },
            "version": self.fake.version,
        }

    def changes(self, since: int, wait: float) -> JSON:
        """The workspace version as soon as it differs from ``since``, or after ``wait``."""
        with contextlib.suppress(TimeoutError):
            self.fake.wait_for(lambda: self.fake.version != since, timeout=wait)
        return {"version": self.fake.version}

    def state(self, person_id: str) -> JSON:
        """Everything ``person_id`` sees, and nothing anyone else sees."""
        person = self._person(person_id)
        # Read the version first: a change while we collect shows up in the next poll.
        version = self.fake.version
        dm_id = self.fake.dm_channels().get(person.id)
        channel = self.fake.messages(self.channel_id, viewer=person.id)
        dm = self.fake.messages(dm_id, viewer=person.id) if dm_id else []
        home = self.fake.home_view(person.id)
        modals = self.fake.modals(person.id)
        return {
            "version": version,
            "person": person.id,
            "channel": {
                "id": self.channel_id,
                "name": self._channel_name(),
                "messages": [self._message(m) for m in channel],
            },
            "dm": {"id": dm_id, "messages": [self._message(m) for m in dm]},
            "home": {"blocks": home.get("blocks", [])} if home else None,
            "modal": _shown_modal(modals[-1]) if modals else None,
        }

    # -- acting --------------------------------------------------------------------

    def command(self, person_id: str, channel: str, text: str) -> JSON:
        """Type ``text`` (``/varulv …``) in ``channel``, as Slack's composer sends it."""
        person = self._person(person_id)
        self._check_channel(channel)
        command, _, words = text.strip().partition(" ")
        if not command.startswith("/"):
            raise RequestError(HTTPStatus.BAD_REQUEST, "not_a_command")
        if command != COMMAND:
            # Slack's own answer to a command no installed app provides.
            self.fake.add_message(
                Message(
                    self.fake.next_ts(),
                    channel,
                    SLACKBOT,
                    f"`{command[:40]}` is not a valid command. In Slack, all messages that "
                    'start with the "/" character are interpreted as commands.',
                    ephemeral_to=person.id,
                )
            )
            return {"ok": False, "error": "unknown_command"}
        response = self.fake.slash_command(
            person.id, COMMAND, words.strip(), channel_id=channel, user_name=person.handle
        )
        return _answer(response.status_code)

    def message(self, person_id: str, channel: str, text: str) -> JSON:
        """Say ``text`` in the channel (the app does not listen; people at the table do)."""
        person = self._person(person_id)
        self._check_channel(channel)
        if not text.strip():
            raise RequestError(HTTPStatus.BAD_REQUEST, "no_text")
        message = Message(
            self.fake.next_ts(),
            channel,
            person.id,
            text[:4000],
            team=self.fake.identity.team_id,
        )
        self.fake.add_message(message)
        return {"ok": True, "ts": message.ts}

    def act(self, person_id: str, channel: str, ts: str, action_id: str, value: Any = None) -> JSON:
        """Click a button, or pick ``value`` in a select, in a message the person can see."""
        person = self._person(person_id)
        if channel != self.channel_id and channel != self.fake.dm_channels().get(person.id):
            raise RequestError(HTTPStatus.FORBIDDEN, "not_visible")
        message = self.fake.get_message(channel, ts)
        if message is None or message.ephemeral_to not in (None, person.id):
            raise RequestError(HTTPStatus.NOT_FOUND, "message_not_found")
        try:
            message.element(action_id)
        except LookupError:
            raise RequestError(HTTPStatus.NOT_FOUND, "element_not_found") from None
        try:
            response = self.fake.click(person.id, message, action_id, value)
        except LookupError:
            # The choice is not among the element's options (or the message just vanished).
            raise RequestError(HTTPStatus.BAD_REQUEST, "invalid_choice") from None
        return _answer(response.status_code)

    def open_home(self, person_id: str) -> JSON:
        """Open the app's Home tab: Slack sends the app ``app_home_opened``."""
        person = self._person(person_id)
        return _answer(self.fake.app_home_opened(person.id).status_code)

    def act_home(self, person_id: str, block_id: str, action_id: str) -> JSON:
        """Click a button on the person's Home tab."""
        person = self._person(person_id)
        try:
            response = self.fake.click_home_button(person.id, action_id, block_id=block_id)
        except LookupError:
            raise RequestError(HTTPStatus.NOT_FOUND, "element_not_found") from None
        return _answer(response.status_code)

    def submit(self, person_id: str, view_id: str, values: Any) -> JSON:
        """Press Submit in the person's open modal, as Slack's client does.

        Like the client, refuses to send a required input left empty; the app's
        ``response_action: errors`` answer comes back as ``errors``, by block_id.
        """
        person = self._person(person_id)
        view = self._top_modal(person, view_id)
        entered = _entered(values)
        try:
            state = block_kit.entered_state(view["blocks"], entered)
        except (LookupError, ValueError):
            raise RequestError(HTTPStatus.BAD_REQUEST, "invalid_choice") from None
        missing = {
            block_id: REQUIRED_INPUT
            for block_id, action_id in _required_inputs(view["blocks"])
            if _is_empty(state.get(block_id, {}).get(action_id))
        }
        if missing:
            return {"ok": True, "errors": missing}
        response = self.fake.view_submission(person.id, dict(entered), view_id=view["id"])
        answer = _answer(response.status_code)
        if response.status_code == HTTPStatus.OK and response.content.strip():
            with contextlib.suppress(ValueError):
                body = response.json()
                if isinstance(body, dict) and body.get("response_action") == "errors":
                    answer["errors"] = body.get("errors") or {}
        return answer

    def close_modal(self, person_id: str, view_id: str) -> JSON:
        """Press Close (or Escape) in the person's open modal."""
        person = self._person(person_id)
        self._top_modal(person, view_id)
        self.fake.close_modal(person.id)
        return {"ok": True}

    # -- checks --------------------------------------------------------------------

    def _top_modal(self, person: Person, view_id: str) -> JSON:
        # Only the modal on top of the person's own stack can be pressed.
        modals = self.fake.modals(person.id)
        if not modals or modals[-1]["id"] != view_id:
            raise RequestError(HTTPStatus.NOT_FOUND, "view_not_found")
        return modals[-1]

    def _person(self, person_id: str) -> Person:
        person = self.people.get(person_id)
        if person is None:
            raise RequestError(HTTPStatus.BAD_REQUEST, "unknown_person")
        return person

    def _check_channel(self, channel: str) -> None:
        # The DM's messages tab is read-only (see manifest.yml): only the channel takes input.
        if channel != self.channel_id:
            raise RequestError(HTTPStatus.FORBIDDEN, "cannot_post_here")

    def _channel_name(self) -> str:
        return self.fake.channel_name(self.channel_id) or CHANNEL_NAME

    def _message(self, message: Message) -> JSON:
        return {
            "ts": message.ts,
            "user": message.user,
            "text": message.text,
            "blocks": message.blocks,
            "ephemeral": message.is_ephemeral,
            "edited": message.edited_ts is not None,
            "from_app": message.user == self.fake.identity.bot_user_id,
        }


REQUIRED_INPUT = "Please complete this required field."
"""What Slack's client says under a required input left empty (it sends nothing then)."""


def _shown_modal(view: JSON) -> JSON:
    """What the client needs to draw a modal: its id, title, blocks and buttons."""
    keys = ("id", "hash", "title", "blocks", "submit", "close", "callback_id")
    return {key: view.get(key) for key in keys}


def _entered(values: Any) -> dict[tuple[str, str], Any]:
    """The page's ``{block_id: {action_id: value}}`` as the fake takes it."""
    if not isinstance(values, dict):
        raise RequestError(HTTPStatus.BAD_REQUEST, "bad_values")
    entered: dict[tuple[str, str], Any] = {}
    for block_id, actions in values.items():
        if not isinstance(actions, dict):
            raise RequestError(HTTPStatus.BAD_REQUEST, "bad_values")
        for action_id, value in actions.items():
            texts = value if isinstance(value, list) else [value]
            if not all(text is None or isinstance(text, str) for text in texts):
                raise RequestError(HTTPStatus.BAD_REQUEST, "bad_values")
            entered[(block_id, action_id)] = value
    return entered


def _required_inputs(blocks: list[JSON]) -> list[tuple[str, str]]:
    return [
        (str(block.get("block_id")), str(block["element"].get("action_id")))
        for block in blocks
        if block.get("type") == "input"
        and not block.get("optional")
        and isinstance(block.get("element"), dict)
    ]


def _is_empty(entry: JSON | None) -> bool:
    """Whether a ``state.values`` entry holds nothing: no text, no choice."""
    if not entry:
        return True
    value = next((v for k, v in entry.items() if k != "type"), None)
    return value in (None, []) or (isinstance(value, str) and not value.strip())


def _answer(app_status: int) -> JSON:
    """What the page learns of the app's acknowledgement: it was taken, or it was not."""
    if app_status == HTTPStatus.OK:
        return {"ok": True}
    return {"ok": False, "error": "app_error", "app_status": app_status}


class SandboxPage:
    """The page and its API on ``host:port`` (0 picks a free port), served from a thread."""

    def __init__(
        self,
        api: SandboxApi,
        host: str = "127.0.0.1",
        port: int = 3000,
        *,
        read_timeout: float = READ_TIMEOUT,
    ) -> None:
        # Binding here, not in start(), reports a taken port before anything else starts.
        self._httpd = _Server((host, port), _Handler, api)
        self._httpd.read_timeout = read_timeout
        self._thread = ServerThread(
            functools.partial(self._httpd.serve_forever, poll_interval=0.1),
            self._httpd.shutdown,
            "sandbox-page",
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> SandboxPage:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._thread.stop()
        self._httpd.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Long-polls hold a thread each; closing the server must not wait for them.
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type[_Handler], api: SandboxApi):
        super().__init__(address, handler)
        self.api = api
        self.read_timeout = READ_TIMEOUT


Route = Callable[[SandboxApi, dict[str, str], JSON], JSON]


def _number(query: dict[str, str], name: str, default: float) -> float:
    """A finite number from the query: "nan", "inf" and "1e400" are refused like "abc"."""
    try:
        number = float(query.get(name, default))
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise RequestError(HTTPStatus.BAD_REQUEST, f"bad_{name}")
    return number


def _whole_number(query: dict[str, str], name: str, default: int) -> int:
    raw = query.get(name, str(default)).strip()
    digits = raw.removeprefix("-")
    # A version is a counter: at most 18 digits keeps int() cheap and the answer exact.
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 18:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"bad_{name}")
    return int(raw)


def _field(body: JSON, name: str) -> str:
    """A string field of the request, or "" (which every check then refuses)."""
    value = body.get(name)
    return value if isinstance(value, str) else ""


def _text(body: JSON) -> str:
    text = _field(body, "text")
    if not text:
        raise RequestError(HTTPStatus.BAD_REQUEST, "no_text")
    return text


GET_ROUTES: dict[str, Route] = {
    "/api/workspace": lambda api, query, body: api.workspace(),
    "/api/changes": lambda api, query, body: api.changes(
        _whole_number(query, "since", -1),
        max(0.0, min(_number(query, "wait", 25), LONGEST_WAIT)),
    ),
    "/api/state": lambda api, query, body: api.state(query.get("as", "")),
}
POST_ROUTES: dict[str, Route] = {
    "/api/command": lambda api, query, body: api.command(
        _field(body, "as"), _field(body, "channel"), _text(body)
    ),
    "/api/message": lambda api, query, body: api.message(
        _field(body, "as"), _field(body, "channel"), _text(body)
    ),
    "/api/act": lambda api, query, body: api.act(
        _field(body, "as"),
        _field(body, "channel"),
        _field(body, "ts"),
        _field(body, "action_id"),
        body.get("value"),
    ),
    "/api/home": lambda api, query, body: api.open_home(_field(body, "as")),
    "/api/home/act": lambda api, query, body: api.act_home(
        _field(body, "as"), _field(body, "block_id"), _field(body, "action_id")
    ),
    "/api/submit": lambda api, query, body: api.submit(
        _field(body, "as"), _field(body, "view_id"), body.get("values", {})
    ),
    "/api/close": lambda api, query, body: api.close_modal(
        _field(body, "as"), _field(body, "view_id")
    ),
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        # A client that stops sending (or idles on a kept-alive connection) frees its thread.
        super().setup()
        self.connection.settimeout(cast(_Server, self.server).read_timeout)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path in GET_ROUTES:
            self._api(GET_ROUTES[url.path], url.query, {})
        elif url.path == REFEREE_PATH:
            # `/varulv last` says the app serves the referee here: in the sandbox the page's
            # address is the only one a person has.
            self._send(HTTPStatus.OK, referee_archive(), "application/zip")
        else:
            self._static(url.path)

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        raw = self._body()
        if raw is None:
            return
        route = POST_ROUTES.get(url.path)
        if route is None:
            self._send_json(HTTPStatus.NOT_FOUND, {"ok": False, "error": "not_found"})
            return
        # A JSON body is a CORS "non-simple" request, so other sites' pages cannot post here.
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            self._send_json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"ok": False, "error": "not_json"})
            return
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past reason
            body = None
        if not isinstance(body, dict):
            self._send_json(HTTPStatus.BAD_REQUEST, {"ok": False, "error": "invalid_json"})
            return
        self._api(route, url.query, body)

    def _body(self) -> bytes | None:
        """The request's body, or None once a refusal is sent (the connection then closes)."""
        declared = self.headers.get("Content-Length") or "0"
        length = int(declared) if declared.isascii() and declared.isdigit() else -1
        if length < 0:
            self._refuse(HTTPStatus.BAD_REQUEST, "bad_content_length")
            return None
        if length > LARGEST_BODY:
            self._refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "too_large")
            return None
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            raw = b""
        if len(raw) < length:  # the client stopped sending before its Content-Length
            self._refuse(HTTPStatus.BAD_REQUEST, "incomplete_body")
            return None
        return raw

    def _refuse(self, status: HTTPStatus, error: str) -> None:
        # Whatever is left of the body is unread, so the connection cannot carry another request.
        self.close_connection = True
        self._send_json(status, {"ok": False, "error": error})

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the address and nothing else."""

    def _api(self, route: Route, query_string: str, body: JSON) -> None:
        api = cast(_Server, self.server).api
        query = {
            key: values[0] for key, values in parse_qs(query_string, keep_blank_values=True).items()
        }
        try:
            answer = route(api, query, body)
        except RequestError as error:
            self._send_json(error.status, {"ok": False, "error": error.error})
            return
        except requests.RequestException:
            # The app did not answer the fake's request at all (stopped, or too slow).
            self._send_json(HTTPStatus.BAD_GATEWAY, {"ok": False, "error": "app_unreachable"})
            return
        self._send_json(HTTPStatus.OK, answer)

    def _static(self, path: str) -> None:
        name = "index.html" if path in ("/", "/index.html") else path.removeprefix("/static/")
        file = STATIC / name
        # Only the files in static/ itself: no subfolders, no "..".
        if "/" in name or file.suffix not in STATIC_TYPES or not file.is_file():
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")
            return
        self._send(HTTPStatus.OK, file.read_bytes(), STATIC_TYPES[file.suffix])

    def _send_json(self, status: HTTPStatus, answer: JSON) -> None:
        self._send(status, json.dumps(answer).encode(), "application/json; charset=utf-8")

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        self.send_header("X-Content-Type-Options", "nosniff")
        if self.close_connection:
            self.send_header("Connection", "close")
        try:
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # A tab closed (or reloaded) while its answer was on the way: nothing to mend.
            self.close_connection = True
            log.info("the page left before its answer to %s", self.path.split("?")[0])
