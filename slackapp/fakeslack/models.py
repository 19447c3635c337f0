"""The values the fake hands to tests: stored messages, their buttons, recorded calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from slackapp.fakeslack import blocks as block_kit

JSON = dict[str, Any]
"""A decoded JSON object, as Slack sends and receives them."""


@dataclass(frozen=True)
class Identity:
    """Who the fake workspace and the installed app are."""

    team_id: str = "T0001"
    team_domain: str = "varulv-test"
    team_name: str = "Varulv Test"
    bot_user_id: str = "UBOT"
    bot_id: str = "B0001"
    app_id: str = "A0001"
    bot_name: str = "varulv"
    bot_scopes: str = "chat:write,commands,im:write,users:read"
    enterprise_id: str | None = None
    """The Enterprise Grid organisation the workspace belongs to, if any."""
    enterprise_name: str = "Varulv Org"
    org_wide: bool = False
    """The app is installed on the whole organisation (Slack's ``is_enterprise_install``):
    one installation for every workspace of it, stored under the organisation alone."""

    @property
    def enterprise(self) -> dict[str, str] | None:
        """The ``enterprise`` object of payloads and OAuth answers."""
        if self.enterprise_id is None:
            return None
        return {"id": self.enterprise_id, "name": self.enterprise_name}

    @property
    def installed_on(self) -> str:
        """What the app's installation belongs to: the organisation when org-wide."""
        return self.enterprise_id if self.org_wide and self.enterprise_id else self.team_id


@dataclass(frozen=True)
class Button:
    """A button element found in a message or view, with the ids Slack would send back."""

    action_id: str
    block_id: str
    text: str
    value: str | None
    element: JSON


@dataclass(frozen=True)
class Message:
    """One message as a chat client sees it.

    Frozen: the fake replaces the stored copy on edits, so a test holding a
    Message holds a consistent snapshot while the app keeps working.
    """

    ts: str
    channel: str
    user: str
    text: str
    blocks: list[JSON] = field(default_factory=list)
    ephemeral_to: str | None = None
    bot_id: str | None = None
    app_id: str | None = None
    team: str | None = None
    edited_ts: str | None = None

    @property
    def is_ephemeral(self) -> bool:
        """Only ``ephemeral_to`` sees this message."""
        return self.ephemeral_to is not None

    @property
    def rendered_text(self) -> str:
        """The text a reader sees: blocks when present, else the fallback ``text``."""
        return block_kit.readable_text(self.blocks) if self.blocks else self.text

    def buttons(self) -> list[Button]:
        """Every button in the message, in reading order."""
        return buttons_in(self.blocks)

    def button(self, label: str) -> Button:
        """The button whose text or action_id is ``label``; LookupError lists the choices."""
        return find_button(self.blocks, label, where=f"message {self.ts} in {self.channel}")

    def element(self, action_id: str) -> tuple[str, JSON]:
        """The interactive element with ``action_id`` and the block_id that holds it."""
        for block_id, element in block_kit.interactive_elements(self.blocks):
            if element.get("action_id") == action_id:
                return block_id, element
        raise LookupError(f"no element with action_id {action_id!r} in message {self.ts}")

    def as_payload(self) -> JSON:
        """The message as Slack embeds it in interaction payloads and API responses."""
        payload: JSON = {
            "type": "message",
            "user": self.user,
            "ts": self.ts,
            "text": self.text,
            "team": self.team,
            "blocks": self.blocks,
        }
        if self.bot_id:
            payload["bot_id"] = self.bot_id
            payload["app_id"] = self.app_id
        if self.edited_ts:
            payload["edited"] = {"user": self.user, "ts": self.edited_ts}
        return payload


@dataclass(frozen=True)
class Call:
    """One request the app made to the fake: a Web API method or a response_url post."""

    method: str
    params: JSON
    response: JSON
    at: float
    status: int = 200
    token: str | None = None

    @property
    def ok(self) -> bool:
        """Whether Slack would have accepted the call."""
        return bool(self.response.get("ok"))


def buttons_in(blocks: list[JSON]) -> list[Button]:
    """Every button element in ``blocks``, in reading order."""
    return [
        Button(
            action_id=str(element.get("action_id", "")),
            block_id=block_id,
            text=block_kit.text_of(element.get("text")),
            value=element.get("value"),
            element=element,
        )
        for block_id, element in block_kit.interactive_elements(blocks)
        if element.get("type") == "button"
    ]


def find_button(blocks: list[JSON], label: str, *, where: str = "blocks") -> Button:
    """The button labelled ``label`` (its text, else its action_id)."""
    buttons = buttons_in(blocks)
    for button in buttons:
        if button.text == label:
            return button
    for button in buttons:
        if button.action_id == label:
            return button
    choices = ", ".join(f"{b.text!r} ({b.action_id})" for b in buttons) or "none"
    raise LookupError(f"no button {label!r} in {where}; buttons: {choices}")
