"""Just enough Block Kit to store, check and interact with blocks like Slack does."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
MAX_SECTION_TEXT = 3000
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_BUTTON_LABEL = 75

# What a stateful element contributes to ``state.values`` before anyone touches it.
_EMPTY_STATE: dict[str, tuple[str, str, Any]] = {
    # element type: (state key, initial_* key in the element, value when unset)
    "static_select": ("selected_option", "initial_option", None),
    "external_select": ("selected_option", "initial_option", None),
    "radio_buttons": ("selected_option", "initial_option", None),
    "users_select": ("selected_user", "initial_user", None),
    "conversations_select": ("selected_conversation", "initial_conversation", None),
    "channels_select": ("selected_channel", "initial_channel", None),
    "multi_static_select": ("selected_options", "initial_options", []),
    "checkboxes": ("selected_options", "initial_options", []),
    "multi_users_select": ("selected_users", "initial_users", []),
    "plain_text_input": ("value", "initial_value", None),
    "number_input": ("value", "initial_value", None),
    "datepicker": ("selected_date", "initial_date", None),
    "timepicker": ("selected_time", "initial_time", None),
}


def interactive_elements(blocks: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (block_id, element) for every element a user can act on."""
    for block in blocks:
        block_id = str(block.get("block_id", ""))
        kind = block.get("type")
        if kind == "actions":
            for element in block.get("elements", []):
                yield block_id, element
        elif kind == "section" and isinstance(block.get("accessory"), dict):
            yield block_id, block["accessory"]
        elif kind == "input" and isinstance(block.get("element"), dict):
            yield block_id, block["element"]


def text_of(text_object: Any) -> str:
    """The string inside a text object (or a bare string)."""
    if isinstance(text_object, dict):
        return str(text_object.get("text", ""))
    return "" if text_object is None else str(text_object)


def as_shown(mrkdwn: str) -> str:
    """The characters Slack shows for its three escapes (``&amp;``, ``&lt;``, ``&gt;``): what a
    reader copies out of a code block."""
    return mrkdwn.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def readable_text(blocks: list[dict[str, Any]]) -> str:
    """Roughly what a reader sees in ``blocks``, one line per visible piece of text."""
    lines: list[str] = []
    for block in blocks:
        lines.append(text_of(block.get("text")))
        lines.extend(text_of(field) for field in block.get("fields", []))
        if block.get("type") == "context":
            lines.extend(text_of(element) for element in block.get("elements", []))
        if block.get("type") == "input":
            lines.append(text_of(block.get("label")))
    for _, element in interactive_elements(blocks):
        lines.append(text_of(element.get("text")))
    return "\n".join(line for line in lines if line)


MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


def with_names(mrkdwn: str, name_of: Callable[[str], str]) -> str:
    """mrkdwn as a reader sees it: each ``<@U…>`` shown as ``@`` and the person's name."""
    return MENTION.sub(lambda found: f"@{name_of(found.group(1))}", mrkdwn)


def shown_text(blocks: list[dict[str, Any]], text: str, name_of: Callable[[str], str]) -> str:
    """What a reader sees, as Slack draws it: mentions become names in mrkdwn text (a message's
    ``text`` without blocks is mrkdwn too), while ``plain_text`` shows ``<@U…>`` as typed."""

    def seen(text_object: Any) -> str:
        shown = text_of(text_object)
        is_mrkdwn = isinstance(text_object, dict) and text_object.get("type") == "mrkdwn"
        return with_names(shown, name_of) if is_mrkdwn else shown

    if not blocks:
        return with_names(text, name_of)
    lines: list[str] = []
    for block in blocks:
        lines.append(seen(block.get("text")))
        lines.extend(seen(field) for field in block.get("fields", []))
        if block.get("type") == "context":
            lines.extend(seen(element) for element in block.get("elements", []))
        if block.get("type") == "input":
            lines.append(seen(block.get("label")))
    for _, element in interactive_elements(blocks):
        lines.append(seen(element.get("text")))
    return "\n".join(line for line in lines if line)


def problems(blocks: Any, *, max_blocks: int) -> list[str]:
    """Why Slack would answer ``invalid_blocks``, or an empty list when it would not.

    Only the mistakes an app is likely to make are checked: shape, counts,
    duplicate ids and the length limits that real content runs into.
    """
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        return ["blocks must be a list of objects"]
    found: list[str] = []
    if len(blocks) > max_blocks:
        found.append(f"no more than {max_blocks} items allowed [json-pointer:/blocks]")
    block_ids = [b["block_id"] for b in blocks if "block_id" in b]
    for duplicate in sorted({i for i in block_ids if block_ids.count(i) > 1}):
        found.append(f"duplicate block_id {duplicate!r}")
    for index, block in enumerate(blocks):
        found.extend(f"{p} [json-pointer:/blocks/{index}]" for p in _block_problems(block))
    return found


