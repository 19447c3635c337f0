"""The shape of Slack's payloads, checked before Bolt routes them.

Bolt takes the envelope of a request on trust: to find a listener it reads ``actions[0]``, the
``event`` and the ``view`` as Slack always sends them, and a signed body shaped otherwise makes
it fail with a 500. The server answers such a body 400 instead, as it does a body holding a
character or number PostgreSQL would refuse wherever it landed (NUL, a lone surrogate, an
infinite number or NaN, which JSON has no words for); what is inside
the envelope (ids, button values) is the listeners' to check.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

OBJECTS = ("user", "team", "channel", "container", "message", "enterprise", "view", "state")
"""Envelope fields that are objects (or absent, or null) in every payload Slack sends."""


UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
"""What PostgreSQL refuses in text and JSON, and Slack never sends: NUL, and halves of a
surrogate pair standing alone (no UTF-8 can hold them)."""


def malformed(body: Any) -> str | None:
    """What is wrong with a request's envelope, or None when Bolt can route it."""
    if not isinstance(body, dict):
        return "the body is not an object"
    if unstorable(body):
        return "a field holds what PostgreSQL cannot store (NUL, a lone surrogate, NaN)"
    for name in OBJECTS:
        if body.get(name) is not None and not isinstance(body[name], dict):
            return f"{name} is not an object"
    if not isinstance(body.get("callback_id", ""), str):
        return "callback_id is not a string"
    if body.get("response_url") is not None and not _web_url(body["response_url"]):
        return "response_url is not a web address"
    view = body.get("view")
    if view is not None and not isinstance(view.get("callback_id", ""), str):
        return "the view's callback_id is not a string"
    if body.get("type") in ("view_submission", "view_closed") and not (
        isinstance(view, dict) and isinstance(view.get("type"), str)
    ):
        return "the view has no type"  # Bolt reads it to route the body
    if body.get("type") == "block_actions" and "actions" in body:
        return _actions_problem(body["actions"])
    if body.get("type") == "view_submission":
        return _submission_problem(body)
    if "event" in body:  # Bolt reads it from any body that has one
        return _event_problem(body["event"])
    return None


def unstorable(body: Any) -> bool:
    """Whether any string in ``body`` (a key or a value, however deep) holds a character
    PostgreSQL cannot store, or any number is infinite or NaN (Python's JSON reads them, and
    PostgreSQL's refuses them), which would fail a statement far from here.

    >>> unstorable({"a": [1, 2.5, "x"]}), unstorable({"a": [float("-inf")]})
    (False, True)
    """
    pending = [body]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if UNSTORABLE.search(value):
                return True
        elif isinstance(value, float):
            if not math.isfinite(value):
                return True
        elif isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def _web_url(value: Any) -> bool:
    """An http(s) address with a host, as every ``response_url`` Slack sends is (a private
    answer to anything else fails in slack_sdk, which logs it as an error).

    >>> _web_url("https://hooks.slack.com/commands/T1/2/x"), _web_url("0:"), _web_url(5)
    (True, False, False)
    """
    if not isinstance(value, str):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


CONTEXT_IDS = ("enterprise_id", "team_id", "user_id", "channel_id")


def misnamed(context: Mapping[str, Any]) -> str | None:
    """Which of the ids Bolt found in a request (where it was made, by whom) is not a Slack id;
    None when all are, or absent. Every listener and the authorization go by these."""
    for name in CONTEXT_IDS:
        value = context.get(name)
        if value not in (None, "") and slack_id(value) != value:
            return f"{name} is not a Slack id"
    return None


def _actions_problem(actions: Any) -> str | None:
    if not isinstance(actions, list) or not actions:
        return "actions is not a list of actions"
    for action in actions:
        if not isinstance(action, dict) or not isinstance(action.get("action_id"), str):
            return "an action has no action_id"
        if not isinstance(action.get("block_id", ""), str):
            return "an action's block_id is not a string"
    return None


def _submission_problem(body: dict[str, Any]) -> str | None:
    """A modal's submission: who sent it, and what was entered, as Slack always shapes them;
    for a modal Varulv opens, only its own fields, each shaped as its element fills it."""
    user, view = body.get("user"), body.get("view")
    if not isinstance(user, dict) or not slack_id(user.get("id")):
        return "the submission has no user"
    if not isinstance(view, dict):
        return "the submission has no view"
    if not isinstance(view.get("private_metadata", ""), str):
        return "the view's private_metadata is not a string"
    state = view.get("state", {})
    values = state.get("values", {}) if isinstance(state, dict) else None
    if not isinstance(values, dict):
        return "the view's state has no values"
    fields = modal_fields().get(str(view.get("callback_id", "")))
    for block_id, block in values.items():
        if not isinstance(block, dict) or not all(isinstance(a, dict) for a in block.values()):
            return "a block's state is not an object of actions"
        for action_id, entered in block.items():
            kind = fields.get((block_id, action_id)) if fields is not None else None
            if fields is not None and kind is None:
                return "a value entered is for no field of the modal"
            if problem := _entry_problem(entered, kind):
                return problem
    return None


def _text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _option(value: Any) -> bool:
    return value is None or (isinstance(value, dict) and isinstance(value.get("value"), str))


