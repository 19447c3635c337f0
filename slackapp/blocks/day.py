"""The day: the channel board while people talk, with the "heard enough" toggle."""

from __future__ import annotations

from datetime import datetime

from slack_sdk.models.blocks import ActionsBlock, Block, HeaderBlock

from slackapp.blocks import ids
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import (
    Screen,
    button,
    context,
    deck_context,
    plural,
    section,
    slack_time,
)


def day_board(
    game_id: int,
    deadline: datetime,
    heard: int,
    needed: int,
    people: int,
    seat_count: int = 0,
    first_speaker: SeatLabel | None = None,
) -> Screen:
    """``seat_count`` shows the table's deck (0: not known to the caller, not shown);
    ``first_speaker`` is the person named to open the talk."""
    blocks: list[Block] = [HeaderBlock(text="Day: talk it out, out loud")]
    if first_speaker is not None:
        blocks.append(
            section(
                f"{first_speaker.mention} speaks first. Start with one round of claims: each "
                "person in turn says which card they hold and what they saw. Then talk freely."
            )
        )
    blocks += [
        section(
            f"The vote opens at {slack_time(deadline)}, or as soon as {needed} of the "
            f"{people} people have heard enough."
        ),
        ActionsBlock(
            elements=[
                button(
                    "Heard enough",
                    ids.HEARD_ENOUGH,
                    ids.ButtonValue(game_id).pack(),
                    label="Heard enough: ready to vote (press again to take it back)",
                )
            ]
        ),
        context(f"{_heard(heard, needed)} Changed your mind? Click again to take it back."),
        *deck_context(seat_count),
    ]
    return Screen(text="Day breaks at the Varulv table: talk it out, out loud.", blocks=blocks)


def _heard(heard: int, needed: int) -> str:
    if not heard:
        return f"No one has heard enough yet: the vote opens once {needed} have."
    so_far = plural(heard, "person has", "people have")
    return f"{so_far} heard enough so far: the vote opens once {needed} have."


def day_over(reason: str) -> Screen:
    """The day board once the vote has opened; ``reason`` says why (time, or enough heard)."""
    return Screen(
        text=f"The day is over. {reason}", blocks=[section(f"*The day is over.* {reason}")]
    )
