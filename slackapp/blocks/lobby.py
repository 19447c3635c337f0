"""The lobby: the channel message where a table is set, kept up to date as seats fill."""

from __future__ import annotations

from collections.abc import Sequence

from slackapp.blocks import ids
from slackapp.blocks.kit import Json, actions, button, context, header, section
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import Screen
from slackapp.blocks.words import ENGLISH, N_, Words
from slackapp.game.cards import BOT_TABLE, MAX_SEATS, MIN_PEOPLE, MIN_SEATS
from slackapp.game.settings import Kept


def lobby(
    game_id: int,
    host_user_id: str,
    seats: Sequence[SeatLabel],
    kept: Kept,
    min_seats: int = MIN_SEATS,
    max_seats: int = MAX_SEATS,
    bot_table: int = BOT_TABLE,
    words: Words = ENGLISH,
) -> Screen:
    w = words
    value = ids.ButtonValue(game_id).pack()
    buttons = [
        button(w._("Join"), ids.JOIN, value, style="primary"),
        button(w._("Leave"), ids.LEAVE, value),
    ]
    if kept.bots_allowed and len(seats) < bot_table:
        buttons.append(button(w._("Fill with bots"), ids.FILL_BOTS, value))
    buttons += [
        button(w._("Start"), ids.START, value),
        # No confirm dialog here: Slack would ask anyone, seated or not, before Varulv could
        # refuse them. Those who may cancel are asked privately instead (cancel_question).
        button(w._("Cancel"), ids.CANCEL, value, style="danger"),
        button(
            w._("I usually play"),
            ids.USUALLY_PLAY,
            value,
            label=w._("I usually play: mention me when this channel's standing table opens"),
        ),
    ]
    blocks: list[Json] = [
        header(w._(LOBBY_HEADER)),
        section(
            w._(
                "{who} for one night of werewolf. {low} to {high} seats, at least {people} people.",
                who=_who_sets(host_user_id, seats, w),
                low=min_seats,
                high=max_seats,
                people=MIN_PEOPLE,
            )
        ),
        section(_seated(seats, w)),
        actions(buttons),
        context(_readiness(seats, kept.bots_allowed, min_seats, max_seats, bot_table, w)),
    ]
    return Screen(
        text=w.ngettext(
            "A table for Varulv is being set: {count} seat taken. Join in!",
            "A table for Varulv is being set: {count} seats taken. Join in!",
            len(seats),
        ),
        blocks=blocks,
    )


LOBBY_HEADER = N_("Take a seat")
CLOSED_HEADER = N_("Table closed")
"""Not "Varulv": Slack already shows the app's name above each of its messages."""
CANCEL_QUESTION = N_("Cancel this table? Everyone seated has to join again.")
CANCELLED = N_("You cancelled the table.")


def cancel_question(game_id: int, words: Words = ENGLISH) -> Screen:
    """The private question to a seated person who pressed *Cancel*."""
    value = ids.ButtonValue(game_id).pack()
    yes = button(words._("Yes, cancel"), ids.CANCEL_YES, value, style="danger")
    question = words._(CANCEL_QUESTION)
    return Screen(
        text=question,
        blocks=[section(question), actions([yes])],
    )


def lobby_closed(text: str, words: Words = ENGLISH) -> Screen:
    """The lobby once it is cancelled or the game has moved on: no buttons left."""
    return Screen(text=text, blocks=[header(words._(CLOSED_HEADER)), section(text)])


def _who_sets(host_user_id: str, seats: Sequence[SeatLabel], w: Words) -> str:
    """The host while they are seated; once they have left, the table is simply being set."""
    if any(seat.user_id == host_user_id for seat in seats):
        return w._("<@{host}> is setting a table", host=host_user_id)
    return w._("A table is being set")


def _seated(seats: Sequence[SeatLabel], w: Words) -> str:
    if not seats:
        return w._("*Seated*\n_No one yet. Press Join to take a seat._")
    rows = [f"{number}. {seat.mention}" for number, seat in enumerate(seats, start=1)]
    return "\n".join([w._("*Seated ({count})*", count=len(seats)), *rows])


def _readiness(
    seats: Sequence[SeatLabel],
    bots_allowed: bool,
    min_seats: int,
    max_seats: int,
    bot_table: int,
    w: Words,
) -> str:
    people = sum(1 for seat in seats if not seat.is_bot)
    taken = w._("{count} of {high} seats taken", count=len(seats), high=max_seats)
    if people < MIN_PEOPLE:
        return w.ngettext(
            "{taken}. Needs {count} more person.",
            "{taken}. Needs {count} more people.",
            MIN_PEOPLE - people,
            taken=taken,
        )
    if len(seats) < min_seats:
        fill = bots_allowed and len(seats) < bot_table
        if fill:
            return w.ngettext(
                "{taken}. Needs {count} more seat (or fill with bots) to start.",
                "{taken}. Needs {count} more seats (or fill with bots) to start.",
                min_seats - len(seats),
                taken=taken,
            )
        return w.ngettext(
            "{taken}. Needs {count} more seat to start.",
            "{taken}. Needs {count} more seats to start.",
            min_seats - len(seats),
            taken=taken,
        )
    if len(seats) >= max_seats:
        return w._("{taken}: the table is full. Ready to start.", taken=taken)
    return w._("{taken}. Ready to start.", taken=taken)
