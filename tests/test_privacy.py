"""PRIVACY.md's table of what is stored names every table Varulv keeps (its own and slack_sdk's),
and, for a channel's settings, every setting a channel has: someone deciding whether to add
Varulv reads that table as the whole of it."""

from __future__ import annotations

import re
from pathlib import Path

from slackapp.db.models import Base
from slackapp.db.slack_tables import slack_metadata
from slackapp.game.settings import SETTINGS

ROOT = Path(__file__).resolve().parent.parent
STORED = re.compile(r"^\| `([a-z_]+)`(?:, `([a-z_]+)`)? \| (.*) \|$", flags=re.MULTILINE)


def stored_rows() -> dict[str, str]:
    """Each table PRIVACY.md's *What is stored* names, and what its row says."""
    text = (ROOT / "PRIVACY.md").read_text()
    section = text.split("## What is stored", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for first, second, said in STORED.findall(section):
        for table in (first, second):
            if table:
                rows[table] = said
    return rows


def test_every_table_is_in_the_privacy_policy() -> None:
    tables = set(Base.metadata.tables) | set(slack_metadata().tables)
    assert tables - set(stored_rows()) == set()
    assert set(stored_rows()) - tables == set(), "a row for a table that is no more"


def test_every_channel_setting_is_in_its_row() -> None:
    said = stored_rows()["channel_settings"]
    words = {
        "night_seconds": "phase lengths",
        "day_seconds": "phase lengths",
        "vote_seconds": "phase lengths",
        "bots_allowed": "bots",
        "season": "seasons",
        "language": "language",
        "open_to_everyone": "to everyone",
    }
    assert {setting.name for setting in SETTINGS} == set(words), "a setting with no words here"
    assert [name for name, word in words.items() if word not in said] == []
