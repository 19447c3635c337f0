"""The standing table's form sets nothing a person did not pick: with no standing table yet, no
day is ticked and no time is filled in, and the form says so, in English and in Swedish."""

from __future__ import annotations

import json
from datetime import time
from typing import Any

import pytest

from slackapp.blocks import schedule as schedule_screen
from slackapp.blocks.words import words
from slackapp.game.lines import Language
from slackapp.game.schedule import Schedule


def element(modal: dict[str, Any], action_id: str) -> dict[str, Any]:
    for block in modal["blocks"]:
        found = block.get("element") or {}
        if found.get("action_id") == action_id:
            return dict(found)
    raise LookupError(action_id)


@pytest.mark.parametrize("language", list(Language))
def test_a_new_standing_table_starts_with_no_day_and_no_time(language: Language) -> None:
    w = words(language)
    modal = schedule_screen.schedule_modal("C1", None, None, None, "Europe/Stockholm", w)
    shown = modal.to_dict()
    assert "initial_options" not in element(shown, schedule_screen.DAYS)
    assert "initial_time" not in element(shown, schedule_screen.AT)
    assert element(shown, schedule_screen.ZONE)["initial_value"] == "Europe/Stockholm"
    said = w._("Pick the days and the time: nothing is set until you do.")
    assert said in json.dumps(shown, ensure_ascii=False)
    if language is Language.SWEDISH:
        assert "inget ställs in förrän du har gjort det" in said


def test_a_standing_table_shows_what_is_stored_and_no_pick_me_line() -> None:
    stored = Schedule(frozenset({1, 3}), time(10, 30), "America/New_York", 20)
    modal = schedule_screen.schedule_modal("C1", stored, None, None, "UTC").to_dict()
    assert element(modal, schedule_screen.AT)["initial_time"] == "10:30"
    days = element(modal, schedule_screen.DAYS)["initial_options"]
    assert [option["value"] for option in days] == ["1", "3"]
    assert "nothing is set until you do" not in json.dumps(modal)


def test_a_lost_zone_is_named_in_swedish_with_the_days_in_swedish() -> None:
    stored = Schedule(frozenset({0, 4}), time(15, 0), "Europe/Stockholm", 25)
    w = words(Language.SWEDISH)
    line = schedule_screen.status(stored, None, None, w, lost_zone="Mars/Olympus")
    assert line.startswith("Inställt på måndag och fredag kl. 15:00 i `Mars/Olympus`")
    assert "Europe/Stockholm" not in line, "the zone offered is in the form, not the line"
