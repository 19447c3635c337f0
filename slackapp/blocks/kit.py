"""Block Kit as plain data: the few blocks and elements the screens use, as the JSON that
``chat.postMessage`` and ``chat.update`` take.

Every screen is drawn here rather than through slack_sdk's model classes: a burst of
deadlines redraws many boards at once, and building and validating models cost more than the
rest of a render. The same JSON is what slack_sdk's models would produce; the tests parse
every screen back into them (``Block.parse_all``) so Slack's limits stay checked there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Json = dict[str, Any]
"""A block, an element or a text object, as sent."""

SECTION_TEXT_LIMIT = 3000
"""Slack's limit on a section's text."""
BUTTON_TEXT_LIMIT = 75
"""Slack's limit on a button's text."""
BUTTON_LABEL_LIMIT = 75
"""Slack's limit on a button's ``accessibility_label``."""


def plain(text: str) -> Json:
    return {"type": "plain_text", "text": text, "emoji": True}


def mrkdwn(text: str) -> Json:
    return {"type": "mrkdwn", "text": text}


def escaped(text: str) -> str:
    """Text written into mrkdwn as it reads: Slack asks for &, < and > as &amp;, &lt; and &gt;,
    and reads a bare < as the start of a link or a mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def header(text: str) -> Json:
    return {"type": "header", "text": plain(text)}


def section(text: str) -> Json:
    return {"type": "section", "text": mrkdwn(text)}


def context(*texts: str) -> Json:
    return {"type": "context", "elements": [mrkdwn(text) for text in texts]}


def divider() -> Json:
    return {"type": "divider"}


def actions(elements: Sequence[Json]) -> Json:
    return {"type": "actions", "elements": list(elements)}


def button(
    text: str,
    action_id: str,
    value: str,
    *,
    style: str | None = None,
    label: str | None = None,
) -> Json:
    """A button whose text is cut to Slack's limit (a seat's display name can be long).

    ``label`` is what a screen reader says instead of a bare name ("Vote for Jane" for
    "Jane"); Slack calls it the button's ``accessibility_label``.
    """
    element: Json = {
        "type": "button",
        "text": plain(_cut(text, BUTTON_TEXT_LIMIT)),
        "action_id": action_id,
        "value": value,
    }
    if style is not None:
        element["style"] = style
    if label:
        element["accessibility_label"] = _cut(label, BUTTON_LABEL_LIMIT)
    return element


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
