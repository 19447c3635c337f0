"""The fake Slack behaves like Slack for the real slack_sdk and a real Bolt app.

Everything goes over real HTTP: slack_sdk's WebClient calls the fake's Web API,
and the fake's signed requests reach small WSGI apps served from a thread.
"""

from __future__ import annotations

import io
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit
from wsgiref.simple_server import WSGIServer
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

import pytest
import requests
from slack_bolt import Ack, App, Respond, Say
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.webhook import WebhookClient

from slackapp.fakeslack import SLACK, UNLIMITED, FakeSlack, Message
from slackapp.fakeslack.limits import METHOD_TIERS, TIERS, Limiter
from slackapp.fakeslack.webapi import Answerer, ApiAnswer, ApiRequest, checked_blocks
from slackapp.serving import wsgi_server
from tests import faults
from tests.waiting import PATIENCE

pytestmark = pytest.mark.long(7)

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
TOKEN = "xoxb-test"
CHANNEL = "C0001"

LOBBY_BLOCKS: list[dict[str, Any]] = [
    {"type": "section", "text": {"type": "mrkdwn", "text": "*Fika werewolf* — who plays?"}},
    {
        "type": "actions",
        "block_id": "lobby",
        "elements": [
            {
                "type": "button",
                "action_id": "join",
                "text": {"type": "plain_text", "text": "Join"},
                "value": "seat",
                "style": "primary",
            },
            {
                "type": "static_select",
                "action_id": "deck",
                "placeholder": {"type": "plain_text", "text": "Deck"},
                "options": [
                    {"text": {"type": "plain_text", "text": "Classic"}, "value": "classic"},
                    {"text": {"type": "plain_text", "text": "Chaos"}, "value": "chaos"},
                ],
            },
        ],
    },
]

VOTE_MODAL: dict[str, Any] = {
    "type": "modal",
    "callback_id": "vote",
    "title": {"type": "plain_text", "text": "Vote"},
    "submit": {"type": "plain_text", "text": "Vote"},
    "blocks": [
        {
            "type": "input",
            "block_id": "target",
            "label": {"type": "plain_text", "text": "Who is the werewolf?"},
            "element": {"type": "users_select", "action_id": "suspect"},
        },
        {
            "type": "input",
            "block_id": "why",
            "optional": True,
            "label": {"type": "plain_text", "text": "Why?"},
            "element": {"type": "plain_text_input", "action_id": "reason"},
        },
    ],
}


# -- serving WSGI apps for the fake to call ---------------------------------------


@pytest.fixture
def serve() -> Iterator[Callable[[WSGIApplication], str]]:
    """Serve WSGI apps on free ports for the test; yields a function returning each URL."""
    servers: list[WSGIServer] = []

    def start(app: WSGIApplication) -> str:
        server = wsgi_server("127.0.0.1", 0, app)
        serving = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        serving.start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}/slack/events"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@dataclass
class Received:
    """One request the recording app got."""

    headers: dict[str, str]
    body: bytes

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode(), keep_blank_values=True).items()}

    def payload(self) -> dict[str, Any]:
        decoded: dict[str, Any] = json.loads(self.form()["payload"])
        return decoded


