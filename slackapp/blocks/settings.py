"""The ``/varulv settings`` modal: a channel's phase lengths and whether bots are offered."""

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

from slackapp.blocks.permissions import (
    OPEN_TO_EVERYONE,
    OPEN_TO_EVERYONE_DETAIL,
    OPEN_TO_EVERYONE_HINT,
)
from slackapp.blocks.screen import context, section

CALLBACK_ID = "varulv_settings"
BOTS_BLOCK = "bots_allowed"
BOTS_ACTION = "bots_allowed"
BOTS_OFFERED = "offered"
OPEN_BLOCK = "open_to_everyone"
"""The admins' checkbox: its block id, action id and option value."""
SEASON = "season"
SEASON_LABELS = {"month": "A calendar month", "quarter": "A quarter (three months)"}
LENGTH_LABELS = {
    "night_seconds": "Night, in seconds",
    "day_seconds": "Day, in seconds",
    "vote_seconds": "Vote, in seconds",
}
"""Each length's block id and action id (the same name), with its label."""


def _season(value: str) -> Option:
    return Option(value=value, text=PlainTextObject(text=SEASON_LABELS[value]))


def settings_modal(
    channel_id: str,
    lengths: Mapping[str, int],
    bounds: Mapping[str, tuple[int, int]],
    bots_allowed: bool,
    season: str = "month",
    open_to_everyone: bool | None = None,
) -> View:
    """The modal; ``private_metadata`` carries the channel, which Slack signs back to us.
    ``open_to_everyone``: the channel's openness, for an admin to change (None: not offered)."""
    blocks: list[Block] = [
        section(
            f"For the next games in <#{channel_id}>. A game that is already running keeps "
            "the lengths it started with."
        )
    ]
    for name, label in LENGTH_LABELS.items():
        low, high = bounds[name]
        # Slack refuses an initial value outside min/max; a default set by the operator may be.
        shown = min(max(lengths[name], low), high)
        blocks.append(
            InputBlock(
                block_id=name,
                label=label,
                hint=f"{low} to {high}.",
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
        text=PlainTextObject(text="Offer “Fill with bots” in the lobby"),
        description=PlainTextObject(text="Bots fill empty seats so three people get five seats."),
    )
    blocks += [
        InputBlock(
            block_id=BOTS_BLOCK,
            label="Bots",
            optional=True,  # unticked is a valid answer
            element=CheckboxesElement(
                action_id=BOTS_ACTION,
                options=[offer],
                initial_options=[offer] if bots_allowed else None,
            ),
        ),
        InputBlock(
            block_id=SEASON,
            label="Leaderboard seasons",
            hint="Each season ends with a wrap-up in the channel: its winner and awards.",
            element=RadioButtonsElement(
                action_id=SEASON,
                options=[_season(value) for value in SEASON_LABELS],
                initial_option=_season(season if season in SEASON_LABELS else "month"),
            ),
        ),
    ]
    if open_to_everyone is not None:
        everyone = Option(
            value=OPEN_BLOCK,
            text=PlainTextObject(text=OPEN_TO_EVERYONE),
            description=PlainTextObject(text=OPEN_TO_EVERYONE_DETAIL),
        )
        blocks.append(
            InputBlock(
                block_id=OPEN_BLOCK,
                label="Who may change the table",
                hint=OPEN_TO_EVERYONE_HINT,
                optional=True,
                element=CheckboxesElement(
                    action_id=OPEN_BLOCK,
                    options=[everyone],
                    initial_options=[everyone] if open_to_everyone else None,
                ),
            )
        )
    blocks.append(context("The channel is told who changed them."))
    return View(
        type="modal",
        callback_id=CALLBACK_ID,
        title="Varulv settings",
        submit="Save",
        close="Cancel",
        private_metadata=channel_id,
        blocks=blocks,
    )
