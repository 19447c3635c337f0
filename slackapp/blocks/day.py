"""The day: the channel board while people talk, with the "heard enough" toggle."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from slack_sdk.models.blocks import ActionsBlock, Block, HeaderBlock

from slackapp.blocks import ids
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import (
    Screen,
    and_list,
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
    claims_order: Sequence[SeatLabel] = (),
    silent: Sequence[SeatLabel] = (),
) -> Screen:
    """``seat_count`` shows the table's deck (0: not known to the caller, not shown);
    ``first_speaker`` is the person named to open the talk, ``claims_order`` every person in
    the order they claim, ``silent`` the bots, who claim nothing."""
    blocks: list[Block] = [HeaderBlock(text="Day: talk it out, out loud")]
    if first_speaker is not None:
        order = claims_order or [first_speaker]
        blocks.append(
            section(
                f"{first_speaker.mention} speaks first. Start with one round of claims, in "
                f"this order: {_numbered(order)}. Each says which card they hold and what "
                "they saw. Then talk freely."
            )
        )
    if silent:
        verb = "holds a card, may have moved cards in the night and will vote, but makes"
        if len(silent) > 1:
            verb = "hold cards, may have moved cards in the night and will vote, but make"
        blocks.append(
            section(
                f"{and_list([bot.mention for bot in silent])} {verb} no claim: read their "
                "cards from what the rest of you say."
            )
        )
    blocks += [
        section(
            f"The vote opens at {slack_time(deadline)}, or as soon as "
            f"{_how_many(needed, people)} have heard enough."
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
        context(f"{_heard(heard, needed, people)} Changed your mind? Click again to take it back."),
        *deck_context(seat_count),
    ]
    return Screen(text="Day breaks at the Varulv table: talk it out, out loud.", blocks=blocks)


def _how_many(needed: int, people: int) -> str:
    """The people it takes to open the vote early, out of the people at the table."""
    if needed == people:
        return "both people" if people == 2 else f"all {people} people"
    return f"{needed} of the {people} people"


def _numbered(order: Sequence[SeatLabel]) -> str:
    return ", ".join(f"{number}. {seat.mention}" for number, seat in enumerate(order, start=1))


def _heard(heard: int, needed: int, people: int) -> str:
    """Only people count: the bots have no say in when the day ends."""
    opens = f"the vote opens once {_how_many(needed, people)} have (bots are not counted)."
    if not heard:
        return f"No one has heard enough yet: {opens}"
    so_far = plural(heard, "person has", "people have")
    return f"{so_far} heard enough so far: {opens}"


def day_over(reason: str, seat_count: int = 0) -> Screen:
    """The day board once the vote has opened; ``reason`` says why (time, or enough heard)."""
    blocks: list[Block] = [section(f"*The day is over.* {reason}"), *deck_context(seat_count)]
    return Screen(text=f"The day is over. {reason}", blocks=blocks)
