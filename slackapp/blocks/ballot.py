"""The vote: one sealed ballot per seat.

The channel's board shows how many voted, never for whom, and one *Vote* button; pressing it
brings the person their own ballot, privately: every other seat and Nobody (never themself),
with their current choice marked.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from slackapp.blocks import ids
from slackapp.blocks.kit import Json, actions, button, context, header, section
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import Screen, deck_context, slack_time
from slackapp.blocks.words import ENGLISH, N_, Words

HOW_THE_VOTE_COUNTS = N_(
    "Nobody counts like a player: the most votes die, ties all die, and no one dies unless "
    "someone has more votes than Nobody."
)
ONE_VOTE_CAN_BE_ENOUGH = N_(
    "A single vote can be enough: if no one votes for Nobody, everyone with the most votes "
    "dies, even with one vote each."
)


def ballot_board(
    game_id: int,
    voted: int,
    total: int,
    deadline: datetime,
    seat_count: int,
    words: Words = ENGLISH,
) -> Screen:
    """The channel's board while the vote is open, with the table's deck."""
    w = words
    vote = button(
        w._("Vote"),
        ids.BALLOT,
        ids.ButtonValue(game_id).pack(),
        style="primary",
        label=w._("Vote: open your own sealed ballot, seen only by you"),
    )
    blocks: list[Json] = [
        header(w._("Vote")),
        section(
            w._(
                "One sealed ballot each, for another player or for Nobody. Press *Vote* for "
                "yours: only you see it, and you may change it until the vote closes."
            )
        ),
        actions([vote]),
        context(w._(HOW_THE_VOTE_COUNTS)),
        context(w._(ONE_VOTE_CAN_BE_ENOUGH)),
        context(
            w._(
                "{voted} of {total} have voted. The vote closes at {time}.",
                voted=voted,
                total=total,
                time=slack_time(deadline),
            )
        ),
        *deck_context(seat_count, w),
    ]
    return Screen(text=w._("The Varulv vote is open: cast your sealed ballot."), blocks=blocks)


def personal_ballot(
    game_id: int,
    others: Sequence[SeatLabel],
    chosen: SeatLabel | None,
    voted: bool,
    deadline: datetime,
    said: str | None = None,
    words: Words = ENGLISH,
) -> Screen:
    """One person's ballot: ``others`` are every seat but theirs; ``chosen`` is the seat
    their ballot names (None with ``voted`` for Nobody); ``said`` answers their last click."""
    w = words

    def choice(text: str, named: str, index: int, target: str, picked: bool) -> Json:
        return button(
            text,
            ids.indexed(ids.VOTE, index),
            ids.ButtonValue(game_id, target).pack(),
            style="primary" if picked else None,
            label=(
                w._("Your ballot now: {name}", name=named)
                if picked
                else w._("Vote for {name}", name=named)
            ),
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
    buttons.append(choice(w._("Nobody"), w._("nobody"), len(others), ids.NOBODY, picked_nobody))
    if not voted:
        now = w._("You have not voted yet: pick another player, or Nobody.")
    else:
        named = w._("Nobody") if chosen is None else chosen.mention
        now = w._("You voted for {name}. Pick again to change it.", name=named)
    blocks: list[Json] = []
    if said:
        blocks.append(section(said))
    blocks += [
        section(w._("*Your sealed ballot*, seen only by you. {now}", now=now)),
        actions(buttons),
        context(w._(ONE_VOTE_CAN_BE_ENOUGH)),
        context(
            w._(
                "{how} The vote closes at {time}, or once everyone has voted.",
                how=w._(HOW_THE_VOTE_COUNTS),
                time=slack_time(deadline),
            )
        ),
    ]
    return Screen(text=said or w._("Your sealed ballot for Varulv."), blocks=blocks)


def ballot_closed(voted: int, total: int, words: Words = ENGLISH) -> Screen:
    w = words
    text = w._(
        "The vote is closed: {voted} of {total} voted. The reveal follows.",
        voted=voted,
        total=total,
    )
    closed = w._("*The vote is closed.* {voted} of {total} voted.", voted=voted, total=total)
    return Screen(text=text, blocks=[section(closed), *deck_context(total, w)])
