"""The shape of Slack's payloads, checked before Bolt routes them.

Bolt takes the envelope of a request on trust: to find a listener it reads ``actions[0]``, the
``event`` and the ``view`` as Slack always sends them, and a signed body shaped otherwise makes
it fail with a 500. The server answers such a body 400 instead; what is inside the envelope
(ids, button values) is the listeners' to check.
"""

from __future__ import annotations

import re
from typing import Any

OBJECTS = ("user", "team", "channel", "container", "message", "enterprise", "view", "state")
"""Envelope fields that are objects (or absent, or null) in every payload Slack sends."""


def malformed(body: Any) -> str | None:
    """What is wrong with a request's envelope, or None when Bolt can route it."""
    if not isinstance(body, dict):
        return "the body is not an object"
    for name in OBJECTS:
        if body.get(name) is not None and not isinstance(body[name], dict):
            return f"{name} is not an object"
    if not isinstance(body.get("callback_id", ""), str):
        return "callback_id is not a string"
    view = body.get("view")
    if view is not None and not isinstance(view.get("callback_id", ""), str):
        return "the view's callback_id is not a string"
    if body.get("type") == "block_actions" and "actions" in body:
        return _actions_problem(body["actions"])
    if "event" in body:  # Bolt reads it from any body that has one
        return _event_problem(body["event"])
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


def _event_problem(event: Any) -> str | None:
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return "the event has no type"
    for inner in ("message", "previous_message"):
        if event.get(inner) is not None and not isinstance(event[inner], dict):
            return f"the event's {inner} is not an object"
    return None


SLACK_ID = re.compile(r"^[A-Z0-9]{2,32}$")
"""A team, channel or user id as Slack writes them, and short enough for the database."""
NAME_LENGTH = 80


def slack_id(raw: object) -> str:
    """``raw`` if it is a Slack id, else "" (which names nobody, so it can do nothing)."""
    return raw if isinstance(raw, str) and SLACK_ID.match(raw) else ""


def display_name(raw: object, fallback: str) -> str:
    """A person's name as the payload gives it, cut to what a seat keeps."""
    name = raw if isinstance(raw, str) and raw.strip() else fallback
    return name[:NAME_LENGTH]