@dataclass
class RecordingApp:
    """A stand-in app that records requests and acks with a chosen body."""

    ack_body: bytes = b""
    ack_type: str = "text/plain"
    received: list[Received] = field(default_factory=list)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> list[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        headers = {
            key[5:].replace("_", "-").title(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        headers["Content-Type"] = environ.get("CONTENT_TYPE", "")
        self.received.append(Received(headers, environ["wsgi.input"].read(length)))
        start_response("200 OK", [("Content-Type", self.ack_type)])
        return [self.ack_body]

    def ack_with(self, body: dict[str, Any]) -> None:
        self.ack_body, self.ack_type = json.dumps(body).encode(), "application/json"


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack(SECRET, users={"U1": "alice", "U2": "bob", "U3": "cecilia"}) as running:
        yield running


@pytest.fixture
def web(fake: FakeSlack) -> WebClient:
    return WebClient(base_url=fake.api_url, token=TOKEN)


@pytest.fixture
def recorder(fake: FakeSlack, serve: Callable[[WSGIApplication], str]) -> RecordingApp:
    app = RecordingApp()
    fake.app_url = serve(app)
    return app


def post_lobby(fake: FakeSlack, web: WebClient) -> Message:
    """Post the lobby as the app would; the message as the fake stored it."""
    posted = web.chat_postMessage(channel=CHANNEL, text="Who plays?", blocks=LOBBY_BLOCKS)
    return fake.message(CHANNEL, posted["ts"])


def slack_error(method: Callable[..., object], *args: Any, **kwargs: Any) -> str:
    """The error code a Web API call fails with."""
    with pytest.raises(SlackApiError) as failure:
        method(*args, **kwargs)
    return str(failure.value.response["error"])


# -- the Web API ------------------------------------------------------------------


def test_api_url_is_what_slack_sdk_appends_method_names_to(fake: FakeSlack) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/api/", fake.api_url)


def test_auth_test_names_the_bot(web: WebClient) -> None:
    answer = web.auth_test()
    assert answer["ok"] is True
    assert (answer["user_id"], answer["team_id"], answer["bot_id"]) == ("UBOT", "T0001", "B0001")


def test_missing_unknown_and_revoked_tokens_are_refused(fake: FakeSlack) -> None:
    assert slack_error(WebClient(base_url=fake.api_url).auth_test) == "not_authed"
    assert slack_error(WebClient(base_url=fake.api_url, token="xoxb-nope").auth_test) == (
        "invalid_auth"
    )
    faults.revoke_tokens(fake, TOKEN)
    assert slack_error(WebClient(base_url=fake.api_url, token=TOKEN).auth_test) == "token_revoked"


def test_token_may_come_as_a_form_parameter(fake: FakeSlack) -> None:
    answer = requests.post(fake.api_url + "auth.test", data={"token": TOKEN}, timeout=5).json()
    assert answer["ok"] is True
    assert fake.calls_to("auth.test")[-1].token == TOKEN


def test_unknown_method_is_reported(web: WebClient) -> None:
    assert slack_error(web.api_call, "chat.teleport") == "unknown_method"


def test_post_message_returns_unique_increasing_ts_and_the_stored_message(
    fake: FakeSlack, web: WebClient
) -> None:
    answers = [web.chat_postMessage(channel=CHANNEL, text=f"round {n}") for n in range(5)]
    stamps = [a["ts"] for a in answers]
    assert all(re.fullmatch(r"\d{10}\.\d{6}", ts) for ts in stamps)
    assert [float(ts) for ts in stamps] == sorted({float(ts) for ts in stamps})
    assert answers[0]["channel"] == CHANNEL
    assert answers[0]["message"]["text"] == "round 0"
    assert answers[0]["message"]["user"] == "UBOT"
    assert [m.text for m in fake.messages(CHANNEL)] == [f"round {n}" for n in range(5)]


def test_slack_gives_blocks_without_ids_their_ids(fake: FakeSlack, web: WebClient) -> None:
    message = post_lobby(fake, web)
    first_block_id = message.blocks[0]["block_id"]
    assert first_block_id
    assert message.button("Join").block_id == "lobby"
    assert message.blocks[1]["elements"][0]["action_id"] == "join"


def test_form_encoded_calls_carry_blocks_as_json_strings(fake: FakeSlack) -> None:
    form = {"token": TOKEN, "channel": CHANNEL, "text": "lobby", "blocks": json.dumps(LOBBY_BLOCKS)}
    answer = requests.post(fake.api_url + "chat.postMessage", data=form, timeout=5).json()
    assert answer["ok"] is True
    stored = fake.latest(CHANNEL)
    assert stored is not None
    assert stored.button("Join").value == "seat"


def test_multipart_calls_are_understood(web: WebClient) -> None:
    # slack_sdk switches to multipart/form-data as soon as a call carries files.
    answer = web.api_call("users.info", data={"user": "U2"}, files={"f": io.BytesIO(b"x")})
    assert answer["user"]["name"] == "bob"


def test_message_without_content_or_with_bad_blocks_is_refused(web: WebClient) -> None:
    no_content = {"channel": CHANNEL}
    assert slack_error(web.api_call, "chat.postMessage", json=no_content) == "no_text"
    twice = [{"type": "divider", "block_id": "x"}, {"type": "divider", "block_id": "x"}]
    assert slack_error(web.chat_postMessage, channel=CHANNEL, text="x", blocks=twice) == (
        "invalid_blocks"
    )
    too_long = [{"type": "section", "text": {"type": "mrkdwn", "text": "a" * 3001}}]
    assert slack_error(web.chat_postMessage, channel=CHANNEL, text="x", blocks=too_long) == (
        "invalid_blocks"
    )
    assert slack_error(web.chat_postMessage, channel="C9999", text="hi") == ("channel_not_found")


def test_dm_channel_is_stable_per_user_and_user_ids_post_into_it(
    fake: FakeSlack, web: WebClient
) -> None:
    first = web.conversations_open(users="U1")["channel"]["id"]
    again = web.conversations_open(users="U1")["channel"]["id"]
    other = web.conversations_open(users="U2")["channel"]["id"]
    assert first == again != other
    assert first.startswith("D")
    posted = web.chat_postMessage(channel="U1", text="You are the Seer.")
    assert posted["channel"] == first
    web.chat_postMessage(channel=other, text="You are a Werewolf.")
    assert [m.text for m in fake.dm_messages("U1")] == ["You are the Seer."]
    assert [m.text for m in fake.dm_messages("U2")] == ["You are a Werewolf."]
    # Slack's chat.update names a DM by its D id: "ensure that this value is a DM ID".
    assert slack_error(web.chat_update, channel="U1", ts=posted["ts"], text="x") == (
        "channel_not_found"
    )
    web.chat_update(channel=first, ts=posted["ts"], text="You were the Seer.")
    assert [m.text for m in fake.dm_messages("U1")] == ["You were the Seer."]


def test_unreachable_and_unknown_users_cannot_be_messaged(fake: FakeSlack, web: WebClient) -> None:
    faults.set_unreachable(fake, "U3")
    assert slack_error(web.conversations_open, users="U3") == "cannot_dm_bot"
    assert slack_error(web.chat_postMessage, channel="U3", text="hi") == "cannot_dm_bot"
    assert slack_error(web.conversations_open, users="U404") == "user_not_found"


def test_a_channel_nobody_added_the_bot_to_refuses_its_posts_until_it_is_invited(
    fake: FakeSlack, web: WebClient, recorder: RecordingApp
) -> None:
    """As in Slack: the bot cannot write where it is not a member (a private channel it cannot
    even see), though a slash command typed there reaches the app, and its answer the person."""
    fake.add_channel("C0PUBLIC", "lunch", bot_in=False)
    fake.add_channel("C0SECRET", "secret", bot_in=False, private=True)
    assert slack_error(web.chat_postMessage, channel="C0PUBLIC", text="hi") == "not_in_channel"
    assert slack_error(web.chat_postMessage, channel="C0SECRET", text="hi") == "channel_not_found"
    assert set(fake.channels()) == {CHANNEL}, "the channels the bot is in"
    recorder.ack_with({"text": "Only you see this"})
    fake.slash_command("U1", channel_id="C0SECRET")
    (request,) = recorder.received
    assert request.form()["channel_id"] == "C0SECRET"
    assert [m.text for m in fake.ephemerals("U1", "C0SECRET")] == ["Only you see this"]

    fake.invite_bot("C0SECRET")  # /invite @Varulv
    posted = web.chat_postMessage(channel="C0SECRET", text="hi")
    assert [m.ts for m in fake.messages("C0SECRET")] == [posted["ts"]]
    assert slack_error(web.chat_postMessage, channel="C0PUBLIC", text="hi") == "not_in_channel"


def test_chat_update_edits_in_place_and_keeps_what_is_not_given(
    fake: FakeSlack, web: WebClient
) -> None:
    """As Slack's chat.update page says: the blocks are kept only when neither they nor a new
    text are given; a new text alone removes them."""
    lobby = post_lobby(fake, web)
    web.chat_postMessage(channel=CHANNEL, text="later message")
    with pytest.warns(UserWarning, match="text"):  # slack_sdk asks for a fallback text
        answer = web.chat_update(channel=CHANNEL, ts=lobby.ts, blocks=LOBBY_BLOCKS[:1])
    assert (answer["ts"], answer["text"]) == (lobby.ts, "Who plays?"), "the text stays"
    first, second = fake.messages(CHANNEL)
    assert (first.ts, first.text, second.text) == (lobby.ts, "Who plays?", "later message")
    assert first.buttons() == [] and first.edited_ts is not None
    web.chat_update(channel=CHANNEL, ts=lobby.ts, text="Lobby", blocks=LOBBY_BLOCKS)
    web.chat_update(channel=CHANNEL, ts=lobby.ts, text="Closed")
    assert (fake.messages(CHANNEL)[0].text, fake.messages(CHANNEL)[0].blocks) == ("Closed", [])
    assert slack_error(web.chat_update, channel=CHANNEL, ts=lobby.ts, text="x" * 4001) == (
        "msg_too_long"
    )
    missing = "1.000001"
    assert slack_error(web.chat_update, channel=CHANNEL, ts=missing, text="x") == (
        "message_not_found"
    )


def test_an_archived_channel_refuses_a_post_with_is_archived_and_a_redraw_with_is_inactive(
    fake: FakeSlack, web: WebClient
) -> None:
    """As Slack's chat.update page says: a message "cannot be edited within a frozen, archived
    or deleted channel" (``is_inactive``); chat.postMessage's word there is ``is_archived``."""
    lobby = post_lobby(fake, web)
    fake.archive_channel(CHANNEL)
    assert slack_error(web.chat_postMessage, channel=CHANNEL, text="hi") == "is_archived"
    assert slack_error(web.chat_update, channel=CHANNEL, ts=lobby.ts, text="x") == "is_inactive"
    assert fake.messages(CHANNEL)[0].text == lobby.text


def test_chat_delete_removes_only_the_bots_own_messages(fake: FakeSlack, web: WebClient) -> None:
    lobby = post_lobby(fake, web)
    later = web.chat_postMessage(channel=CHANNEL, text="later message")
    said = fake.add_message(
        Message(ts=fake.next_ts(), channel=CHANNEL, user="U1", text="a person's words")
    )
    answer = web.chat_delete(channel=CHANNEL, ts=lobby.ts)
    assert (answer["channel"], answer["ts"]) == (CHANNEL, lobby.ts)
    assert [m.ts for m in fake.messages(CHANNEL)] == [later["ts"], said.ts]
    assert slack_error(web.chat_delete, channel=CHANNEL, ts=lobby.ts) == "message_not_found"
    assert slack_error(web.chat_delete, channel=CHANNEL, ts=said.ts) == "cant_delete_message"
    assert [m.ts for m in fake.messages(CHANNEL)] == [later["ts"], said.ts]


def test_mentions_show_as_names_in_mrkdwn_only(fake: FakeSlack, web: WebClient) -> None:
    fake.add_user("U0JANE", "jsmith", display_name="Jane", real_name="Jane Smith")
    blocks = [
        {"type": "section", "text": {"type": "mrkdwn", "text": "<@U0JANE> sat down"}},
        {"type": "header", "text": {"type": "plain_text", "text": "<@U0JANE>"}},
    ]
    posted = web.chat_postMessage(channel=CHANNEL, text="<@U0JANE> sat down", blocks=blocks)
    message = fake.message(CHANNEL, str(posted["ts"]))
    assert fake.shown_text(message) == "@Jane sat down\n<@U0JANE>"
    fake.add_user("U0JANE", display_name="")  # no display name: Slack shows the real name
    assert fake.shown_text(message).startswith("@Jane Smith sat down")
    plain = web.chat_postMessage(channel=CHANNEL, text="hello <@U0JANE|whoever>")
    assert fake.shown_text(fake.message(CHANNEL, str(plain["ts"]))) == "hello @Jane Smith"


def test_ephemeral_messages_are_seen_only_by_their_user(fake: FakeSlack, web: WebClient) -> None:
    web.chat_postMessage(channel=CHANNEL, text="public")
    ephemeral = fake.add_message(fake.api.bot_message(CHANNEL, "only you", [], ephemeral_to="U1"))
    assert [m.text for m in fake.messages(CHANNEL)] == ["public"]
    assert [m.text for m in fake.messages(CHANNEL, viewer="U1")] == ["public", "only you"]
    assert [m.text for m in fake.messages(CHANNEL, viewer="U2")] == ["public"]
    assert [m.text for m in fake.ephemerals("U1")] == ["only you"]
    assert fake.ephemerals("U2") == []
    # Slack's API cannot edit ephemeral messages.
    assert slack_error(web.chat_update, channel=CHANNEL, ts=ephemeral.ts, text="x") == (
        "message_not_found"
    )


def test_users_info_gives_a_minimal_user(web: WebClient) -> None:
    user = web.users_info(user="U1")["user"]
    assert (user["id"], user["name"], user["is_bot"]) == ("U1", "alice", False)
    assert user["profile"]["display_name"] == "alice"
    assert slack_error(web.users_info, user="U404") == "user_not_found"


def test_users_info_gives_the_profiles_display_and_real_name(
    fake: FakeSlack, web: WebClient
) -> None:
    fake.add_user("U0JANE", "jsmith", display_name="Jane", real_name="Jane Smith")
    user = web.users_info(user="U0JANE")["user"]
    assert user["name"] == "jsmith" and user["real_name"] == "Jane Smith"
    assert (user["profile"]["display_name"], user["profile"]["real_name"]) == ("Jane", "Jane Smith")
    fake.add_user("U0JANE", display_name="")  # cleared, as Slack allows: the real name stays
    profile = web.users_info(user="U0JANE")["user"]["profile"]
    assert (profile["display_name"], profile["real_name"]) == ("", "Jane Smith")
    fake.add_user("U0JANE")  # a later sighting keeps the handle and the profile
    assert web.users_info(user="U0JANE")["user"]["name"] == "jsmith"


def test_users_info_gives_each_persons_own_time_zone(fake: FakeSlack, web: WebClient) -> None:
    assert web.users_info(user="U1")["user"]["tz"] == "Europe/Stockholm"
    fake.add_user("U0TOVE", "tsandell", tz="America/New_York")
    user = web.users_info(user="U0TOVE")["user"]
    assert user["tz"] == "America/New_York"
    assert user["tz_offset"] in (-5 * 3600, -4 * 3600)  # winter or summer time


def test_home_tab_publishes_keep_their_view_id(fake: FakeSlack, web: WebClient) -> None:
    home: dict[str, Any] = {
        "type": "home",
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "1"}}],
    }
    first = web.views_publish(user_id="U1", view=home)["view"]
    home["blocks"][0]["text"]["text"] = "2"
    second = web.views_publish(user_id="U1", view=home)["view"]
    assert first["id"] == second["id"]
    assert first["hash"] != second["hash"]
    shown = fake.home_view("U1")
    assert shown is not None
    assert shown["blocks"][0]["text"]["text"] == "2"
    assert fake.home_view("U2") is None


