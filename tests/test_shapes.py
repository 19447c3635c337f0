"""The shape checks know every modal Varulv opens, and every field of each, from the modals."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest

from slackapp.blocks.modals import every_modal
from slackapp.shapes import ENTERED, ENTERED_BY, malformed, modal_fields

PACKAGE = Path(__file__).resolve().parents[1] / "slackapp"


def resolved(node: ast.expr | None, module: object) -> object:
    """A constant, a name or a dotted name as ``module`` sees it; "" for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return getattr(module, node.id, "")
    if isinstance(node, ast.Attribute):
        return getattr(resolved(node.value, module), node.attr, "")
    return ""


def modals_built_in_the_source() -> dict[str, str]:
    """Each ``View(type="modal", callback_id=NAME, submit=...)`` in the app: its callback_id →
    where. A modal without a submit button (a notice) sends nothing back to check."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "View"):
                continue
            keywords = {k.arg: k.value for k in node.keywords}
            kind = keywords.get("type")
            if not (isinstance(kind, ast.Constant) and kind.value == "modal"):
                continue
            if "submit" not in keywords:
                continue
            named = keywords.get("callback_id")
            callback_id = str(resolved(named, importlib.import_module(module)))
            assert callback_id, f"{path}:{node.lineno}: its callback_id cannot be read"
            found[callback_id] = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
    return found


def test_every_modal_the_app_builds_is_one_the_shape_checks_know() -> None:
    built = modals_built_in_the_source()
    assert built, "the app builds its modals with slack_sdk's View"
    missing = {name: where for name, where in built.items() if name not in modal_fields()}
    assert missing == {}, "add the modal to slackapp/blocks/modals.py"


def test_every_field_of_every_modal_is_checked() -> None:
    for view in every_modal():
        built = view.to_dict()
        inputs = [
            (block["block_id"], block["element"]["action_id"], block["element"]["type"])
            for block in built["blocks"]
            if block["type"] == "input"
        ]
        fields = modal_fields()[built["callback_id"]]
        assert inputs and {(b, a): kind for b, a, kind in inputs} == fields
        for _, _, kind in inputs:
            assert ENTERED_BY[kind] in ENTERED, kind


def submission(callback_id: str, values: dict[str, Any], **view: Any) -> dict[str, Any]:
    return {
        "type": "view_submission",
        "user": {"id": "U0ANNA"},
        "view": {
            "type": "modal",
            "callback_id": callback_id,
            "state": {"values": values},
            **view,
        },
    }


@pytest.mark.parametrize(
    "entered", ["x", 5, [None], [{}], {}, {"value": 5}, {"text": "A quarter"}, True]
)
def test_a_pick_that_is_no_option_is_malformed(entered: Any) -> None:
    values = {"season": {"season": {"type": "radio_buttons", "selected_option": entered}}}
    assert malformed(submission("varulv_settings", values)) is not None


def test_what_slack_sends_is_not_malformed() -> None:
    values = {
        "season": {"season": {"type": "radio_buttons", "selected_option": {"value": "month"}}},
        "night_seconds": {"night_seconds": {"type": "number_input", "value": None}},
        "bots_allowed": {"bots_allowed": {"type": "checkboxes", "selected_options": []}},
    }
    assert malformed(submission("varulv_settings", values)) is None
    schedule = {"at": {"at": {"type": "timepicker", "selected_time": "15:00"}}}
    assert malformed(submission("varulv_schedule", schedule)) is None


def test_a_view_without_a_type_is_malformed() -> None:
    body = submission("varulv_settings", {})
    del body["view"]["type"]
    assert malformed(body) == "the view has no type"
    assert malformed({**body, "type": "view_closed"}) == "the view has no type"
