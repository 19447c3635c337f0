"""The lobby: the channel message where a table is set, kept up to date as seats fill."""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import ActionsBlock, Block, HeaderBlock

from slackapp.blocks import ids
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import Screen, button, context, plural, section
from slackapp.game.cards import BOT_TABLE, MAX_SEATS, MIN_PEOPLE, MIN_SEATS


def lobby(
    game_id: int,
    host_user_id: str,
    seats: Sequence[SeatLabel],
    bots_allowed: bool,
    min_seats: int = MIN_SEATS,
    max_seats: int = MAX_SEATS,
    bot_table: int = BOT_TABLE,
) -> Screen:
    value = ids.ButtonValue(game_id).pack()
    buttons = [
        button("Join", ids.JOIN, value, style="primary"),
        button("Leave", ids.LEAVE, value),
    ]
    if bots_allowed and len(seats) < bot_table:
        buttons.append(button("Fill with bots", ids.FILL_BOTS, value))
    buttons += [
        button("Start", ids.START, value),
        # No confirm dialog here: Slack would ask anyone, seated or not, before Varulv could
        # refuse them. Those who may cancel are asked privately instead (cancel_question).
        button("Cancel", ids.CANCEL, value, style="danger"),
        button(
            "I usually play",
            ids.USUALLY_PLAY,
            value,
            label="I usually play: mention me when this channel's standing table opens",
        ),
    ]
    blocks: list[Block] = [
        HeaderBlock(text=LOBBY_HEADER),
        section(
            f"{_who_sets(host_user_id, seats)} for one night of werewolf. "
            f"{min_seats} to {max_seats} seats, at least {MIN_PEOPLE} people."
        ),
        section(_seated(seats)),
        ActionsBlock(elements=buttons),
        context(_readiness(seats, bots_allowed, min_seats, max_seats, bot_table)),
    ]
    return Screen(
        text=f"A table for Varulv is being set: {plural(len(seats), 'seat')} taken. Join in!",
        blocks=blocks,
    )


LOBBY_HEADER = "Take a seat"
CLOSED_HEADER = "Table closed"
"""Not "Varulv": Slack already shows the app's name above each of its messages."""
CANCEL_QUESTION = "Cancel this table? Everyone seated has to join again."


def cancel_question(game_id: int) -> Screen:
    """The private question to a seated person who pressed *Cancel*."""
    value = ids.ButtonValue(game_id).pack()
    yes = button("Yes, cancel", ids.CANCEL_YES, value, style="danger")
    return Screen(
        text=CANCEL_QUESTION,
        blocks=[section(CANCEL_QUESTION), ActionsBlock(elements=[yes])],
    )


def lobby_closed(text: str) -> Screen:
    """The lobby once it is cancelled or the game has moved on: no buttons left."""
    return Screen(text=text, blocks=[HeaderBlock(text=CLOSED_HEADER), section(text)])


def _who_sets(host_user_id: str, seats: Sequence[SeatLabel]) -> str:
    """The host while they are seated; once they have left, the table is simply being set."""
    if any(seat.user_id == host_user_id for seat in seats):
        return f"<@{host_user_id}> is setting a table"
    return "A table is being set"


def _seated(seats: Sequence[SeatLabel]) -> str:
    if not seats:
        return "*Seated*\n_No one yet. Press Join to take a seat._"
    rows = [f"{number}. {seat.mention}" for number, seat in enumerate(seats, start=1)]
    return "\n".join([f"*Seated ({len(seats)})*", *rows])


def _readiness(
    seats: Sequence[SeatLabel], bots_allowed: bool, min_seats: int, max_seats: int, bot_table: int
) -> str:
    people = sum(1 for seat in seats if not seat.is_bot)
    taken = f"{len(seats)} of {max_seats} seats taken"
    if people < MIN_PEOPLE:
        return f"{taken}. Needs {plural(MIN_PEOPLE - people, 'more person', 'more people')}."
    if len(seats) < min_seats:
        missing = plural(min_seats - len(seats), "more seat")
        fill = " (or fill with bots)" if bots_allowed and len(seats) < bot_table else ""
        return f"{taken}. Needs {missing}{fill} to start."
    if len(seats) >= max_seats:
        return f"{taken}: the table is full. Ready to start."
    return f"{taken}. Ready to start."
