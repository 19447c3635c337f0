"""The ``/varulv settings`` modal: a field for each of a channel's settings
(``slackapp.game.settings``), built alike from each one's words in ``FIELDS``; the words that
refuse a wrong entry, and the channel's settings said in a sentence."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    CheckboxesElement,
    InputBlock,
    NumberInputElement,
    Option,
    PlainTextObject,
    RadioButtonsElement,
)
from slack_sdk.models.views import View

from slackapp.blocks.kit import Json, context, section
from slackapp.blocks.permissions import (
    OPEN_TO_EVERYONE,
    OPEN_TO_EVERYONE_DETAIL,
    OPEN_TO_EVERYONE_HINT,
    who_may_now,
)
from slackapp.blocks.words import ENGLISH, LANGUAGE_NAMES, N_, Words, words
from slackapp.game.seasons import SeasonLength
from slackapp.game.settings import SETTINGS, ChannelChoice, Setting

CALLBACK_ID = "varulv_settings"


@dataclass(frozen=True)
class Seconds:
    """A length's field: a whole number of seconds, its bounds the hint."""

    label: str


@dataclass(frozen=True)
class Switch:
    """A setting's checkbox: one option, ticked when on."""

    label: str
    text: str
    detail: str
    value: str
    """The option's value."""
    hint: str | None = None
    said: Callable[[bool, Words], str] | None = None
    """How the channel's summary says it, if it does."""


@dataclass(frozen=True)
class Pick:
    """A setting's radio buttons: one option for each choice."""

    label: str
    hint: str
    option: Callable[[Any, Words], str]
    """A choice's option, in the modal's words."""
    wrong: str
    """A choice the setting does not have (a form Varulv did not draw)."""
    said: Callable[[Any, Words], str]


SEASON_LABELS = {
    SeasonLength.MONTH: N_("A calendar month"),
    SeasonLength.QUARTER: N_("A quarter (three months)"),
}

FIELDS: Mapping[str, Seconds | Switch | Pick] = {
    "night_seconds": Seconds(N_("Night, in seconds")),
    "day_seconds": Seconds(N_("Day, in seconds")),
    "vote_seconds": Seconds(N_("Vote, in seconds")),
    "bots_allowed": Switch(
        N_("Bots"),
        N_("Offer “Fill with bots” in the lobby"),
        N_("Bots fill empty seats so three people get five seats."),
        value="offered",
        said=lambda on, w: w._("bots offered") if on else w._("bots off"),
    ),
    "season": Pick(
        N_("Leaderboard seasons"),
        N_("Each season ends with a wrap-up in the channel: its winner and awards."),
        option=lambda season, w: w._(SEASON_LABELS[season]),
        wrong=N_("Pick a month or a quarter."),
        said=lambda season, w: (
            w._("seasons by month") if season is SeasonLength.MONTH else w._("seasons by quarter")
        ),
    ),
    "language": Pick(
        N_("Language"),
        N_(
            "Every board, private message and answer of the channel's games. The cards keep "
            "their English names and lines."
        ),
        option=lambda language, w: LANGUAGE_NAMES[language],
        wrong=N_("Pick English or Svenska."),
        said=lambda language, w: LANGUAGE_NAMES[language],
    ),
    "open_to_everyone": Switch(
        N_("Who may change the table"),
        OPEN_TO_EVERYONE,
        OPEN_TO_EVERYONE_DETAIL,
        value="open_to_everyone",
        hint=OPEN_TO_EVERYONE_HINT,
    ),
}
"""Each setting's words on the modal, by its name: its block and action id."""

BOTS_ACTION = "bots_allowed"
BOTS_OFFERED = "offered"
"""The bots' checkbox: its block and action id, and its option's value."""
OPEN_BLOCK = "open_to_everyone"
"""The admins' checkbox: its block id, action id and option value."""
LANGUAGE = "language"
"""The language's block: the modal's words are its first choice."""
NOT_WHOLE = N_("Type a whole number of seconds.")