def test_modals_need_a_live_trigger_id_and_one_at_a_time(fake: FakeSlack, web: WebClient) -> None:
    trigger_id = fake.grants.issue_trigger("U1")
    opened = web.views_open(trigger_id=trigger_id, view=VOTE_MODAL)["view"]
    assert opened["type"] == "modal"
    assert opened["root_view_id"] == opened["id"]
    assert [v["id"] for v in fake.modals("U1")] == [opened["id"]]
    another = fake.grants.issue_trigger("U1")
    assert slack_error(web.views_open, trigger_id=another, view=VOTE_MODAL) == ("view_already_open")
    assert slack_error(web.views_open, trigger_id="123.456.789", view=VOTE_MODAL) == (
        "invalid_trigger_id"
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", {"type": "plain_text", "text": "x" * 25}),
        ("submit", {"type": "plain_text", "text": "x" * 25}),
        ("close", {"type": "plain_text", "text": "x" * 25}),
        ("submit", None),  # the modal holds input blocks
        ("private_metadata", "x" * 3001),
        ("callback_id", "x" * 256),
    ],
)
def test_a_modal_beyond_slacks_limits_is_refused_and_its_trigger_kept(
    fake: FakeSlack, web: WebClient, field: str, value: Any
) -> None:
    """Slack's modal reference: title, submit and close of at most 24 characters, a submit
    wherever there is an input block, private_metadata of at most 3,000 characters and a
    callback_id of at most 255."""
    trigger_id = fake.grants.issue_trigger("U1")
    longest = dict(
        VOTE_MODAL,
        title={"type": "plain_text", "text": "x" * 24},
        close={"type": "plain_text", "text": "x" * 24},
        private_metadata="x" * 3000,
        callback_id="x" * 255,
    )
    assert slack_error(web.views_open, trigger_id=trigger_id, view={**longest, field: value}) == (
        "invalid_arguments"
    )
    assert web.views_open(trigger_id=trigger_id, view=longest)["ok"], "at the limits: opened"
    home = {"type": "home", "blocks": [], "private_metadata": "x" * 3001}
    assert slack_error(web.views_publish, user_id="U1", view=home) == "invalid_arguments"


