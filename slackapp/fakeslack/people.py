"""The workspace's people: what they type, click and submit, sent to the app the way Slack
sends it (signed HTTP requests to its request URL, or Socket Mode's envelopes), and shown to
them the way Slack shows the app's answers."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qs

import requests

from slackapp.fakeslack import blocks as block_kit
from slackapp.fakeslack import payloads
from slackapp.fakeslack.client import AppClient, Delivery, SignedRequest
from slackapp.fakeslack.grants import Grants
from slackapp.fakeslack.models import JSON, Message, find_button
from slackapp.fakeslack.webapi import ApiError, WebApi, view_param
from slackapp.fakeslack.workspace import Workspace

SLACKBOT = "USLACKBOT"
"""Slack's own user, who reports failed slash commands."""
Headers = Mapping[str, str] | None


class People:
    """Acts as the workspace's people: slash_command(), click(), click_button(), select(),
    click_home_button(), view_submission(), and the events Slack sends on their behalf."""

    def __init__(
        self,
        workspace: Workspace,
        grants: Grants,
        api: WebApi,
        app: AppClient,
        *,
        response_base_url: str,
        verification_token: str,
    ) -> None:
        self.workspace = workspace
        self.grants = grants
        self.api = api
        self.app = app
        self.response_base_url = response_base_url
        self.verification_token = verification_token
        self._delivery: Delivery = app
        self._event_serial = itertools.count(1)

    def deliver_over(self, delivery: Delivery | None) -> None:
        """Send commands, clicks and events over ``delivery`` (Socket Mode's link) instead of
        signed HTTP requests to the request URL; None goes back to HTTP. keeping_requests(),
        send() and post_to_app() stay HTTP's."""
        self._delivery = delivery or self.app

    def slash_command(
        self,
        user_id: str,
        command: str = "/varulv",
        text: str = "",
        *,
        channel_id: str | None = None,
        user_name: str | None = None,
        headers: Headers = None,
    ) -> requests.Response:
        """Type ``command text`` in a channel; an ack with a body is shown like Slack shows it."""
        channel = channel_id or self.workspace.default_channel
        name = self._member(user_id, user_name)
        if self.workspace.channel_name(channel) is None:
            self.workspace.add_channel(channel, channel.lower())
        hook_id = self.grants.issue_hook(user_id, channel, None)
        form = payloads.slash_command(
            self.workspace.identity,
            token=self.verification_token,
            user_id=user_id,
            user_name=name,
            channel_id=channel,
            channel_name=self.workspace.channel_name(channel) or "",
            command=command,
            text=text,
            response_url=self._response_url(hook_id),
            trigger_id=self.grants.issue_trigger(user_id),
        )
        response = self._delivery.post_form(form, headers)
        self._show_command_ack(command, hook_id, response)
        return response

    def click(
        self,
        user_id: str,
        message: Message,
        action_id: str,
        value: Any = None,
        block_id: str | None = None,
        *,
        headers: Headers = None,
        stale: bool = False,
    ) -> requests.Response:
        """Act on the element ``action_id`` in the current version of ``message``.

        ``value`` overrides a button's value or is the choice for a select. With ``stale``,
        act on ``message`` as given: a client that had not redrawn it yet when clicked.
        """
        current = message if stale else self.workspace.get_message(message.channel, message.ts)
        if current is None or current.ephemeral_to not in (None, user_id):
            raise LookupError(f"{user_id} cannot see message {message.ts} in {message.channel}")
        found_block_id, element = current.element(action_id)
        acted = payloads.action(block_id or found_block_id, element, value)
        hook_id = self.grants.issue_hook(user_id, current.channel, current.ts)
        payload = payloads.message_actions(
            self.workspace.identity,
            token=self.verification_token,
            user=self._user_ref(user_id),
            message=current,
            channel_name=self.workspace.channel_name(current.channel) or "",
            acted=acted,
            trigger_id=self.grants.issue_trigger(user_id),
            response_url=self._response_url(hook_id),
        )
        return self._send_interaction(payload, headers)

    def click_button(
        self, user_id: str, where: str | Message, label: str, *, headers: Headers = None
    ) -> requests.Response:
        """Press the button labelled ``label`` (text or action_id).

        ``where`` is a message, or a channel / user id whose newest message with
        such a button (as ``user_id`` sees it) is used.
        """
        message, button = self.workspace.find_button(where, label, viewer=user_id)
        return self.click(
            user_id, message, button.action_id, block_id=button.block_id, headers=headers
        )

    def select(
        self,
        user_id: str,
        message: Message,
        action_id: str,
        choice: Any,
        *,
        headers: Headers = None,
    ) -> requests.Response:
        """Pick ``choice`` in a select, radio or overflow element.

        ``choice`` is an option value, a user/channel id, or a list for multi-selects.
        """
        return self.click(user_id, message, action_id, choice, headers=headers)

    def click_home_button(
        self, user_id: str, label: str, *, block_id: str | None = None, headers: Headers = None
    ) -> requests.Response:
        """Press a button on ``user_id``'s Home tab: the one labelled ``label`` (text or
        action_id), in the block ``block_id`` when given (one toggle per channel)."""
        view = self.workspace.home_view(user_id)
        if view is None:
            raise LookupError(f"{user_id} has no Home tab published")
        blocks = [b for b in view["blocks"] if block_id in (None, b.get("block_id"))]
        button = find_button(blocks, label, where=f"{user_id}'s Home tab")
        payload = payloads.view_actions(
            self.workspace.identity,
            token=self.verification_token,
            user=self._user_ref(user_id),
            view=view,
            acted=payloads.action(button.block_id, button.element),
            trigger_id=self.grants.issue_trigger(user_id),
        )
        return self._send_interaction(payload, headers)

    def view_submission(
        self,
        user_id: str,
        values: Mapping[str | tuple[str, str], Any] | None = None,
        *,
        view_id: str | None = None,
        headers: Headers = None,
    ) -> requests.Response:
        """Submit ``user_id``'s open modal (the top one unless ``view_id``).

        ``values`` maps action_id (or (block_id, action_id)) to what the user entered or
        picked; the app's ``response_action`` (errors, update, push, clear) is applied.
        """
        stack = self.workspace.modals(user_id)
        view = next((v for v in stack if v["id"] == view_id), None) if view_id else None
        view = view or (stack[-1] if stack else None)
        if view is None:
            raise LookupError(f"{user_id} has no modal open")
        payload = payloads.view_submission(
            self.workspace.identity,
            token=self.verification_token,
            user=self._user_ref(user_id),
            view=view,
            state={"values": _entered_state(view["blocks"], values or {})},
            trigger_id=self.grants.issue_trigger(user_id),
        )
        response = self._send_interaction(payload, headers)
        self._apply_response_action(user_id, response)
        return response

    @contextlib.contextmanager
    def keeping_requests(self) -> Iterator[list[SignedRequest]]:
        """Inside the block, commands, clicks and events are signed and kept in the list, not
        sent (each acts as if acknowledged with an empty body): send them later with
        :meth:`send`, many at once, twice, or to another process of the app."""
        kept: list[SignedRequest] = []
        self.app.kept = kept
        delivery, self._delivery = self._delivery, self.app  # kept whatever the delivery
        try:
            yield kept
        finally:
            self.app.kept = None
            self._delivery = delivery

    def send(
        self, request: SignedRequest, url: str | None = None, *, headers: Headers = None
    ) -> requests.Response:
        """Send a kept request (to ``url``, or the app's request URL); ``headers`` are added,
        e.g. ``X-Slack-Retry-Num`` for Slack's redelivery of a request it saw no answer to.
        A slash command's ack is shown as Slack shows it, as when it is typed."""
        response = self.app.send(request, url, headers)
        self.show_answer(request, response)
        return response

    def show_answer(self, request: SignedRequest, response: requests.Response) -> None:
        """Show the app's acknowledgement of a kept request as Slack does: a slash command's,
        in the channel it was typed in, to the person who typed it."""
        fields = parse_qs(request.body)
        if not ("command" in fields and "response_url" in fields):
            return
        hook_id = fields["response_url"][0].rsplit("/", 1)[-1]
        if self.grants.issued(hook_id):  # not a response_url of a test's own making
            self._show_command_ack(fields["command"][0], hook_id, response)

    def post_to_app(
        self,
        body: str,
        content_type: str = "application/x-www-form-urlencoded",
        *,
        headers: Headers = None,
        timestamp: int | None = None,
    ) -> requests.Response:
        """Send any signed body, e.g. one with a stale ``timestamp`` the app must refuse."""
        return self.app.post(body, content_type, headers, timestamp)

    def event(self, event: JSON, *, headers: Headers = None) -> requests.Response:
        """Deliver one Events API callback wrapping ``event``."""
        if isinstance(event.get("user"), str):
            self.workspace.add_user(event["user"])
        envelope = payloads.event_callback(
            self.workspace.identity,
            token=self.verification_token,
            event=event,
            event_id=f"Ev{next(self._event_serial):08d}",
        )
        return self._delivery.post_json(envelope, headers)

    def app_home_opened(self, user_id: str) -> requests.Response:
        """``user_id`` opens the app's Home tab."""
        event: JSON = {
            "type": "app_home_opened",
            "user": user_id,
            "channel": self.workspace.dm_channel(user_id),
            "tab": "home",
            "event_ts": payloads.now_ts(),
        }
        if view := self.workspace.home_view(user_id):
            event["view"] = view
        return self.event(event)

    def app_uninstalled(self) -> requests.Response:
        """Uninstall the app: its tokens stop working, then Slack tells the app."""
        self.grants.revoke()
        return self.event({"type": "app_uninstalled", "event_ts": payloads.now_ts()})

    def tokens_revoked(self) -> requests.Response:
        """Revoke the bot's tokens and tell the app with a ``tokens_revoked`` event."""
        self.grants.revoke()
        event = {
            "type": "tokens_revoked",
            "tokens": {"oauth": [], "bot": [self.workspace.identity.bot_user_id]},
            "event_ts": payloads.now_ts(),
        }
        return self.event(event)

    # -- plumbing ------------------------------------------------------------------

    def _member(self, user_id: str, user_name: str | None) -> str:
        # Anyone who acts is in the workspace; users.info must know them.
        self.workspace.add_user(user_id, user_name)
        return self.workspace.user_name(user_id) or user_id.lower()

    def _user_ref(self, user_id: str) -> JSON:
        return payloads.user_ref(self.workspace.identity, user_id, self._member(user_id, None))

    def _response_url(self, hook_id: str) -> str:
        return f"{self.response_base_url}/response/{hook_id}"

    def _send_interaction(self, payload: JSON, headers: Headers) -> requests.Response:
        return self._delivery.post_form({"payload": json.dumps(payload)}, headers)

    def _show_command_ack(self, command: str, hook_id: str, response: requests.Response) -> None:
        # Slack shows a slash command's ack body as if posted to its response_url,
        # and tells the user in an ephemeral from Slackbot when the app failed.
        hook = self.grants.hook(hook_id)
        body = _ack_body(response)
        try:
            if response.status_code != 200:
                raise ApiError("dispatch_failed")
            if body and (body.get("text") or body.get("blocks")):
                self.api.apply_response(hook, body)
        except ApiError as error:
            failure = f'{command} failed with the error "{error.error}"'
            self.workspace.add_message(
                Message(
                    self.workspace.next_ts(),
                    hook.channel,
                    SLACKBOT,
                    failure,
                    ephemeral_to=hook.user_id,
                )
            )

    def _apply_response_action(self, user_id: str, response: requests.Response) -> None:
        # The app answers a submission with errors (the modal stays), with a view that takes
        # the submitted one's place (update), or with nothing (it closes).
        if response.status_code != 200:
            return  # Slack keeps the modal open and shows an error.
        body = _ack_body(response) or {}
        if body.get("response_action") == "update":
            (*_, top) = self.workspace.modals(user_id)
            view = view_param({"view": body.get("view")}, "modal")
            self.workspace.store_view(self.api.stored_view(view, top["id"]))
        elif body.get("response_action") != "errors":
            self.workspace.close_modal(user_id)


def _ack_body(response: requests.Response) -> JSON | None:
    """The message in an ack: a JSON object, plain text as ``{"text": ...}``, or None."""
    if response.status_code != 200 or not response.content.strip():
        return None
    try:
        decoded = response.json()
    except ValueError:
        return {"text": response.text}
    return decoded if isinstance(decoded, dict) else None


def _entered_state(view_blocks: list[JSON], values: Mapping[str | tuple[str, str], Any]) -> JSON:
    """``state.values`` of a modal after the user entered ``values``.

    A key is an action_id, or (block_id, action_id) where action ids repeat across blocks.
    """
    block_of = {
        str(element.get("action_id")): block_id
        for block_id, element in block_kit.interactive_elements(view_blocks)
    }
    entered: dict[tuple[str, str], Any] = {}
    for key, value in values.items():
        if isinstance(key, str):
            if key not in block_of:
                raise LookupError(f"no input with action_id {key!r} in the modal")
            key = (block_of[key], key)
        entered[key] = value
    return block_kit.entered_state(view_blocks, entered)