def settings_modal(channel_id: str, choice: ChannelChoice, shown: Iterable[Setting[Any]]) -> View:
    """The modal, in the channel's language, with a field for each of the ``shown`` settings
    (those the person may change) holding the channel's ``choice``; ``private_metadata``
    carries the channel, which Slack signs back to us."""
    w = words(choice.language)
    blocks: list[Block | Json] = [
        section(
            w._(
                "For the next games in <#{channel}>. A game that is already running keeps the "
                "lengths it started with.",
                channel=channel_id,
            )
        )
    ]
    offered = set(shown)
    blocks += [_field(s, choice.value(s), w) for s in SETTINGS if s in offered]
    blocks.append(context(w._("The channel is told who changed them.")))
    return View(
        type="modal",
        callback_id=CALLBACK_ID,
        title=w._("Varulv settings"),
        submit=w._("Save"),
        close=w._("Cancel"),
        private_metadata=channel_id,
        blocks=blocks,
    )


def _field(setting: Setting[Any], value: Any, w: Words) -> InputBlock:
    """The setting's input, its block and action id the setting's name."""
    shown = FIELDS[setting.name]
    if isinstance(shown, Seconds):
        low, high = setting.bounds
        return InputBlock(
            block_id=setting.name,
            label=w._(shown.label),
            hint=w._("{low} to {high}.", low=low, high=high),
            element=NumberInputElement(
                action_id=setting.name,
                is_decimal_allowed=False,
                # Slack refuses an initial value outside min/max; a default set by the operator
                # may be.
                initial_value=str(min(max(value, low), high)),
                min_value=str(low),
                max_value=str(high),
            ),
        )
    if isinstance(shown, Switch):
        option = Option(
            value=shown.value,
            text=PlainTextObject(text=w._(shown.text)),
            description=PlainTextObject(text=w._(shown.detail)),
        )
        return InputBlock(
            block_id=setting.name,
            label=w._(shown.label),
            hint=None if shown.hint is None else w._(shown.hint),
            optional=True,  # unticked is a valid answer
            element=CheckboxesElement(
                action_id=setting.name,
                options=[option],
                initial_options=[option] if value else None,
            ),
        )
    return InputBlock(
        block_id=setting.name,
        label=w._(shown.label),
        hint=w._(shown.hint),
        element=RadioButtonsElement(
            action_id=setting.name,
            options=[_option(shown, choice, w) for choice in setting.choices],
            initial_option=_option(shown, value, w),
        ),
    )


def _option(pick: Pick, choice: Any, w: Words) -> Option:
    return Option(value=str(choice), text=PlainTextObject(text=pick.option(choice, w)))


def out_of_bounds(setting: Setting[Any], words: Words = ENGLISH) -> str:
    """What to tell the person who typed a length outside the setting's bounds."""
    low, high = setting.bounds
    return words._(
        "Choose {low} to {high} seconds ({shortest} to {longest}).",
        low=low,
        high=high,
        shortest=duration(low, words),
        longest=duration(high, words),
    )


def lengths(choice: ChannelChoice, words: Words = ENGLISH) -> str:
    return words._(
        "night {night}, day {day}, vote {vote}",
        night=duration(choice.night_seconds, words),
        day=duration(choice.day_seconds, words),
        vote=duration(choice.vote_seconds, words),
    )


def summary(choice: ChannelChoice, words: Words = ENGLISH) -> str:
    """The channel's settings in a sentence: its lengths, then each setting its words say."""
    said = [lengths(choice, words)]
    for setting in SETTINGS:
        shown = FIELDS[setting.name]
        if not isinstance(shown, Seconds) and shown.said is not None:
            said.append(shown.said(choice.value(setting), words))
    return ", ".join(said)


def duration(seconds: int, words: Words = ENGLISH) -> str:
    w = words
    minutes, rest = divmod(seconds, 60)
    in_minutes = w.ngettext("{count} minute", "{count} minutes", minutes)
    if minutes and not rest:
        return in_minutes
    in_seconds = w.ngettext("{count} second", "{count} seconds", rest if minutes else seconds)
    if minutes:
        return f"{in_minutes} {in_seconds}"
    return in_seconds


def changed_notice(user_id: str, choice: ChannelChoice, opened: bool | None = None) -> str:
    """Who changed the channel's settings, since anyone there may change them: in the
    language just chosen, which the channel's games speak from now on. ``opened``: an admin
    opened the channel's table to everyone (True) or closed it again (False) with them."""
    w = words(choice.language)
    said = w._(
        "<@{user}> changed the Varulv settings for this channel: {summary}. The next game uses "
        "them.",
        user=user_id,
        summary=summary(choice, w),
    )
    if opened is None:
        return said
    return f"{said} {who_may_now(opened, w)}"