def test_trigger_ids_expire_like_slacks() -> None:
    with FakeSlack(SECRET, users={"U1": "alice"}, trigger_ttl=-1.0) as fake:  # born expired
        web = WebClient(base_url=fake.api_url, token=TOKEN)
        trigger_id = fake.grants.issue_trigger("U1")
        assert slack_error(web.views_open, trigger_id=trigger_id, view=VOTE_MODAL) == (
            "expired_trigger_id"
        )


def test_a_trigger_id_opens_one_modal_only(fake: FakeSlack, web: WebClient) -> None:
    trigger_id = fake.grants.issue_trigger("U1")
    # A view Slack refuses leaves the trigger unused; the first good call exchanges it.
    broken = dict(VOTE_MODAL, title=None)
    assert slack_error(web.views_open, trigger_id=trigger_id, view=broken) == "invalid_arguments"
    opened = web.views_open(trigger_id=trigger_id, view=VOTE_MODAL)["view"]
    fake.close_modal("U1")
    assert slack_error(web.views_open, trigger_id=trigger_id, view=VOTE_MODAL) == (
        "exchanged_trigger_id"
    )
    assert fake.modals("U1") == []
    assert opened["id"]


def test_a_submission_fills_state_by_block_and_action(fake: FakeSlack, web: WebClient) -> None:
    # Two inputs with the same action_id, told apart by their blocks.
    text_input = {"type": "plain_text_input", "action_id": "text"}
    inputs = [
        {"type": "input", "block_id": block_id, "label": VOTE_MODAL["title"], "element": text_input}
        for block_id in ("first", "second")
    ]
    form = dict(VOTE_MODAL, blocks=inputs)
    web.views_open(trigger_id=fake.grants.issue_trigger("U1"), view=form)
    with fake.keeping_requests() as kept:
        fake.view_submission("U1", {("first", "text"): "a", ("second", "text"): None})
    [request] = kept
    payload = json.loads(parse_qs(request.body)["payload"][0])
    assert payload["view"]["state"]["values"] == {
        "first": {"text": {"type": "plain_text_input", "value": "a"}},
        "second": {"text": {"type": "plain_text_input", "value": None}},
    }


