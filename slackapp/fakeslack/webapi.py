"""The Web API methods the app uses, answering with Slack's shapes and errors.

This module knows nothing about HTTP: the server turns requests into an
ApiRequest and writes back the ApiAnswer.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from slackapp.fakeslack import blocks as block_kit
from slackapp.fakeslack.grants import Grants, HookError, ResponseHook
from slackapp.fakeslack.limits import SLACK, Limiter, RateLimits
from slackapp.fakeslack.models import JSON, Call, Message
from slackapp.fakeslack.workspace import Workspace

MAX_UPDATE_TEXT = 4000
"""chat.update's limit on a message's ``text`` (its ``msg_too_long``)."""
NO_TOKEN_METHODS = frozenset({"oauth.v2.access"})
"""Methods authenticated by the app's client id and secret instead of a token."""


class ApiError(Exception):
    """A Slack error answer: ``{"ok": false, "error": ...}`` plus any extra fields."""

    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.extra = extra

    def body(self) -> JSON:
        """The JSON Slack would answer."""
        return {"ok": False, "error": self.error, **self.extra}


@dataclass(frozen=True)
class ApiRequest:
    """One Web API call, whatever encoding it arrived in."""

    method: str
    params: JSON
    token: str | None = None
    client_auth: tuple[str, str] | None = None


@dataclass(frozen=True)
class ApiAnswer:
    """What to send back: HTTP status, JSON body and extra headers."""

    body: JSON
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    hang_up: bool = False
    """Close the connection without an answer, as a call its client gave up on ends for it:
    the client cannot know whether Slack applied it."""


Handler = Callable[[ApiRequest], JSON]
Answerer = Callable[[ApiRequest], ApiAnswer]
Hook = Callable[[ApiRequest, Answerer], ApiAnswer]
"""Wraps every call: given the request and what answers it, the answer to send (tests' faults)."""


