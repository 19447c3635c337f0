"""The ``/varulv schedule`` modal: a channel's standing table, shown, set or removed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from babel.dates import format_datetime, get_day_names
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

from slackapp.blocks.kit import Json, context, section
from slackapp.blocks.notices import remedy
from slackapp.blocks.screen import and_list
from slackapp.blocks.words import ENGLISH, N_, Words
from slackapp.game.lines import Language
from slackapp.game.schedule import LOBBY_MINUTES_BOUNDS, WORKDAYS, Schedule

CALLBACK_ID = "varulv_schedule"
DAYS = "weekdays"
AT = "at"
ZONE = "zone"
LOBBY = "lobby_minutes"
REMOVE = "remove"
REMOVE_IT = "remove"
DEFAULT_LOBBY_MINUTES = 10

NO_DAY = N_("Pick at least one day.")
NO_TIME = N_("Pick a time.")
NO_ZONE = N_("Type a time zone's name, such as Europe/Stockholm.")
LOBBY_OUT_OF_BOUNDS = N_("Type a whole number of minutes, {low} to {high}.")


@dataclass(frozen=True)
class OtherTable:
    """Another channel's standing table in the workspace, as the form lists it."""

    channel: str
    owner: str
    """Who set it."""
    schedule: Schedule | None
    """None: it was set in a time zone this machine no longer knows."""
    paused: str | None = None
    """Slack's error that paused it, if it is paused."""


ELSEWHERE_SHOWN = 10
"""The other channels' standing tables the form names at most; the rest are counted."""


@dataclass(frozen=True)
class ScheduleForm:
    """The form as submitted: the standing table entered, or None to remove it (``remove``)
    or when a field is wrong; ``wrong``: each wrong field's sentence, put into words once the
    channel's language is known."""

    schedule: Schedule | None
    remove: bool = False
    wrong: dict[str, str] = field(default_factory=dict)


def form_errors(form: ScheduleForm, words: Words = ENGLISH) -> dict[str, str]:
    """What to show next to each wrong field of the form, in ``words``."""
    low, high = LOBBY_MINUTES_BOUNDS
    return {
        block: words._(sentence, low=low, high=high)
        if sentence == LOBBY_OUT_OF_BOUNDS
        else words._(sentence)
        for block, sentence in form.wrong.items()
    }


def day_names(words: Words = ENGLISH) -> list[str]:
    """Monday first, in the words' language (Babel knows every language's day names)."""
    named = get_day_names("wide", context="stand-alone", locale=words.language.value)
    return [named[day] for day in range(7)]


def _day(day: int, words: Words) -> Option:
    return Option(value=str(day), text=PlainTextObject(text=day_names(words)[day]))


def describe(schedule: Schedule, words: Words = ENGLISH) -> str:
    """One line: "Monday, Wednesday and Friday at 15:00 (Europe/Stockholm)"."""
    return words._(
        "{days} at {time} ({zone})",
        days=_days(schedule, words),
        time=f"{schedule.at:%H:%M}",
        zone=schedule.zone,
    )


def _days(schedule: Schedule, w: Words) -> str:
    if schedule.weekdays == frozenset(range(7)):
        return w._("Every day")
    if schedule.weekdays == WORKDAYS:
        return w._("Monday to Friday")
    names = day_names(w)
    return and_list([names[day] for day in sorted(schedule.weekdays)], w)


def when(moment: datetime, words: Words = ENGLISH) -> str:
    """A date and time every reader sees in their own zone, with a UTC fallback."""
    if words.language is Language.ENGLISH:
        fallback = moment.strftime("%A %d %B %H:%M UTC")
    else:
        fallback = format_datetime(moment, "EEEE d MMMM HH:mm 'UTC'", locale=words.language.value)
    # Slack fills in {date_long_pretty} and {time}: they are passed through as they are.
    shown = words._("{date} at {time}", date="{date_long_pretty}", time="{time}")
    return f"<!date^{int(moment.timestamp())}^{shown}|{fallback}>"


def status(
    current: Schedule | None,
    next_at: datetime | None,
    paused: str | None,
    words: Words = ENGLISH,
    lost_zone: str | None = None,
) -> str:
    """What the channel's standing table is now, in a line; ``lost_zone``: the zone it was set
    in is one this machine no longer knows (``current`` is then shown in the person's)."""
    w = words
    if current is not None and lost_zone is not None:
        return w._(
            "Set for {days} at {time} in `{zone}`, a time zone Varulv no longer knows, so no "
            "table opens. Check the zone below and save to start again.",
            days=_days(current, w),
            time=f"{current.at:%H:%M}",
            zone=lost_zone,
        )
    if current is None:
        return w._(
            "No standing table yet: Varulv opens a lobby here only when someone types `/varulv`."
        )
    line = w.ngettext(
        "Now: {when}; the lobby stays open {count} minute.",
        "Now: {when}; the lobby stays open {count} minutes.",
        current.lobby_minutes,
        when=describe(current, w),
    )
    if paused:
        stopped = w._("*Paused*: Varulv could not post here (`{error}`).", error=paused)
        again = w._("Then save to start again.")
        return f"{line} {stopped} {remedy(paused, w)} {again}"
    if next_at is not None:
        upcoming = w._("Next: {when}.", when=when(next_at, w))
        line = f"{line} {upcoming}"
    return line


