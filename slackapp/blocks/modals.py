"""Every modal Varulv opens, each built with every field it can show: the shape checks read
their fields off these (``slackapp.shapes.modal_fields``), so a field added to a modal is
checked as soon as it is built."""

from __future__ import annotations

from datetime import time

from slack_sdk.models.views import View

from slackapp.blocks.schedule import schedule_modal
from slackapp.blocks.settings import settings_modal
from slackapp.game.machine import LENGTH_BOUNDS
from slackapp.game.schedule import WORKDAYS, Schedule

EXAMPLE_CHANNEL = "C0EXAMPLE"


def every_modal() -> list[View]:
    """One of each modal, shown with all its fields (the schedule's removal only shows when
    the channel has a standing table, the settings' openness only to an admin)."""
    lengths = {name: low for name, (low, _) in LENGTH_BOUNDS.items()}
    standing = Schedule(frozenset(WORKDAYS), time(15, 0), "UTC", 10)
    return [
        settings_modal(
            EXAMPLE_CHANNEL, lengths, LENGTH_BOUNDS, bots_allowed=True, open_to_everyone=False
        ),
        schedule_modal(EXAMPLE_CHANNEL, standing, None, None, "UTC"),
    ]
