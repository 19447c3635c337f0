"""The settings modal, its refusals and the channel's summary, compared with what they were
for the same inputs (``settings_screens.json``, rendered before the settings were declared in
one table): the generic rendering and parsing must not change a byte of any of them.

A setting added since is not in that file: its field and its words in the summary are left out
of the comparison (the rest must still match to the byte), and its own tests hold them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
from sqlalchemy import Table

from slackapp.blocks.settings import FIELDS, Pick, Seconds, Switch, lengths, settings_modal, summary
from slackapp.blocks.words import Words, words
from slackapp.db.models import ChannelSettings
from slackapp.game.lines import Language
from slackapp.game.permissions import Change
from slackapp.game.seasons import SeasonLength
from slackapp.game.settings import (
    OPEN_TO_EVERYONE,
    SETTINGS,
    ChannelChoice,
    Kind,
    changes_asked,
    default_choice,
    offered,
)
from slackapp.listeners.views import read_choice

SCREENS = json.loads((Path(__file__).parent / "settings_screens.json").read_text())
DRAWN_THEN = frozenset(
    block["block_id"]
    for shown in SCREENS["modals"]
    for block in shown["view"]["blocks"]
    if block.get("block_id")
)
"""The settings the file was drawn with (each field's block id is its setting's name)."""
SINCE = tuple(setting for setting in SETTINGS if setting.name not in DRAWN_THEN)
"""The settings added since, default for every case of the file."""


def as_then(view: dict[str, Any]) -> dict[str, Any]:
    """The modal without the fields of the settings added since."""
    since = {setting.name for setting in SINCE}
    return {**view, "blocks": [b for b in view["blocks"] if b.get("block_id") not in since]}


def summary_then(choice: ChannelChoice, spoken: Words) -> str:
    """The channel's summary without the words of the settings added since."""
    said = summary(choice, spoken)
    for setting in SINCE:
        field = FIELDS[setting.name]
        if not isinstance(field, Seconds) and field.said is not None:
            said = said.replace(f", {field.said(choice.value(setting), spoken)}", "", 1)
    return said


def choice_of(case: dict[str, Any]) -> ChannelChoice:
    return ChannelChoice(  # by name: a setting added since takes its default
        night_seconds=case["night"],
        day_seconds=case["day"],
        vote_seconds=case["vote"],
        bots_allowed=case["bots"],
        season=SeasonLength(case["season"]),
        language=Language(case["language"]),
        open_to_everyone=bool(case["openness"]),
    )


@pytest.mark.parametrize("shown", SCREENS["modals"], ids=lambda shown: shown["case"]["channel"])
def test_the_modal_renders_as_before(shown: dict[str, Any]) -> None:
    case = shown["case"]
    admin = case["openness"] is not None  # the openness was shown to admins only
    view = settings_modal(case["channel"], choice_of(case), offered(admin))
    assert json.dumps(as_then(view.to_dict()), ensure_ascii=False) == json.dumps(
        shown["view"], ensure_ascii=False
    )


@pytest.mark.parametrize("said", SCREENS["summaries"])
def test_the_summary_reads_as_before(said: dict[str, Any]) -> None:
    choice, spoken = choice_of(said["case"]), words(Language(said["words"]))
    assert (summary_then(choice, spoken), lengths(choice, spoken)) == (
        said["summary"],
        said["lengths"],
    )


@pytest.mark.parametrize("submitted", SCREENS["submissions"])
def test_a_submission_is_read_and_refused_as_before(submitted: dict[str, Any]) -> None:
    blocks = [
        {"block_id": "language", "element": {"initial_option": {"value": submitted["shown"]}}}
    ]
    state = {name: {name: value} for name, value in submitted["values"].items()}
    choice, errors = read_choice({"blocks": blocks, "state": {"values": state}})
    read = None
    if choice is not None:
        read = [
            choice.night_seconds,
            choice.day_seconds,
            choice.vote_seconds,
            choice.bots_allowed,
            choice.season.value,
            choice.language.value,
        ]
    assert read == submitted["choice"]
    assert list(errors.items()) == list(submitted["errors"].items()), "the same words, in order"


def test_every_setting_has_its_column_its_field_and_an_allowed_default() -> None:
    columns = cast(Table, ChannelSettings.__table__).columns
    kinds = {Kind.SECONDS: Seconds, Kind.SWITCH: Switch, Kind.PICK: Pick}
    for setting in SETTINGS:
        assert setting.name in columns, f"channel_settings keeps {setting.name}"
        assert isinstance(FIELDS[setting.name], kinds[setting.kind]), setting.name
        assert setting.allows(setting.default), setting.name
    assert list(FIELDS) == [setting.name for setting in SETTINGS]
    assert "night_seconds" in DRAWN_THEN and "open_to_everyone" in DRAWN_THEN, "read from the file"


def test_a_setting_with_its_own_permission_is_asked_for_only_when_it_changes() -> None:
    now = default_choice({})
    assert changes_asked(replace(now, night_seconds=45, bots_allowed=False), now) == ()
    assert changes_asked(replace(now, open_to_everyone=None), now) == (), "not offered"
    assert changes_asked(replace(now, open_to_everyone=True), now) == (Change.OPENNESS,)
    assert OPEN_TO_EVERYONE in offered(is_admin=True)
    assert OPEN_TO_EVERYONE not in offered(is_admin=False)