def schedule_modal(
    channel_id: str,
    current: Schedule | None,
    next_at: datetime | None,
    paused: str | None,
    zone: str,
    words: Words = ENGLISH,
    lost_zone: str | None = None,
    elsewhere: Sequence[OtherTable] = (),
    more: int = 0,
) -> View:
    """The form, in the channel's language, filled with the channel's schedule; with none,
    the days and the time are left for the person to pick (a plain *Save* sets nothing), and
    the zone is theirs, ``zone``. ``private_metadata`` carries the channel, which Slack signs
    back. ``elsewhere``: the workspace's standing tables in other channels, so that whoever
    looks after them sees them all (and ``more`` not named)."""
    w = words
    days = sorted(current.weekdays) if current else []
    lobby_low, lobby_high = LOBBY_MINUTES_BOUNDS
    blocks: list[Block | Json] = [
        section(
            w._(
                "A standing table for <#{channel}>: Varulv opens the lobby by itself, and "
                "mentions everyone who marked *I usually play*.",
                channel=channel_id,
            )
        ),
        context(status(current, next_at, paused, w, lost_zone)),
        *(
            []
            if current
            else [context(w._("Pick the days and the time: nothing is set until you do."))]
        ),
        InputBlock(
            block_id=DAYS,
            label=w._("Days"),
            element=CheckboxesElement(
                action_id=DAYS,
                options=[_day(day, w) for day in range(7)],
                initial_options=[_day(day, w) for day in days] or None,
            ),
        ),
        InputBlock(
            block_id=AT,
            label=w._("Time"),
            element=TimePickerElement(
                action_id=AT,
                initial_time=f"{current.at:%H:%M}" if current else None,
                placeholder=w._("Pick a time"),
            ),
        ),
        InputBlock(
            block_id=ZONE,
            label=w._("Time zone"),
            hint=w._("A name from the tz database, such as Europe/Stockholm or America/New_York."),
            element=PlainTextInputElement(
                action_id=ZONE,
                initial_value=current.zone if current else zone,
                max_length=64,
            ),
        ),
        InputBlock(
            block_id=LOBBY,
            label=w._("Lobby open, in minutes"),
            hint=w._(
                "{low} to {high}; then it closes unless someone pressed Start.",
                low=lobby_low,
                high=lobby_high,
            ),
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
            text=PlainTextObject(text=w._("Remove the standing table")),
            description=PlainTextObject(text=w._("No more lobbies on a schedule in this channel.")),
        )
        blocks.append(
            InputBlock(
                block_id=REMOVE,
                label=w._("Remove"),
                optional=True,
                element=CheckboxesElement(action_id=REMOVE, options=[remove]),
            )
        )
    blocks.append(context(w._("The channel is told who changed it.")))
    if elsewhere:
        blocks.append(context(_elsewhere(elsewhere, more, w)))
    return View(
        type="modal",
        callback_id=CALLBACK_ID,
        title=w._("Standing table"),
        submit=w._("Save"),
        close=w._("Cancel"),
        private_metadata=channel_id,
        blocks=blocks,
    )


def _elsewhere(tables: Sequence[OtherTable], more: int, w: Words) -> str:
    """One line each, under a heading, and the rest counted."""
    lines = [w._("Standing tables in other channels here:")]
    lines += [f"• {_other(table, w)}" for table in tables]
    if more:
        lines.append(w.ngettext("… and {count} more", "… and {count} more", more))
    return "\n".join(lines)


def _other(table: OtherTable, w: Words) -> str:
    if table.paused:
        how = w._("paused: `{error}`", error=table.paused)
    elif table.schedule is None:
        how = w._("in a time zone Varulv no longer knows")
    else:
        how = describe(table.schedule, w)
    return w._(
        "<#{channel}>: {how}; set by <@{user}>", channel=table.channel, how=how, user=table.owner
    )


def regular_toggled(channel: str, marked: bool, scheduled: bool, words: Words = ENGLISH) -> str:
    """The answer to *I usually play* in ``channel``: ``marked`` or taken back, and whether the
    channel has a standing table to mention the person yet."""
    w = words
    if marked and not scheduled:
        return w._(
            "Marked: you usually play in <#{channel}>. It has no standing table yet: once "
            "someone sets one with `/varulv schedule`, it mentions you when it opens. Press "
            "again to take it back.",
            channel=channel,
        )
    if marked:
        return w._(
            "Marked: you usually play in <#{channel}>, so its standing table mentions you when "
            "it opens. Press again to take it back.",
            channel=channel,
        )
    if not scheduled:
        return w._("Taken back: you no longer usually play in <#{channel}>.", channel=channel)
    return w._(
        "Taken back: the standing table in <#{channel}> no longer mentions you.",
        channel=channel,
    )


def removed_notice(user_id: str, words: Words = ENGLISH) -> str:
    """That the channel's standing table was removed."""
    return words._("<@{user}> removed this channel's standing table.", user=user_id)


def set_notice(user_id: str, schedule: Schedule, first: datetime, words: Words = ENGLISH) -> str:
    """That the channel's standing table was set, and when the ``first`` opens."""
    w = words
    return w.ngettext(
        "<@{user}> set a standing table here: {when}, the lobby open {count} minute. The "
        "first one opens {upcoming}. Press *I usually play* on a lobby to be mentioned.",
        "<@{user}> set a standing table here: {when}, the lobby open {count} minutes. The "
        "first one opens {upcoming}. Press *I usually play* on a lobby to be mentioned.",
        schedule.lobby_minutes,
        user=user_id,
        when=describe(schedule, w),
        upcoming=when(first, w),
    )


def invitation(schedule: Schedule, regulars: list[str], words: Words = ENGLISH) -> str:
    """The line that goes with a standing table's lobby: the regulars, mentioned."""
    line = words.ngettext(
        "Fika time: the standing table is open for {count} minute. Press *Join* to play.",
        "Fika time: the standing table is open for {count} minutes. Press *Join* to play.",
        schedule.lobby_minutes,
    )
    if regulars:
        line += " " + " ".join(f"<@{user}>" for user in regulars)
    return line
