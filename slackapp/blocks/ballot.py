"""The vote: one sealed ballot per seat.

The channel's board shows how many voted, never for whom, and one *Vote* button; pressing it
brings the person their own ballot, privately: every other seat and Nobody (never themself),
with their current choice marked.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, HeaderBlock

from slackapp.blocks import ids
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import Screen, button, context, deck_context, section, slack_time

HOW_THE_VOTE_COUNTS = (
    "Nobody counts like a player: the most votes die, ties all die, and no one dies unless "
    "someone has more votes than Nobody."
)


def ballot_board(
    game_id: int, voted: int, total: int, deadline: datetime, seat_count: int
) -> Screen:
    """The channel's board while the vote is open, with the table's deck."""
    vote = button(
        "Vote",
        ids.BALLOT,
        ids.ButtonValue(game_id).pack(),
        style="primary",
        label="Vote: open your own sealed ballot, seen only by you",
    )
    blocks: list[Block] = [
        HeaderBlock(text="Vote"),
        section(
            "One sealed ballot each, for another player or for Nobody. Press *Vote* for "
            "yours: only you see it, and you may change it until the vote closes."
        ),
        ActionsBlock(elements=[vote]),
        context(HOW_THE_VOTE_COUNTS),
        context(f"{voted} of {total} have voted. The vote closes at {slack_time(deadline)}."),
        *deck_context(seat_count),
    ]
    return Screen(text="The Varulv vote is open: cast your sealed ballot.", blocks=blocks)


def personal_ballot(
    game_id: int,
    others: Sequence[SeatLabel],
    chosen: SeatLabel | None,
    voted: bool,
    deadline: datetime,
    said: str | None = None,
) -> Screen:
    """One person's ballot: ``others`` are every seat but theirs; ``chosen`` is the seat
    their ballot names (None with ``voted`` for Nobody); ``said`` answers their last click."""

    def choice(text: str, named: str, index: int, target: str, picked: bool) -> ButtonElement:
        return button(
            text,
            ids.indexed(ids.VOTE, index),
            ids.ButtonValue(game_id, target).pack(),
            style="primary" if picked else None,
            label=f"Your ballot now: {named}" if picked else f"Vote for {named}",
        )

    buttons = [
        choice(
            seat.button_text,
            seat.button_text,
            index,
            seat.key,
            chosen is not None and chosen.key == seat.key,
        )
        for index, seat in enumerate(others)
    ]
    picked_nobody = voted and chosen is None
    buttons.append(choice("Nobody", "nobody", len(others), ids.NOBODY, picked_nobody))
    if not voted:
        now = "You have not voted yet: pick another player, or Nobody."
    else:
        named = "Nobody" if chosen is None else chosen.mention
        now = f"You voted for {named}. Pick again to change it."
    blocks: list[Block] = []
    if said:
        blocks.append(section(said))
    blocks += [
        section(f"*Your sealed ballot*, seen only by you. {now}"),
        ActionsBlock(elements=buttons),
        context(
            f"{HOW_THE_VOTE_COUNTS} The vote closes at {slack_time(deadline)}, "
            "or once everyone has voted."
        ),
    ]
    return Screen(text=said or "Your sealed ballot for Varulv.", blocks=blocks)


def ballot_closed(voted: int, total: int) -> Screen:
    text = f"The vote is closed: {voted} of {total} voted. The reveal follows."
    blocks: list[Block] = [section(f"*The vote is closed.* {voted} of {total} voted.")]
    return Screen(text=text, blocks=[*blocks, *deck_context(total)])
