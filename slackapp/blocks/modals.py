"""Every modal Varulv opens, each built with every field it can show: the shape checks read
their fields off these (``slackapp.shapes.modal_fields``), so a field added to a modal is
checked as soon as it is built."""

from __future__ import annotations

from datetime import time

from slack_sdk.models.views import View

from slackapp.blocks.schedule import schedule_modal
from slackapp.blocks.settings import settings_modal
from slackapp.blocks.words import N_
from slackapp.game.schedule import WORKDAYS, Schedule
from slackapp.game.settings import LENGTHS, SETTINGS, default_choice

EXAMPLE_CHANNEL = "C0EXAMPLE"

NO_CHANNEL = N_("This form doesn't say which channel it is for. Open it again with {command}.")
NO_DATABASE = N_("Varulv can't reach its database right now. Try again.")
"""What a modal says next to its first field when it cannot be saved at all."""


def every_modal() -> list[View]:
    """One of each modal, shown with all its fields (the schedule's removal only shows when
    the channel has a standing table, the settings' openness only to an admin)."""
    lowest = default_choice({setting.name: setting.bounds[0] for setting in LENGTHS})
    standing = Schedule(frozenset(WORKDAYS), time(15, 0), "UTC", 10)
    return [
        settings_modal(EXAMPLE_CHANNEL, lowest, SETTINGS),
        schedule_modal(EXAMPLE_CHANNEL, standing, None, None, "UTC"),
    ]
