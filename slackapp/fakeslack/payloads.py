"""The bodies Slack sends to an app, field for field.

Pure functions: the caller supplies who, where and which ids; these only
arrange them the way Slack's real payloads are arranged.
"""

from __future__ import annotations

import time
from typing import Any

from slackapp.fakeslack import blocks as block_kit
from slackapp.fakeslack.models import JSON, Identity, Message

_NOT_STATE = frozenset({"action_id", "block_id", "action_ts", "placeholder"})
"""Keys of an ``actions`` entry that are not part of the element's state."""


def now_ts() -> str:
    """An ``action_ts``/``event_ts`` style timestamp for now."""
    return f"{time.time():.6f}"


def user_ref(me: Identity, user_id: str, user_name: str) -> JSON:
    """The ``user`` object of interaction payloads."""
    return {"id": user_id, "username": user_name, "name": user_name, "team_id": me.team_id}


def team_ref(me: Identity) -> JSON:
    """The ``team`` object of interaction payloads (naming its organisation in a Grid)."""
    team: JSON = {"id": me.team_id, "domain": me.team_domain}
    if me.enterprise_id is not None:
        team |= {"enterprise_id": me.enterprise_id, "enterprise_name": me.enterprise_name}
    return team


def slash_command(
    me: Identity,
    *,
    token: str,
    user_id: str,
    user_name: str,
    channel_id: str,
    channel_name: str,
    command: str,
    text: str,
    response_url: str,
    trigger_id: str,
) -> dict[str, str]:
    """The form fields of a slash command invocation, in Slack's order."""
    grid = {}
    if me.enterprise_id is not None:
        grid = {"enterprise_id": me.enterprise_id, "enterprise_name": me.enterprise_name}
    return {
        "token": token,
        "team_id": me.team_id,
        "team_domain": me.team_domain,
        **grid,
        "channel_id": channel_id,
        "channel_name": channel_name,
        "user_id": user_id,
        "user_name": user_name,
        "command": command,
        "text": text,
        "api_app_id": me.app_id,
        "is_enterprise_install": "true" if me.org_wide else "false",
        "response_url": response_url,
        "trigger_id": trigger_id,
    }


def action(block_id: str, element: JSON, value: Any = None) -> JSON:
    """One entry of ``actions``: what the user did to ``element``.

    ``value`` overrides a button's value, or is the choice for selects and
    overflow menus (an option value, a user id, ...).
    """
    kind = str(element.get("type"))
    entry: JSON = {
        "type": kind,
        "action_id": element.get("action_id"),
        "block_id": block_id,
        "action_ts": now_ts(),
    }
    if kind == "button":
        entry["text"] = element.get("text")
        button_value = element.get("value") if value is None else value
        if button_value is not None:
            entry["value"] = button_value
        if "style" in element:
            entry["style"] = element["style"]
    elif kind == "overflow":
        entry["selected_option"] = block_kit.option(element, str(value))
    else:
        chosen = block_kit.state_entry(element, value)
        entry.update({k: v for k, v in chosen.items() if k != "type"})
    if "placeholder" in element:
        entry["placeholder"] = element["placeholder"]
    return entry


def state_after(blocks: list[JSON], acted: JSON) -> JSON:
    """``state.values`` for ``blocks`` once ``acted`` has happened."""
    values = block_kit.initial_state(blocks)
    block_values = values.get(acted["block_id"], {})
    if acted["action_id"] in block_values:
        block_values[acted["action_id"]] = {k: v for k, v in acted.items() if k not in _NOT_STATE}
    return {"values": values}


def message_actions(
    me: Identity,
    *,
    token: str,
    user: JSON,
    message: Message,
    channel_name: str,
    acted: JSON,
    trigger_id: str,
    response_url: str,
) -> JSON:
    """A ``block_actions`` payload for a click in a message.

    Like Slack, an ephemeral message's payload carries no ``message``.
    """
    container: JSON = {
        "type": "message",
        "message_ts": message.ts,
        "channel_id": message.channel,
        "is_ephemeral": message.is_ephemeral,
    }
    payload: JSON = {
        "type": "block_actions",
        "user": user,
        "api_app_id": me.app_id,
        "token": token,
        "container": container,
        "trigger_id": trigger_id,
        "team": team_ref(me),
        "enterprise": me.enterprise,
        "is_enterprise_install": me.org_wide,
        "channel": {"id": message.channel, "name": channel_name},
        "state": state_after(message.blocks, acted),
        "response_url": response_url,
        "actions": [acted],
    }
    if not message.is_ephemeral:
        payload["message"] = message.as_payload()
    return payload


def view_actions(
    me: Identity, *, token: str, user: JSON, view: JSON, acted: JSON, trigger_id: str
) -> JSON:
    """A ``block_actions`` payload for a click in a Home tab or modal."""
    shown = dict(view, state=state_after(view["blocks"], acted))
    return {
        "type": "block_actions",
        "user": user,
        "api_app_id": me.app_id,
        "token": token,
        "container": {"type": "view", "view_id": view["id"]},
        "trigger_id": trigger_id,
        "team": team_ref(me),
        "enterprise": me.enterprise,
        "is_enterprise_install": me.org_wide,
        "view": shown,
        "actions": [acted],
    }


def view_submission(
    me: Identity, *, token: str, user: JSON, view: JSON, state: JSON, trigger_id: str
) -> JSON:
    """A ``view_submission`` payload for pressing a modal's submit button."""
    return {
        "type": "view_submission",
        "team": team_ref(me),
        "user": user,
        "api_app_id": me.app_id,
        "token": token,
        "trigger_id": trigger_id,
        "view": dict(view, state=state),
        "response_urls": [],
        "enterprise": me.enterprise,
        "is_enterprise_install": me.org_wide,
    }


def event_callback(me: Identity, *, token: str, event: JSON, event_id: str) -> JSON:
    """The Events API envelope around ``event``. An organisation-wide installation's
    authorization names the organisation and no workspace."""
    envelope: JSON = {"token": token, "team_id": me.team_id}
    if me.enterprise_id is not None:
        envelope["enterprise_id"] = me.enterprise_id
    return {
        **envelope,
        "api_app_id": me.app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": me.enterprise_id,
                "team_id": None if me.org_wide else me.team_id,
                "user_id": me.bot_user_id,
                "is_bot": True,
                "is_enterprise_install": me.org_wide,
            }
        ],
        "is_ext_shared_channel": False,
        "context_team_id": me.team_id,
        "context_enterprise_id": me.enterprise_id,
    }