def test_oauth_install_gives_a_working_bot_token(fake: FakeSlack) -> None:
    anonymous = WebClient(base_url=fake.api_url)
    install = (
        "https://slack.com/oauth/v2/authorize?client_id=1000000000.2000000000"
        "&scope=commands,chat:write&state=s-42&redirect_uri=https://varulv.example/slack/oauth"
    )
    redirect = urlsplit(fake.approve_install(install, user_id="U9"))
    query = {k: v[0] for k, v in parse_qs(redirect.query).items()}
    assert redirect.path == "/slack/oauth"
    assert query["state"] == "s-42"
    credentials = {"client_id": "1000000000.2000000000", "client_secret": "fake-client-secret"}
    answer = anonymous.oauth_v2_access(code=query["code"], **credentials)
    assert answer["token_type"] == "bot"
    assert answer["team"] == {"name": "Varulv Test", "id": "T0001"}
    assert answer["authed_user"]["id"] == "U9"
    assert answer["bot_user_id"] == "UBOT"
    installed = WebClient(base_url=fake.api_url, token=answer["access_token"])
    assert installed.auth_test()["ok"] is True
    code = query["code"]
    assert slack_error(anonymous.oauth_v2_access, code=code, **credentials) == ("invalid_code")
    wrong = dict(credentials, client_secret="guess")
    assert slack_error(anonymous.oauth_v2_access, code="x", **wrong) == ("bad_client_secret")


def test_with_token_rotation_tokens_expire_and_a_refresh_token_renews_them_once() -> None:
    with FakeSlack(SECRET, tokens=(), token_lifetime=1) as fake:
        # Slack's clock is the test's: a token lives its second however slow the machine.
        now = time.time()
        fake.grants.clock = lambda: now
        anonymous = WebClient(base_url=fake.api_url)
        install = (
            "https://slack.com/oauth/v2/authorize?client_id=1000000000.2000000000"
            "&scope=commands&state=s&redirect_uri=https://varulv.example/slack/oauth"
        )
        code = parse_qs(urlsplit(fake.approve_install(install)).query)["code"][0]
        credentials = {"client_id": "1000000000.2000000000", "client_secret": "fake-client-secret"}
        first = anonymous.oauth_v2_access(code=code, **credentials)
        assert first["expires_in"] == 1
        assert first["access_token"].startswith("xoxe.xoxb-")
        assert first["refresh_token"].startswith("xoxe-1-")
        first_bot = WebClient(base_url=fake.api_url, token=first["access_token"])
        assert first_bot.auth_test()["ok"] is True

        refresh = {**credentials, "grant_type": "refresh_token"}
        second = anonymous.oauth_v2_access(refresh_token=first["refresh_token"], **refresh)
        assert second["token_type"] == "bot"
        assert second["refresh_token"] != first["refresh_token"]
        assert second["access_token"] != first["access_token"]
        used = {**refresh, "refresh_token": first["refresh_token"]}
        assert slack_error(anonymous.oauth_v2_access, **used) == "invalid_refresh_token"

        fake.grants.clock = lambda: now + 1
        assert slack_error(first_bot.auth_test) == "token_expired"
        second_bot = WebClient(base_url=fake.api_url, token=second["access_token"])
        assert slack_error(second_bot.auth_test) == "token_expired"
        third = anonymous.oauth_v2_access(refresh_token=second["refresh_token"], **refresh)
        assert WebClient(base_url=fake.api_url, token=third["access_token"]).auth_test()["ok"]


def test_without_token_rotation_there_is_nothing_to_refresh(fake: FakeSlack) -> None:
    anonymous = WebClient(base_url=fake.api_url)
    credentials = {"client_id": "1000000000.2000000000", "client_secret": "fake-client-secret"}
    refresh = {**credentials, "grant_type": "refresh_token", "refresh_token": "xoxe-1-x"}
    assert slack_error(anonymous.oauth_v2_access, **refresh) == "token_rotation_not_enabled"


def test_rate_limited_call_answers_429_with_retry_after(fake: FakeSlack, web: WebClient) -> None:
    faults.rate_limit(fake, "chat.postMessage")
    with pytest.raises(SlackApiError) as failure:
        web.chat_postMessage(channel=CHANNEL, text="hi")
    assert failure.value.response.status_code == 429
    assert failure.value.response.headers["Retry-After"] == "1"
    assert failure.value.response["error"] == "ratelimited"
    assert web.chat_postMessage(channel=CHANNEL, text="hi")["ok"] is True


def test_rate_limit_retry_handler_gets_through(fake: FakeSlack) -> None:
    retrying = WebClient(
        base_url=fake.api_url,
        token=TOKEN,
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=1)],
    )
    faults.rate_limit(fake, "chat.postMessage", times=1, retry_after=1)
    assert retrying.chat_postMessage(channel=CHANNEL, text="eventually")["ok"] is True
    assert [c.status for c in fake.calls_to("chat.postMessage")] == [429, 200]
    assert [m.text for m in fake.messages(CHANNEL)] == ["eventually"]


@pytest.mark.parametrize("method", sorted(METHOD_TIERS))
def test_every_method_the_app_calls_has_its_tier_per_workspace(method: str) -> None:
    """A minute's calls at once, then one every 60/N seconds; Retry-After says when, in whole
    seconds; each method has a budget of its own; the clock is the test's."""
    now = [0.0]
    limiter = Limiter(SLACK, clock=lambda: now[0])
    calls = int(TIERS[METHOD_TIERS[method]].burst)
    params = {"channel": CHANNEL}
    assert [limiter.retry_after(method, params) for _ in range(calls)] == [0] * calls
    assert limiter.retry_after(method, params) == math.ceil(60 / calls)
    assert limiter.retry_after("users.info" if method != "users.info" else "views.open", {}) == 0
    now[0] += 60 / calls
    assert limiter.retry_after(method, params) == 0
    assert limiter.retry_after(method, params) > 0
    assert limiter.refused == {method: 2}
    assert Limiter(UNLIMITED, clock=lambda: now[0]).retry_after(method, params) == 0


def test_conversations_open_beyond_tier_3_answers_429_with_retry_after(
    fake: FakeSlack, web: WebClient
) -> None:
    fake.api.limiter = Limiter(clock=lambda: 0.0)  # no token comes back while the test runs
    for _ in range(50):
        assert web.conversations_open(users="U1")["ok"] is True
    with pytest.raises(SlackApiError) as failure:
        web.conversations_open(users="U2")
    assert failure.value.response.status_code == 429
    assert failure.value.response.headers["Retry-After"] in ("1", "2")
    assert web.users_info(user="U1")["ok"] is True, "another method, another budget"