def _options(value: Any) -> bool:
    return isinstance(value, list) and all(_option(item) and item is not None for item in value)


ENTERED: dict[str, Callable[[Any], bool]] = {
    "value": _text,
    "selected_option": _option,
    "selected_options": _options,
    "selected_time": _text,
    "selected_date": _text,
    "selected_date_time": lambda value: value is None or type(value) is int,
    "selected_user": _text,
    "selected_users": _texts,
    "selected_conversation": _text,
    "selected_conversations": _texts,
    "selected_channel": _text,
    "selected_channels": _texts,
}
"""What each key of a field's state holds, as Slack sends it (None: left empty)."""

ENTERED_BY: dict[str, str] = {
    "plain_text_input": "value",
    "number_input": "value",
    "email_text_input": "value",
    "url_text_input": "value",
    "static_select": "selected_option",
    "external_select": "selected_option",
    "radio_buttons": "selected_option",
    "checkboxes": "selected_options",
    "multi_static_select": "selected_options",
    "multi_external_select": "selected_options",
    "timepicker": "selected_time",
    "datepicker": "selected_date",
    "datetimepicker": "selected_date_time",
    "users_select": "selected_user",
    "multi_users_select": "selected_users",
    "conversations_select": "selected_conversation",
    "multi_conversations_select": "selected_conversations",
    "channels_select": "selected_channel",
    "multi_channels_select": "selected_channels",
}
"""The key of a field's state that each kind of element fills."""


def _entry_problem(entered: dict[str, Any], kind: str | None) -> str | None:
    """What is wrong with one field's state; ``kind``: its element's type, when known."""
    if kind is not None and entered.get("type", kind) != kind:
        return "a field's state is of another kind of element"
    for key, holds in ENTERED.items():
        if key in entered and not holds(entered[key]):
            return f"a field's {key} is not shaped as Slack sends it"
    return None


def fields_of(view: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """Each field of a modal as built (``View.to_dict()``): (block_id, action_id) → the type
    of its element, for every element a person can fill in or pick."""
    fields: dict[tuple[str, str], str] = {}
    for block in view.get("blocks", []):
        if block.get("type") == "input":
            elements = [block["element"]]
        elif block.get("type") == "section" and "accessory" in block:
            elements = [block["accessory"]]
        else:
            elements = block.get("elements", []) if block.get("type") == "actions" else []
        for element in elements:
            if element.get("type") in ENTERED_BY:
                fields[(str(block.get("block_id")), str(element.get("action_id")))] = element[
                    "type"
                ]
    return fields


@functools.cache
def modal_fields() -> dict[str, dict[tuple[str, str], str]]:
    """Per callback_id of every modal Varulv opens, its fields, read off the modal itself."""
    from slackapp.blocks.modals import every_modal  # the screens are built on Slack's models

    fields: dict[str, dict[tuple[str, str], str]] = {}
    for view in every_modal():
        built = view.to_dict()
        fields.setdefault(str(built["callback_id"]), {}).update(fields_of(built))
    return fields


def _event_problem(event: Any) -> str | None:
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return "the event has no type"
    for inner in ("message", "previous_message", "view"):
        if event.get(inner) is not None and not isinstance(event[inner], dict):
            return f"the event's {inner} is not an object"
    for text in ("user", "tab", "channel"):
        if event.get(text) is not None and not isinstance(event[text], (str, dict)):
            return f"the event's {text} is neither a string nor an object"
    if event["type"] == "tokens_revoked":
        tokens = event.get("tokens")
        if not isinstance(tokens, dict) or not all(
            isinstance(tokens.get(kind, []), list)
            and all(isinstance(user, str) for user in tokens.get(kind, []))
            for kind in ("oauth", "bot")
        ):
            return "the revoked tokens are not lists of user ids"
    return None


SLACK_ID = re.compile(r"[A-Z0-9]{2,32}")
"""A team, channel or user id as Slack writes them, and short enough for the database."""
NAME_LENGTH = 80


def slack_id(raw: object) -> str:
    """``raw`` if it is a Slack id, else "" (which names nobody, so it can do nothing)."""
    return raw if isinstance(raw, str) and SLACK_ID.fullmatch(raw) else ""


def plain_text(raw: str) -> str:
    """``raw`` without control characters or lone surrogates (neither can be stored), and
    with every run of spaces, tabs and line breaks made one space."""
    kept = "".join(
        " " if character.isspace() else character
        for character in raw
        if character.isspace() or unicodedata.category(character) not in ("Cc", "Cs")
    )
    return " ".join(kept.split())


def display_name(raw: object, fallback: str) -> str:
    """A person's name as the payload gives it, as plain text cut to what a seat keeps."""
    name = plain_text(raw) if isinstance(raw, str) else ""
    return (name or fallback)[:NAME_LENGTH]


def profile_name(user: object, fallback: str) -> str:
    """The name Slack shows for a users.info ``user``: the profile's display name, else its
    real name, else ``fallback``."""
    profile = user.get("profile") if isinstance(user, dict) else None
    if not isinstance(profile, dict):
        return fallback
    return display_name(
        profile.get("display_name"), display_name(profile.get("real_name"), fallback)
    )
