"""The ``/varulv schedule`` modal: a channel's standing table, shown, set or removed."""

from __future__ import annotations

from datetime import datetime

from slack_sdk.models.blocks import (
    Block,
    CheckboxesElement,
    InputBlock,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    TimePickerElement,
)
from slack_sdk.models.views import View

from slackapp.blocks.screen import context, section
from slackapp.game.schedule import LOBBY_MINUTES_BOUNDS, WEEKDAY_NAMES, WORKDAYS, Schedule

CALLBACK_ID = "varulv_schedule"
DAYS = "weekdays"
AT = "at"
ZONE = "zone"
LOBBY = "lobby_minutes"
REMOVE = "remove"
REMOVE_IT = "remove"
DEFAULT_AT = "15:00"
DEFAULT_LOBBY_MINUTES = 10


def _day(day: int) -> Option:
    return Option(value=str(day), text=PlainTextObject(text=WEEKDAY_NAMES[day]))


def when(moment: datetime) -> str:
    """A date and time every reader sees in their own zone, with a UTC fallback."""
    fallback = moment.strftime("%A %d %B %H:%M UTC")
    return f"<!date^{int(moment.timestamp())}^{{date_long_pretty}} at {{time}}|{fallback}>"


def status(current: Schedule | None, next_at: datetime | None, paused: str | None) -> str:
    """What the channel's standing table is now, in a line."""
    if current is None:
        return "No standing table yet: Varulv opens a lobby here only when someone types `/varulv`."
    line = f"Now: {current.describe()}; the lobby stays open {current.lobby_minutes} minutes."
    if paused:
        return f"{line} *Paused*: Varulv could not post here (`{paused}`). Save to start again."
    if next_at is not None:
        line += f" Next: {when(next_at)}."
    return line


def schedule_modal(
    channel_id: str,
    current: Schedule | None,
    next_at: datetime | None,
    paused: str | None,
    zone: str,
) -> View:
    """The form, filled with the channel's schedule, or with weekdays at 15:00 in ``zone``
    (the person's own); ``private_metadata`` carries the channel, which Slack signs back."""
    days = sorted(current.weekdays) if current else sorted(WORKDAYS)
    lobby_low, lobby_high = LOBBY_MINUTES_BOUNDS
    blocks: list[Block] = [
        section(
            f"A standing table for <#{channel_id}>: Varulv opens the lobby by itself, "
            "and mentions everyone who marked *I usually play*."
        ),
        context(status(current, next_at, paused)),
        InputBlock(
            block_id=DAYS,
            label="Days",
            element=CheckboxesElement(
                action_id=DAYS,
                options=[_day(day) for day in range(7)],
                initial_options=[_day(day) for day in days],
            ),
        ),
        InputBlock(
            block_id=AT,
            label="Time",
            element=TimePickerElement(
                action_id=AT,
                initial_time=f"{current.at:%H:%M}" if current else DEFAULT_AT,
            ),
        ),
        InputBlock(
            block_id=ZONE,
            label="Time zone",
            hint="A name from the tz database, such as Europe/Stockholm or America/New_York.",
            element=PlainTextInputElement(
                action_id=ZONE,
                initial_value=current.zone if current else zone,
                max_length=64,
            ),
        ),
        InputBlock(
            block_id=LOBBY,
            label="Lobby open, in minutes",
            hint=f"{lobby_low} to {lobby_high}; then it closes unless someone pressed Start.",
            element=NumberInputElement(
                action_id=LOBBY,
                is_decimal_allowed=False,
                initial_value=str(current.lobby_minutes if current else DEFAULT_LOBBY_MINUTES),
                min_value=str(lobby_low),
                max_value=str(lobby_high),
            ),
        ),
    ]
    if current is not None:
        remove = Option(
            value=REMOVE_IT,
            text=PlainTextObject(text="Remove the standing table"),
            description=PlainTextObject(text="No more lobbies on a schedule in this channel."),
        )
        blocks.append(
            InputBlock(
                block_id=REMOVE,
                label="Remove",
                optional=True,
                element=CheckboxesElement(action_id=REMOVE, options=[remove]),
            )
        )
    blocks.append(context("The channel is told who changed it."))
    return View(
        type="modal",
        callback_id=CALLBACK_ID,
        title="Standing table",
        submit="Save",
        close="Cancel",
        private_metadata=channel_id,
        blocks=blocks,
    )