def test_forced_errors_answer_once(fake: FakeSlack, web: WebClient) -> None:
    faults.fail_next(fake, "conversations.open", "internal_error")
    assert slack_error(web.conversations_open, users="U1") == "internal_error"
    assert web.conversations_open(users="U1")["ok"] is True


def test_every_call_is_recorded(fake: FakeSlack, web: WebClient) -> None:
    web.chat_postMessage(channel=CHANNEL, text="hello")
    slack_error(web.users_info, user="U404")
    post, info = fake.calls[-2:]
    assert (post.method, post.params["text"], post.ok) == ("chat.postMessage", "hello", True)
    assert (info.method, info.response["error"]) == ("users.info", "user_not_found")
    assert post.at <= info.at


def test_wait_for_returns_as_soon_as_the_app_acts(fake: FakeSlack, web: WebClient) -> None:
    later = threading.Timer(0.1, lambda: web.chat_postMessage(channel=CHANNEL, text="dawn"))
    later.start()
    assert fake.wait_for_message(CHANNEL, "dawn").text == "dawn"
    with pytest.raises(TimeoutError):
        fake.wait_for(lambda: fake.find_message(CHANNEL, "dusk"), timeout=0.1)


# -- what the fake sends to the app -----------------------------------------------


def test_slash_command_is_signed_and_shaped_like_slacks(
    fake: FakeSlack, recorder: RecordingApp
) -> None:
    response = fake.slash_command("U1", text="start", headers={"X-Slack-Retry-Num": "1"})
    assert response.status_code == 200
    (request,) = recorder.received
    assert SignatureVerifier(SECRET).is_valid_request(request.body, request.headers)
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert request.headers["X-Slack-Retry-Num"] == "1"
    form = request.form()
    assert list(form) == [
        "token",
        "team_id",
        "team_domain",
        "channel_id",
        "channel_name",
        "user_id",
        "user_name",
        "command",
        "text",
        "api_app_id",
        "is_enterprise_install",
        "response_url",
        "trigger_id",
    ]
    assert (form["user_id"], form["user_name"], form["command"], form["text"]) == (
        "U1",
        "alice",
        "/varulv",
        "start",
    )
    assert (form["channel_id"], form["channel_name"]) == (CHANNEL, "general")
    assert form["response_url"].startswith(fake.api_url.removesuffix("api/") + "response/")
    assert len(fake.ack_latencies) == 1


def test_slash_command_ack_text_shows_as_ephemeral(fake: FakeSlack, recorder: RecordingApp) -> None:
    recorder.ack_with({"text": "Shuffling the cards…"})
    fake.slash_command("U1")
    (shown,) = fake.ephemerals("U1", CHANNEL)
    assert shown.text == "Shuffling the cards…"
    assert fake.messages(CHANNEL) == []
    recorder.ack_with({"text": "A game starts!", "response_type": "in_channel"})
    fake.slash_command("U1")
    assert [m.text for m in fake.messages(CHANNEL)] == ["A game starts!"]


def test_click_sends_block_actions_with_the_stored_message(
    fake: FakeSlack, web: WebClient, recorder: RecordingApp
) -> None:
    lobby = post_lobby(fake, web)
    assert fake.click_button("U2", CHANNEL, "Join").status_code == 200
    (request,) = recorder.received
    assert SignatureVerifier(SECRET).is_valid_request(request.body, request.headers)
    payload = request.payload()
    assert payload["type"] == "block_actions"
    assert payload["user"] == {"id": "U2", "username": "bob", "name": "bob", "team_id": "T0001"}
    assert payload["container"] == {
        "type": "message",
        "message_ts": lobby.ts,
        "channel_id": CHANNEL,
        "is_ephemeral": False,
    }
    assert payload["channel"] == {"id": CHANNEL, "name": "general"}
    assert payload["team"] == {"id": "T0001", "domain": "varulv-test"}
    assert payload["message"]["ts"] == lobby.ts
    assert payload["message"]["blocks"][1]["block_id"] == "lobby"
    (action,) = payload["actions"]
    assert (action["type"], action["action_id"], action["block_id"], action["value"]) == (
        "button",
        "join",
        "lobby",
        "seat",
    )
    assert action["text"]["text"] == "Join"
    assert payload["state"]["values"] == {
        "lobby": {"deck": {"type": "static_select", "selected_option": None}}
    }
    assert payload["trigger_id"] and payload["response_url"]


def test_select_sends_the_chosen_option(
    fake: FakeSlack, web: WebClient, recorder: RecordingApp
) -> None:
    lobby = post_lobby(fake, web)
    fake.select("U1", lobby, "deck", "chaos")
    payload = recorder.received[-1].payload()
    (action,) = payload["actions"]
    assert action["selected_option"]["value"] == "chaos"
    assert payload["state"]["values"]["lobby"]["deck"]["selected_option"]["value"] == "chaos"
    with pytest.raises(LookupError):
        fake.select("U1", lobby, "deck", "no-such-deck")


def test_click_on_an_ephemeral_message_carries_no_message(
    fake: FakeSlack, web: WebClient, recorder: RecordingApp
) -> None:
    blocks = checked_blocks(LOBBY_BLOCKS, 50)
    fake.add_message(fake.api.bot_message(CHANNEL, "Peek?", blocks, ephemeral_to="U1"))
    with pytest.raises(LookupError):
        fake.click_button("U2", CHANNEL, "Join")  # bob cannot see alice's ephemeral
    fake.click_button("U1", CHANNEL, "Join")
    payload = recorder.received[-1].payload()
    assert payload["container"]["is_ephemeral"] is True
    assert "message" not in payload


