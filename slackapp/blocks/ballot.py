"""The vote: one sealed ballot per seat. The board shows how many voted, never for whom."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from slack_sdk.models.blocks import ActionsBlock, Block, HeaderBlock

from slackapp.blocks import ids
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import Screen, button, context, deck_context, section, slack_time


def ballot_board(
    game_id: int, seats: Sequence[SeatLabel], voted: int, total: int, deadline: datetime
) -> Screen:
    def value(target: str) -> str:
        return ids.ButtonValue(game_id, target).pack()

    buttons = [
        button(
            seat.button_text,
            ids.indexed(ids.VOTE, index),
            value(seat.key),
            label=f"Vote for {seat.button_text}",
        )
        for index, seat in enumerate(seats)
    ]
    nobody = ids.indexed(ids.VOTE, len(seats))
    buttons.append(button("Nobody", nobody, value(ids.NOBODY), label="Vote for nobody"))
    blocks: list[Block] = [
        HeaderBlock(text="Vote"),
        section(
            "One sealed ballot each; you may change it until the vote closes. "
            "Vote for another player, or for nobody."
        ),
        ActionsBlock(elements=buttons),
        context(f"{voted} of {total} have voted. The vote closes at {slack_time(deadline)}."),
        *deck_context(len(seats)),
    ]
    return Screen(text="The Varulv vote is open: cast your sealed ballot.", blocks=blocks)


def ballot_closed(voted: int, total: int) -> Screen:
    text = f"The vote is closed: {voted} of {total} voted. The reveal follows."
    blocks: list[Block] = [section(f"*The vote is closed.* {voted} of {total} voted.")]
    return Screen(text=text, blocks=[*blocks, *deck_context(total)])
