"""Every modal Varulv opens, each built with every field it can show: the shape checks read
their fields off these (``slackapp.shapes.modal_fields``), so a field added to a modal is
checked as soon as it is built."""

from __future__ import annotations

from datetime import time

from slack_sdk.models.views import View

from slackapp.blocks.schedule import schedule_modal
from slackapp.blocks.settings import settings_modal
from slackapp.game.schedule import WORKDAYS, Schedule
from slackapp.game.settings import LENGTHS, SETTINGS, default_choice

EXAMPLE_CHANNEL = "C0EXAMPLE"


def every_modal() -> list[View]:
    """One of each modal, shown with all its fields (the schedule's removal only shows when
    the channel has a standing table, the settings' openness only to an admin)."""
    lowest = default_choice({setting.name: setting.bounds[0] for setting in LENGTHS})
    standing = Schedule(frozenset(WORKDAYS), time(15, 0), "UTC", 10)
    return [
        settings_modal(EXAMPLE_CHANNEL, lowest, SETTINGS),
        schedule_modal(EXAMPLE_CHANNEL, standing, None, None, "UTC"),
    ]