def test_response_url_replaces_and_posts_like_slack(
    fake: FakeSlack, web: WebClient, recorder: RecordingApp
) -> None:
    post_lobby(fake, web)
    fake.click_button("U1", CHANNEL, "Join")
    response_url = recorder.received[-1].payload()["response_url"]
    hook = WebhookClient(response_url)

    assert hook.send(text="Alice joined", replace_original=True).status_code == 200
    (lobby,) = fake.messages(CHANNEL)
    assert (lobby.text, lobby.blocks) == ("Alice joined", [])

    hook.send(text="Only alice reads this")
    assert [m.text for m in fake.ephemerals("U1", CHANNEL)] == ["Only alice reads this"]
    hook.send(text="Everyone reads this", response_type="in_channel")
    assert [m.text for m in fake.messages(CHANNEL)] == ["Alice joined", "Everyone reads this"]

    assert hook.send(text="fourth use").status_code == 200
    assert hook.send(text="fifth use").status_code == 200
    assert hook.send(text="sixth use").status_code == 404  # five uses per response_url
    assert [c.status for c in fake.calls_to("response_url")] == [200] * 5 + [404]


def test_a_response_url_answered_429_by_a_test_says_when_to_try_again(
    fake: FakeSlack, web: WebClient, recorder: RecordingApp
) -> None:
    post_lobby(fake, web)
    fake.click_button("U1", CHANNEL, "Join")
    throttled = ApiAnswer({"ok": False, "error": "ratelimited"}, 429, {"Retry-After": "7"})
    hook = WebhookClient(recorder.received[-1].payload()["response_url"], retry_handlers=[])
    with faults.AnswersFailing(fake, "Alice joined", throttled):
        answer = hook.send(text="Alice joined")
    assert (answer.status_code, answer.headers.get("Retry-After")) == (429, "7")
    assert fake.ephemerals("U1", CHANNEL) == [], "refused: nothing shown"
    assert hook.send(text="Alice joined").status_code == 200, "once: the next one lands"


def test_a_failed_or_malformed_ack_is_reported_by_slackbot(
    fake: FakeSlack, recorder: RecordingApp
) -> None:
    recorder.ack_with({"blocks": [{"text": "no type"}]})
    fake.slash_command("U1", "/varulv")
    (report,) = fake.ephemerals("U1")
    assert (report.user, report.text) == (
        "USLACKBOT",
        '/varulv failed with the error "invalid_blocks"',
    )


def test_slash_command_response_url_replaces_the_commands_own_reply(
    fake: FakeSlack, recorder: RecordingApp
) -> None:
    recorder.ack_with({"text": "Dealing…"})
    fake.slash_command("U1")
    hook = WebhookClient(recorder.received[-1].form()["response_url"])
    hook.send(text="Dealt!", replace_original=True)
    assert [m.text for m in fake.ephemerals("U1")] == ["Dealt!"]


def test_view_submission_sends_entered_values_and_applies_the_ack(
    fake: FakeSlack, web: WebClient, recorder: RecordingApp
) -> None:
    web.views_open(trigger_id=fake.grants.issue_trigger("U1"), view=VOTE_MODAL)
    recorder.ack_with({"response_action": "errors", "errors": {"target": "Not yourself!"}})
    fake.view_submission("U1", {"suspect": "U1"})
    payload = recorder.received[-1].payload()
    assert payload["type"] == "view_submission"
    assert payload["view"]["callback_id"] == "vote"
    assert payload["view"]["state"]["values"] == {
        "target": {"suspect": {"type": "users_select", "selected_user": "U1"}},
        "why": {"reason": {"type": "plain_text_input", "value": None}},
    }
    assert len(fake.modals("U1")) == 1  # errors keep the modal open
    recorder.ack_body = b""
    fake.view_submission("U1", {"suspect": "U2", "reason": "too quiet"})
    assert fake.modals("U1") == []


def test_events_arrive_in_a_signed_event_callback_envelope(
    fake: FakeSlack, recorder: RecordingApp
) -> None:
    fake.app_home_opened("U1")
    fake.app_uninstalled()
    opened, uninstalled = (json.loads(r.body) for r in recorder.received)
    for request in recorder.received:
        assert SignatureVerifier(SECRET).is_valid_request(request.body, request.headers)
        assert request.headers["Content-Type"] == "application/json"
    assert opened["type"] == "event_callback"
    assert opened["team_id"] == "T0001"
    assert opened["event"]["type"] == "app_home_opened"
    assert opened["event"]["channel"] == fake.dm_channel("U1")
    assert opened["event_id"] != uninstalled["event_id"]
    assert uninstalled["event"]["type"] == "app_uninstalled"
    # Uninstalling revokes the bot token.
    assert slack_error(WebClient(base_url=fake.api_url, token=TOKEN).auth_test) == "token_revoked"


# -- a real Bolt app ----------------------------------------------------------------


