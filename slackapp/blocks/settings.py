"""The ``/varulv settings`` modal: a channel's phase lengths, whether bots are offered, its
seasons and its language."""

from __future__ import annotations

from collections.abc import Mapping

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
)
from slackapp.blocks.words import LANGUAGE_NAMES, N_, Words, words
from slackapp.game.lines import Language

CALLBACK_ID = "varulv_settings"
BOTS_BLOCK = "bots_allowed"
BOTS_ACTION = "bots_allowed"
BOTS_OFFERED = "offered"
OPEN_BLOCK = "open_to_everyone"
"""The admins' checkbox: its block id, action id and option value."""
SEASON = "season"
SEASON_LABELS = {"month": N_("A calendar month"), "quarter": N_("A quarter (three months)")}
LANGUAGE = "language"
LENGTH_LABELS = {
    "night_seconds": N_("Night, in seconds"),
    "day_seconds": N_("Day, in seconds"),
    "vote_seconds": N_("Vote, in seconds"),
}
"""Each length's block id and action id (the same name), with its label."""


def _season(value: str, words: Words) -> Option:
    return Option(value=value, text=PlainTextObject(text=words._(SEASON_LABELS[value])))


def _language(language: Language) -> Option:
    return Option(value=language.value, text=PlainTextObject(text=LANGUAGE_NAMES[language]))


def settings_modal(
    channel_id: str,
    lengths: Mapping[str, int],
    bounds: Mapping[str, tuple[int, int]],
    bots_allowed: bool,
    season: str = "month",
    open_to_everyone: bool | None = None,
    language: Language = Language.ENGLISH,
) -> View:
    """The modal, in the channel's language; ``private_metadata`` carries the channel, which
    Slack signs back to us. ``open_to_everyone``: the channel's openness, for an admin to
    change (None: not offered)."""
    w = words(language)
    blocks: list[Block | Json] = [
        section(
            w._(
                "For the next games in <#{channel}>. A game that is already running keeps the "
                "lengths it started with.",
                channel=channel_id,
            )
        )
    ]
    for name, label in LENGTH_LABELS.items():
        low, high = bounds[name]
        # Slack refuses an initial value outside min/max; a default set by the operator may be.
        shown = min(max(lengths[name], low), high)
        blocks.append(
            InputBlock(
                block_id=name,
                label=w._(label),
                hint=w._("{low} to {high}.", low=low, high=high),
                element=NumberInputElement(
                    action_id=name,
                    is_decimal_allowed=False,
                    initial_value=str(shown),
                    min_value=str(low),
                    max_value=str(high),
                ),
            )
        )
    offer = Option(
        value=BOTS_OFFERED,
        text=PlainTextObject(text=w._("Offer “Fill with bots” in the lobby")),
        description=PlainTextObject(
            text=w._("Bots fill empty seats so three people get five seats.")
        ),
    )
    blocks += [
        InputBlock(
            block_id=BOTS_BLOCK,
            label=w._("Bots"),
            optional=True,  # unticked is a valid answer
            element=CheckboxesElement(
                action_id=BOTS_ACTION,
                options=[offer],
                initial_options=[offer] if bots_allowed else None,
            ),
        ),
        InputBlock(
            block_id=SEASON,
            label=w._("Leaderboard seasons"),
            hint=w._("Each season ends with a wrap-up in the channel: its winner and awards."),
            element=RadioButtonsElement(
                action_id=SEASON,
                options=[_season(value, w) for value in SEASON_LABELS],
                initial_option=_season(season if season in SEASON_LABELS else "month", w),
            ),
        ),
        InputBlock(
            block_id=LANGUAGE,
            label=w._("Language"),
            hint=w._(
                "Every board, private message and answer of the channel's games. The cards keep "
                "their English names and lines."
            ),
            element=RadioButtonsElement(
                action_id=LANGUAGE,
                options=[_language(each) for each in Language],
                initial_option=_language(language),
            ),
        ),
    ]
    if open_to_everyone is not None:
        everyone = Option(
            value=OPEN_BLOCK,
            text=PlainTextObject(text=w._(OPEN_TO_EVERYONE)),
            description=PlainTextObject(text=w._(OPEN_TO_EVERYONE_DETAIL)),
        )
        blocks.append(
            InputBlock(
                block_id=OPEN_BLOCK,
                label=w._("Who may change the table"),
                hint=w._(OPEN_TO_EVERYONE_HINT),
                optional=True,
                element=CheckboxesElement(
                    action_id=OPEN_BLOCK,
                    options=[everyone],
                    initial_options=[everyone] if open_to_everyone else None,
                ),
            )
        )
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