class WebApi:
    """Slack's Web API over a Workspace; every call is recorded there."""

    def __init__(self, workspace: Workspace, grants: Grants, limits: RateLimits = SLACK) -> None:
        self.workspace = workspace
        self.grants = grants
        self.limiter = Limiter(limits)
        """Slack's rate limits, enforced (``slackapp.fakeslack.limits``)."""
        self.hooks: list[Hook] = []
        """Run around every call, response_urls included, the first outermost."""
        self._methods: dict[str, Handler] = {
            "auth.test": self.auth_test,
            "conversations.open": self.conversations_open,
            "chat.postMessage": self.chat_post_message,
            "chat.update": self.chat_update,
            "chat.delete": self.chat_delete,
            "views.publish": self.views_publish,
            "views.open": self.views_open,
            "users.info": self.users_info,
            "users.list": self.users_list,
            "oauth.v2.access": self.oauth_v2_access,
        }
        self._own_token_check: set[str] = set(NO_TOKEN_METHODS)

    def add_method(self, method: str, handler: Handler, *, checks_own_token: bool = False) -> None:
        """Serve one more method, e.g. Socket Mode's ``apps.connections.open`` from its own
        module; ``checks_own_token`` when it takes a token other than a bot's (an app token)."""
        self._methods[method] = handler
        if checks_own_token:
            self._own_token_check.add(method)

    def handle(self, request: ApiRequest) -> ApiAnswer:
        """Answer one call like Slack would, and log it."""
        answering = 0  # how often the hooks let it reach the workspace (once, or not at all)

        def answer(request: ApiRequest) -> ApiAnswer:
            nonlocal answering
            self.workspace.answering()
            answering += 1
            return self._answer(request)

        try:
            answered = self._hooked(request, answer)
        except BaseException:
            self.workspace.record(None, answered=answering)
            raise
        call = Call(
            method=request.method,
            params=request.params,
            response=answered.body,
            at=time.time(),
            status=answered.status,
            token=request.token,
        )
        self.workspace.record(call, answered=answering)
        return answered

    def _answer(self, request: ApiRequest) -> ApiAnswer:
        handler = self._methods.get(request.method)
        if handler is None:
            return ApiAnswer({"ok": False, "error": "unknown_method", "req_method": request.method})
        if request.method not in self._own_token_check:
            token_error = self.grants.token_error(request.token)
            if token_error:
                return ApiAnswer({"ok": False, "error": token_error})
        if retry_after := self.limiter.retry_after(request.method, request.params):
            return ApiAnswer(
                {"ok": False, "error": "ratelimited"}, 429, {"Retry-After": str(retry_after)}
            )
        try:
            return ApiAnswer({"ok": True, **handler(request)})
        except ApiError as error:
            return ApiAnswer(error.body())

    def _hooked(self, request: ApiRequest, answer: Answerer) -> ApiAnswer:
        for hook in reversed(self.hooks):
            answer = _around(hook, answer)
        return answer(request)

    # -- auth and people -----------------------------------------------------------

    def auth_test(self, request: ApiRequest) -> JSON:
        """Who the token belongs to."""
        me = self.workspace.identity
        return {
            "url": f"https://{me.team_domain}.slack.com/",
            "team": me.team_name,
            "user": me.bot_name,
            "team_id": me.team_id,
            "user_id": me.bot_user_id,
            "bot_id": me.bot_id,
            **({} if me.enterprise_id is None else {"enterprise_id": me.enterprise_id}),
            "is_enterprise_install": me.org_wide,
        }

    def users_info(self, request: ApiRequest) -> JSON:
        """A minimal but realistic user object."""
        return {"user": self._user(_required(request.params, "user"))}

    def users_list(self, request: ApiRequest) -> JSON:
        """The workspace's members, the bot included, a page of ``limit`` (at most 1,000)
        after ``cursor``; ``next_cursor`` is empty on the last page."""
        try:
            limit = min(int(request.params.get("limit") or 0) or 1000, 1000)
            start = int(request.params.get("cursor") or 0)
        except ValueError:
            raise ApiError("invalid_cursor") from None
        members = self.workspace.members()
        page = members[start : start + limit]
        more = start + limit < len(members)
        return {
            "members": [self._user(user_id) for user_id in page],
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    def _user(self, user_id: str) -> JSON:
        name = self.workspace.user_name(user_id)
        names = self.workspace.profile_names(user_id)
        if name is None or names is None:
            raise ApiError("user_not_found")
        shown, real = names
        me = self.workspace.identity
        is_bot = user_id == me.bot_user_id
        zone = self.workspace.zone_of(user_id)
        utc_offset = datetime.now(ZoneInfo(zone)).utcoffset()
        offset = int(utc_offset.total_seconds()) if utc_offset is not None else 0
        profile = {
            "real_name": real,
            "display_name": shown,
            "real_name_normalized": real,
            "display_name_normalized": shown,
            "image_48": f"https://example.invalid/avatars/{user_id}_48.png",
            "team": me.team_id,
        }
        if is_bot:
            profile["bot_id"] = me.bot_id
        user = {
            "id": user_id,
            "team_id": me.team_id,
            "name": name,
            "deleted": False,
            "real_name": real,
            "tz": zone,
            "tz_label": zone,
            "tz_offset": offset,
            "profile": profile,
            **self.workspace.role_flags(user_id),
            "is_bot": is_bot,
            "is_app_user": False,
            "updated": 1700000000,
        }
        if me.enterprise_id is not None:
            flags = self.workspace.role_flags(user_id)
            user["enterprise_user"] = {
                "id": user_id,
                "enterprise_id": me.enterprise_id,
                "enterprise_name": me.enterprise_name,
                "is_admin": flags["is_admin"],
                "is_owner": flags["is_owner"],
                "is_primary_owner": flags["is_primary_owner"],
                "teams": [me.team_id],
            }
        return user

    def conversations_open(self, request: ApiRequest) -> JSON:
        """Open (or find) the bot's DM with one user."""
        users = [u for u in str(request.params.get("users", "")).split(",") if u]
        if not users:
            raise ApiError("users_list_not_supplied")
        if len(users) > 1:
            # Group DMs are not part of the fake's world.
            raise ApiError("not_supported")
        user_id = users[0]
        if user_id == self.workspace.identity.bot_user_id:
            raise ApiError("cannot_dm_bot")
        if self.workspace.user_name(user_id) is None:
            raise ApiError("user_not_found")
        return {"channel": {"id": self.workspace.dm_channel(user_id)}}

    # -- messages ------------------------------------------------------------------

    def chat_post_message(self, request: ApiRequest) -> JSON:
        """Post a message as the bot; ``channel`` may be a user id (their DM)."""
        channel = self._postable_channel(request.params.get("channel"))
        message = self.workspace.add_message(self._compose(request.params, channel))
        return {"channel": channel, "ts": message.ts, "message": message.as_payload()}

    def chat_update(self, request: ApiRequest) -> JSON:
        """Edit a bot message in place, as Slack's chat.update page says: a DM is named by its
        ``D…`` id, not the person's; ``text`` not given is kept, and so are the blocks, but
        only when ``text`` is not given either (new text without blocks removes them); text
        longer than 4,000 characters is ``msg_too_long``. In an archived channel Slack answers
        ``is_inactive`` ("cannot be edited within a frozen, archived or deleted channel"), not
        the ``is_archived`` of a post."""
        params = request.params
        if str(params.get("channel") or "")[:1] in ("U", "W"):
            raise ApiError("channel_not_found")
        try:
            old = self._own_message(params, "cant_update_message")
        except ApiError as error:
            if error.error == "is_archived":
                raise ApiError("is_inactive") from None
            raise
        text_given = params.get("text") is not None
        if params.get("blocks") is not None:
            blocks = self._blocks(params)
        else:
            blocks = [] if text_given else old.blocks
        text = str(params["text"]) if text_given else old.text
        if not text and not blocks:
            raise ApiError("no_text")
        if len(text) > MAX_UPDATE_TEXT:
            raise ApiError("msg_too_long")
        new = self.workspace.replace_message(
            old.channel, old.ts, text=text, blocks=blocks, edited_ts=self.workspace.next_ts()
        )
        return {"channel": new.channel, "ts": new.ts, "text": new.text, "message": new.as_payload()}

    def chat_delete(self, request: ApiRequest) -> JSON:
        """Delete a message: a bot token may delete only the bot's own (Slack answers
        ``cant_delete_message`` for anyone else's); it is gone for every reader."""
        old = self._own_message(request.params, "cant_delete_message")
        self.workspace.remove_message(old.channel, old.ts)
        return {"channel": old.channel, "ts": old.ts}

    def _postable_channel(self, requested: Any) -> str:
        if not requested:
            raise ApiError("channel_not_found")
        channel = str(requested)
        if channel[:1] in ("U", "W") and self.workspace.user_name(channel) is None:
            raise ApiError("channel_not_found")
        channel = self.workspace.conversation(channel)
        if self.workspace.channel_name(channel) is None:
            raise ApiError("channel_not_found")
        if refused := self.workspace.bot_refused(channel):
            raise ApiError(refused)
        return channel

    def _own_message(self, params: JSON, not_yours: str) -> Message:
        # chat.update and chat.delete cannot reach ephemeral messages, like in Slack.
        channel = self._postable_channel(params.get("channel"))
        message = self.workspace.get_message(channel, _required(params, "ts"))
        if message is None or message.is_ephemeral:
            raise ApiError("message_not_found")
        if message.user != self.workspace.identity.bot_user_id:
            raise ApiError(not_yours)
        return message

    def _compose(self, params: JSON, channel: str, *, ephemeral_to: str | None = None) -> Message:
        text = str(params.get("text") or "")
        blocks = self._blocks(params)
        if not text and not blocks:
            raise ApiError("no_text")
        if len(text) > 40_000:
            raise ApiError("msg_too_long")
        return self.bot_message(
            channel,
            text,
            blocks,
            ephemeral_to=ephemeral_to,
        )

    def bot_message(self, channel: str, text: str, blocks: list[JSON], **extra: Any) -> Message:
        """A new message from the bot, stamped with a fresh ts (not yet stored)."""
        me = self.workspace.identity
        return Message(
            ts=self.workspace.next_ts(),
            channel=channel,
            user=me.bot_user_id,
            text=text,
            blocks=blocks,
            bot_id=me.bot_id,
            app_id=me.app_id,
            team=me.team_id,
            **extra,
        )

    def _blocks(self, params: JSON, max_blocks: int = block_kit.MAX_MESSAGE_BLOCKS) -> list[JSON]:
        raw = _json_param(params, "blocks", error="invalid_blocks_format")
        return checked_blocks(raw or [], max_blocks)

    # -- views ---------------------------------------------------------------------

    def views_publish(self, request: ApiRequest) -> JSON:
        """Publish a user's Home tab; the view id stays the same across publishes."""
        user_id = _required(request.params, "user_id")
        if self.workspace.user_name(user_id) is None:
            raise ApiError("user_not_found")
        view = view_param(request.params, "home")
        view_id = self.workspace.home_view_id(user_id)
        stored = self.stored_view(view, view_id or self.workspace.new_view_id())
        self.workspace.set_home(user_id, stored)
        return {"view": stored}

    def views_open(self, request: ApiRequest) -> JSON:
        """Open a modal in reply to an interaction's trigger_id."""
        trigger_id = _required(request.params, "trigger_id")
        view = view_param(request.params, "modal")  # a refused view leaves the trigger unused
        try:
            user_id = self.grants.redeem_trigger(trigger_id)
        except ValueError as error:
            raise ApiError(str(error)) from None
        if self.workspace.modals(user_id):
            raise ApiError("view_already_open")
        stored = self.stored_view(view, self.workspace.new_view_id())
        self.workspace.push_modal(user_id, stored)
        return {"view": stored}

    def stored_view(self, view: JSON, view_id: str) -> JSON:
        """The full view object Slack keeps and returns for an app's view payload."""
        me = self.workspace.identity
        return {
            "id": view_id,
            "team_id": me.team_id,
            "type": view["type"],
            "blocks": block_kit.with_ids(view.get("blocks", [])),
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
            "state": {"values": {}},
            "hash": f"{int(time.time())}.{secrets.token_hex(4)}",
            "title": view.get("title"),
            "close": view.get("close"),
            "submit": view.get("submit"),
            "clear_on_close": bool(view.get("clear_on_close", False)),
            "notify_on_close": bool(view.get("notify_on_close", False)),
            "external_id": view.get("external_id", ""),
            "previous_view_id": None,
            "root_view_id": view_id,
            "app_id": me.app_id,
            "app_installed_team_id": me.team_id,
            "bot_id": me.bot_id,
        }

    # -- response_url --------------------------------------------------------------

    def respond(self, hook_id: str, body: JSON) -> tuple[int, str]:
        """Apply a post to a response_url; the (status, text) Slack would answer."""
        answer = self.respond_to(hook_id, body)
        return answer.status, response_text(answer)

    def respond_to(self, hook_id: str, body: JSON) -> ApiAnswer:
        """Apply a post to a response_url; Slack's answer (its text: ``response_text``)."""
        answer = self._hooked(ApiRequest("response_url", body, hook_id), self._respond)
        self.workspace.record(Call("response_url", body, answer.body, time.time(), answer.status))
        return answer

    def _respond(self, request: ApiRequest) -> ApiAnswer:
        """The answer, and (for the record of calls only) the message the hook points at."""
        target: JSON = {}
        try:
            hook = self.grants.use_hook(request.token or "")
            target = {"channel": hook.channel, "ts": hook.message_ts}
            status, text = 200, self.apply_response(hook, request.params)
        except HookError as error:
            status, text = 404, str(error)
        except ApiError as error:
            status, text = 400, error.error
        return ApiAnswer({"ok": status == 200, "answer": text, **target}, status)

    def apply_response(self, hook: ResponseHook, body: JSON) -> str:
        """Show a response (response_url post or command ack) the way Slack would."""
        original = (
            self.workspace.get_message(hook.channel, hook.message_ts) if hook.message_ts else None
        )
        text = str(body.get("text") or "")
        blocks = checked_blocks(body.get("blocks") or [], block_kit.MAX_MESSAGE_BLOCKS)
        if not text and not blocks:
            raise ApiError("no_text")
        if body.get("replace_original") and original is not None:
            self.workspace.replace_message(original.channel, original.ts, text=text, blocks=blocks)
            return "ok"
        public = body.get("response_type") == "in_channel"
        message = self.bot_message(
            hook.channel,
            text,
            blocks,
            ephemeral_to=None if public else hook.user_id,
        )
        self.workspace.add_message(message)
        self.grants.attach_message(hook.hook_id, message.ts)
        return "ok"

    # -- oauth ---------------------------------------------------------------------

    def oauth_v2_access(self, request: ApiRequest) -> JSON:
        """Exchange an OAuth code for a new bot token, as after "Allow" on the install page;
        with token rotation on, also a refresh token for a new pair
        (``grant_type=refresh_token``)."""
        params = request.params
        client_id, client_secret = request.client_auth or (
            params.get("client_id"),
            params.get("client_secret"),
        )
        if error := self.grants.client_error(client_id, client_secret):
            raise ApiError(error)
        me = self.workspace.identity
        grant_type = params.get("grant_type", "authorization_code")
        if grant_type == "refresh_token":
            if self.grants.token_lifetime is None:
                raise ApiError("token_rotation_not_enabled")
            installed_on = self.grants.redeem_refresh_token(str(params.get("refresh_token", "")))
            if installed_on != me.installed_on:
                raise ApiError("invalid_refresh_token")
            return self._bot_token_grant()
        if grant_type != "authorization_code":
            raise ApiError("invalid_grant_type")
        installer = self.grants.redeem_code(str(params.get("code", "")))
        if installer is None:
            raise ApiError("invalid_code")
        self.workspace.add_user(installer)
        return {**self._bot_token_grant(), "authed_user": {"id": installer}}

    def _bot_token_grant(self) -> JSON:
        me = self.workspace.identity
        grant: JSON = {
            "access_token": self.grants.mint_bot_token(me.installed_on),
            "token_type": "bot",
            "scope": me.bot_scopes,
            "bot_user_id": me.bot_user_id,
            "app_id": me.app_id,
            # Installed on a whole organisation: no one workspace.
            "team": None if me.org_wide else {"name": me.team_name, "id": me.team_id},
            "enterprise": me.enterprise,
            "is_enterprise_install": me.org_wide,
        }
        if self.grants.token_lifetime is not None:
            grant["refresh_token"] = self.grants.mint_refresh_token(me.installed_on)
            grant["expires_in"] = self.grants.token_lifetime
        return grant


def response_text(answer: ApiAnswer) -> str:
    """What Slack answers a post to a response_url with: plain text, not JSON."""
    return str(answer.body.get("answer", answer.body.get("error", "")))


def _around(hook: Hook, inner: Answerer) -> Answerer:
    return lambda request: hook(request, inner)


def checked_blocks(raw: Any, max_blocks: int) -> list[JSON]:
    """``raw`` stored as Slack would store it, or ApiError("invalid_blocks")."""
    if found := block_kit.problems(raw, max_blocks=max_blocks):
        raise ApiError(
            "invalid_blocks",
            errors=found,
            response_metadata={"messages": [f"[ERROR] {p}" for p in found]},
        )
    return block_kit.with_ids(raw)


def _required(params: JSON, name: str) -> str:
    value = params.get(name)
    if not value:
        raise ApiError(
            "invalid_arguments",
            response_metadata={"messages": [f"[ERROR] missing required field: {name}"]},
        )
    return str(value)


def _json_param(params: JSON, name: str, error: str = "invalid_arguments") -> Any:
    # Form-encoded calls carry structured values as JSON strings.
    value = params.get(name)
    if isinstance(value, str):
        try:
            return json.loads(value) if value else None
        except json.JSONDecodeError:
            raise ApiError(error) from None
    return value


def view_param(params: JSON, expected_type: str) -> JSON:
    view = _json_param(params, "view", error="invalid_arguments")
    if not isinstance(view, dict) or view.get("type") != expected_type:
        raise ApiError(
            "invalid_arguments",
            response_metadata={"messages": [f"[ERROR] view type must be {expected_type}"]},
        )
    if expected_type == "modal" and not view.get("title"):
        raise ApiError(
            "invalid_arguments",
            response_metadata={"messages": ["[ERROR] missing required field: title"]},
        )
    if found := view_problems(view):
        raise ApiError(
            "invalid_arguments",
            response_metadata={"messages": [f"[ERROR] {problem}" for problem in found]},
        )
    checked = dict(view)
    checked["blocks"] = checked_blocks(view.get("blocks", []), block_kit.MAX_VIEW_BLOCKS)
    return checked


MAX_MODAL_TEXT = 24
"""A modal's ``title``, ``submit`` and ``close``: plain text of at most 24 characters."""
MAX_PRIVATE_METADATA = 3000
MAX_CALLBACK_ID = 255


def view_problems(view: JSON) -> list[str]:
    """Why Slack would refuse a view's own fields (its blocks are checked apart), as its view
    reference gives them: a modal's title, submit and close at most 24 characters, and a
    submit button whenever it holds an input block; ``private_metadata`` at most 3,000
    characters and ``callback_id`` at most 255."""
    lengths: list[tuple[str, str, int]] = [
        ("private_metadata", str(view.get("private_metadata") or ""), MAX_PRIVATE_METADATA),
        ("callback_id", str(view.get("callback_id") or ""), MAX_CALLBACK_ID),
    ]
    found: list[str] = []
    if view.get("type") == "modal":
        for field in ("title", "submit", "close"):
            lengths.append((f"{field}/text", block_kit.text_of(view.get(field)), MAX_MODAL_TEXT))
        blocks = view.get("blocks") or []
        if not view.get("submit") and any(
            isinstance(block, dict) and block.get("type") == "input" for block in blocks
        ):
            found.append("submit is required with input blocks [json-pointer:/view/submit]")
    for pointer, text, most in lengths:
        if len(text) > most:
            found.append(f"must be less than {most + 1} characters [json-pointer:/view/{pointer}]")
    return found