def lobby_app(fake: FakeSlack) -> App:
    """A tiny Bolt app: /varulv opens a lobby, Join replaces it through respond()."""
    app = App(signing_secret=SECRET, client=WebClient(base_url=fake.api_url, token=TOKEN))

    @app.command("/varulv")
    def open_lobby(ack: Ack, say: Say) -> None:
        ack("Shuffling the cards…")
        say(text="Who plays?", blocks=LOBBY_BLOCKS)

    @app.action("join")
    def join(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        respond(text=f"<@{body['user']['id']}> joined", replace_original=True)

    return app


def test_bolt_accepts_the_fakes_command_and_click(
    fake: FakeSlack, serve: Callable[[WSGIApplication], str]
) -> None:
    fake.app_url = serve(SlackRequestHandler(lobby_app(fake)))

    command = fake.slash_command("U1", text="start")
    assert command.status_code == 200
    assert command.text == "Shuffling the cards…"  # Bolt acks a string as plain text
    lobby = fake.wait_for_message(CHANNEL, "Who plays?")
    assert [m.text for m in fake.ephemerals("U1")] == ["Shuffling the cards…"]

    click = fake.click_button("U2", lobby, "Join")
    assert click.status_code == 200
    fake.wait_for(lambda: fake.find_message(CHANNEL, "<@U2> joined"))
    assert [m.ts for m in fake.messages(CHANNEL)] == [lobby.ts]  # replaced, not added


def test_bolt_refuses_a_fake_with_the_wrong_secret_or_a_stale_timestamp(
    fake: FakeSlack, serve: Callable[[WSGIApplication], str]
) -> None:
    app_url = serve(SlackRequestHandler(lobby_app(fake)))
    with FakeSlack("not-the-secret", users={"U1": "alice"}, app_url=app_url) as impostor:
        assert impostor.slash_command("U1").status_code == 401
    fake.app_url = app_url
    ten_minutes_ago = int(time.time()) - 10 * 60
    assert fake.post_to_app("command=/varulv", timestamp=ten_minutes_ago).status_code == 401


def test_whoever_sees_what_a_call_did_finds_the_call_logged(
    fake: FakeSlack, web: WebClient
) -> None:
    """A call changes the workspace before it is logged; reading the log in between waits for
    it, so a test that saw the message never counts the call that posted it missing."""
    applied, release = threading.Event(), threading.Event()

    def slow_to_log(request: ApiRequest, answer: Answerer) -> ApiAnswer:
        answered = answer(request)
        applied.set()
        release.wait(PATIENCE)
        return answered

    fake.api.hooks.append(slow_to_log)
    try:
        posting = threading.Thread(
            target=lambda: web.chat_postMessage(channel=CHANNEL, text="dawn")
        )
        posting.start()
        assert applied.wait(PATIENCE)
        assert fake.find_message(CHANNEL, "dawn") is not None  # shown, not yet logged
        logged: list[list[str]] = []
        reading = threading.Thread(target=lambda: logged.append([c.method for c in fake.calls]))
        reading.start()
        reading.join(0.3)
        assert reading.is_alive(), "the log was read before the call was in it"
        release.set()
        reading.join(PATIENCE)
        posting.join(PATIENCE)
        assert logged and logged[0][-1] == "chat.postMessage"
    finally:
        release.set()
        fake.api.hooks.remove(slow_to_log)


# -- Enterprise Grid ------------------------------------------------------------------


@pytest.mark.parametrize("org_wide", [False, True], ids=["workspace install", "org-wide"])
def test_a_grid_workspace_names_its_organisation_as_slack_does(
    serve: Callable[[WSGIApplication], str], org_wide: bool
) -> None:
    with FakeSlack(
        SECRET, users={"U1": "alice"}, enterprise_id="E0GRID", org_wide=org_wide
    ) as fake:
        recorder = RecordingApp()
        fake.app_url = serve(recorder)
        web = WebClient(base_url=fake.api_url, token=TOKEN)
        organisation = {"id": "E0GRID", "name": fake.identity.enterprise_name}

        fake.slash_command("U1")
        form = recorder.received[-1].form()
        assert list(form)[:5] == [
            "token",
            "team_id",
            "team_domain",
            "enterprise_id",
            "enterprise_name",
        ]
        assert (form["team_id"], form["enterprise_id"]) == ("T0001", "E0GRID")
        assert form["is_enterprise_install"] == ("true" if org_wide else "false")

        fake.click("U1", post_lobby(fake, web), "join")
        click = recorder.received[-1].payload()
        assert click["enterprise"] == organisation
        assert click["team"]["id"] == "T0001" and click["team"]["enterprise_id"] == "E0GRID"
        assert click["is_enterprise_install"] is org_wide

        fake.app_home_opened("U1")
        envelope = json.loads(recorder.received[-1].body)
        assert (envelope["team_id"], envelope["enterprise_id"]) == ("T0001", "E0GRID")
        (authorization,) = envelope["authorizations"]
        assert authorization["enterprise_id"] == "E0GRID"
        assert authorization["team_id"] == (None if org_wide else "T0001")
        assert authorization["is_enterprise_install"] is org_wide

        install = (
            "https://slack.com/oauth/v2/authorize?client_id=1000000000.2000000000"
            "&scope=commands&state=s&redirect_uri=https://varulv.example/slack/oauth"
        )
        code = parse_qs(urlsplit(fake.approve_install(install)).query)["code"][0]
        credentials = {"client_id": "1000000000.2000000000", "client_secret": "fake-client-secret"}
        answer = WebClient(base_url=fake.api_url).oauth_v2_access(code=code, **credentials)
        assert answer["enterprise"] == organisation
        assert answer["is_enterprise_install"] is org_wide
        assert answer["team"] == (None if org_wide else {"name": "Varulv Test", "id": "T0001"})
        installed = WebClient(base_url=fake.api_url, token=answer["access_token"])
        checked = installed.auth_test()
        assert checked["enterprise_id"] == "E0GRID"
        assert checked["is_enterprise_install"] is org_wide


def test_org_wide_needs_an_organisation() -> None:
    with pytest.raises(ValueError, match="Enterprise Grid"):
        FakeSlack(SECRET, org_wide=True)


@pytest.mark.parametrize(
    ("role", "flags"),
    [
        (None, (False, False, False)),
        ("admin", (True, False, False)),
        ("owner", (True, True, False)),
        ("primary_owner", (True, True, True)),
    ],
)
def test_users_info_says_who_is_an_admin_or_owner(
    fake: FakeSlack, web: WebClient, role: str | None, flags: tuple[bool, bool, bool]
) -> None:
    fake.set_role("U2", role)
    user = web.users_info(user="U2")["user"]
    assert (user["is_admin"], user["is_owner"], user["is_primary_owner"]) == flags
    assert "enterprise_user" not in user, "not in a Grid"
    with pytest.raises(ValueError, match="unknown role"):
        fake.set_role("U2", "king")


def test_users_info_in_a_grid_names_the_organisation() -> None:
    with FakeSlack(SECRET, users={"U1": "alice"}, enterprise_id="E0GRID") as fake:
        fake.set_role("U1", "owner")
        user = WebClient(base_url=fake.api_url, token=TOKEN).users_info(user="U1")["user"]
        grid = user["enterprise_user"]
        assert (grid["enterprise_id"], grid["teams"]) == ("E0GRID", ["T0001"])
        assert (grid["is_admin"], grid["is_owner"], grid["is_primary_owner"]) == (
            True,
            True,
            False,
        )