def _block_problems(block: dict[str, Any]) -> Iterator[str]:
    if not isinstance(block.get("type"), str):
        yield "missing required field: type"
    if len(text_of(block.get("text"))) > MAX_SECTION_TEXT:
        yield f"must be less than {MAX_SECTION_TEXT + 1} characters"
    action_ids = [e.get("action_id") for _, e in interactive_elements([block]) if "action_id" in e]
    if len(action_ids) != len(set(action_ids)):
        yield "duplicate action_id in block"
    for _, element in interactive_elements([block]):
        if element.get("type") != "button":
            continue
        if len(text_of(element.get("text"))) > MAX_BUTTON_TEXT:
            yield f"button text must be less than {MAX_BUTTON_TEXT + 1} characters"
        if len(str(element.get("value", ""))) > MAX_BUTTON_VALUE:
            yield f"button value must be less than {MAX_BUTTON_VALUE + 1} characters"
        if len(str(element.get("accessibility_label", ""))) > MAX_BUTTON_LABEL:
            yield f"accessibility_label must be less than {MAX_BUTTON_LABEL + 1} characters"


def with_ids(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of ``blocks`` where every block and element has an id, as Slack stores them.

    Slack invents ids the app left out; here they derive from content and
    position, so they are unique within a message and the same on every run.
    """
    stored = copy.deepcopy(blocks)
    for index, block in enumerate(stored):
        block.setdefault("block_id", _made_up_id(index, block))
        for position, (_, element) in enumerate(interactive_elements([block])):
            element.setdefault("action_id", _made_up_id(position, element))
    return stored


def _made_up_id(position: int, thing: dict[str, Any]) -> str:
    digest = hashlib.sha1(json.dumps(thing, sort_keys=True).encode()).hexdigest()
    return f"{digest[:4]}{position}"


def initial_state(blocks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``state.values`` for ``blocks`` before the user changes anything."""
    values: dict[str, dict[str, Any]] = {}
    for block_id, element in interactive_elements(blocks):
        kind = str(element.get("type"))
        if kind not in _EMPTY_STATE:
            continue
        state_key, initial_key, unset = _EMPTY_STATE[kind]
        entry = {"type": kind, state_key: copy.deepcopy(element.get(initial_key, unset))}
        values.setdefault(block_id, {})[str(element.get("action_id"))] = entry
    return values


def state_entry(element: dict[str, Any], value: Any) -> dict[str, Any]:
    """The ``state.values`` entry for ``element`` once the user picked ``value``.

    ``value`` is what a person would choose: an option's value, a user id, the
    typed text, or a list of those for multi-selects; None (or []) when they left it empty.
    """
    kind = str(element.get("type"))
    if kind not in _EMPTY_STATE:
        raise ValueError(f"{kind} elements hold no state")
    state_key, _, unset = _EMPTY_STATE[kind]
    if value is None or value == []:  # emptied, or nothing picked
        return {"type": kind, state_key: copy.deepcopy(unset)}
    if state_key == "selected_option":
        return {"type": kind, state_key: option(element, str(value))}
    if state_key == "selected_options":
        return {"type": kind, state_key: [option(element, str(v)) for v in value]}
    return {"type": kind, state_key: value}


def option(element: dict[str, Any], value: str) -> dict[str, Any]:
    """The option of a select/radio/overflow element whose value is ``value``."""
    options = list(element.get("options", []))
    for group in element.get("option_groups", []):
        options.extend(group.get("options", []))
    for candidate in options:
        if candidate.get("value") == value:
            return dict(candidate)
    values = ", ".join(repr(o.get("value")) for o in options) or "none"
    raise LookupError(f"no option {value!r} in {element.get('action_id')}; options: {values}")


def entered_state(
    blocks: list[dict[str, Any]], entered: Mapping[tuple[str, str], Any]
) -> dict[str, dict[str, Any]]:
    """``state.values`` of a view once the user entered ``entered``.

    Keys are (block_id, action_id) of the elements touched, values what :func:`state_entry`
    takes; LookupError for an element the view does not hold or a choice it does not offer.
    """
    state = initial_state(blocks)
    elements = {
        (block_id, str(element.get("action_id"))): element
        for block_id, element in interactive_elements(blocks)
    }
    for (block_id, action_id), value in entered.items():
        element = elements.get((block_id, action_id))
        if element is None or str(element.get("type")) not in _EMPTY_STATE:
            raise LookupError(f"no input {action_id!r} in block {block_id!r}")
        state.setdefault(block_id, {})[action_id] = state_entry(element, value)
    return state
