"""The day: the channel board while people talk, with the "heard enough" toggle."""

from __future__ import annotations

from datetime import datetime

from slack_sdk.models.blocks import ActionsBlock, Block, HeaderBlock

from slackapp.blocks import ids
from slackapp.blocks.screen import Screen, button, context, deck_context, section, slack_time


def day_board(
    game_id: int,
    deadline: datetime,
    heard: int,
    needed: int,
    people: int,
    seat_count: int = 0,
) -> Screen:
    """``seat_count`` shows the table's deck (0: not known to the caller, not shown)."""
    blocks: list[Block] = [
        HeaderBlock(text="Day: talk it out, out loud"),
        section(
            f"The vote opens at {slack_time(deadline)}, or as soon as {needed} of the "
            f"{people} people have heard enough."
        ),
        ActionsBlock(
            elements=[button("Heard enough", ids.HEARD_ENOUGH, ids.ButtonValue(game_id).pack())]
        ),
        context(
            f"{heard} of {needed} needed have heard enough. "
            "Changed your mind? Click again to take it back."
        ),
        *deck_context(seat_count),
    ]
    return Screen(text="Day breaks at the Varulv table: talk it out, out loud.", blocks=blocks)


def day_over(reason: str) -> Screen:
    """The day board once the vote has opened; ``reason`` says why (time, or enough heard)."""
    return Screen(
        text=f"The day is over. {reason}", blocks=[section(f"*The day is over.* {reason}")]
    )
