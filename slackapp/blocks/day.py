"""The day: the channel board while people talk, with the "heard enough" toggle."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from slackapp.blocks import ids
from slackapp.blocks.kit import Json, actions, button, context, header, section
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import Screen, and_list, deck_context, slack_time
from slackapp.blocks.words import ENGLISH, Words


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
    words: Words = ENGLISH,
) -> Screen:
    """``seat_count`` shows the table's deck (0: not known to the caller, not shown);
    ``first_speaker`` is the person named to open the talk, ``claims_order`` every person in
    the order they claim, ``silent`` the bots, who claim nothing."""
    w = words
    blocks: list[Json] = [header(w._("Day: talk it out, out loud"))]
    if first_speaker is not None:
        order = claims_order or [first_speaker]
        blocks.append(
            section(
                w._(
                    "{first} speaks first. Start with one round of claims, in this order: "
                    "{order}. Each says which card they hold and what they saw. Then talk "
                    "freely.",
                    first=first_speaker.mention,
                    order=_numbered(order),
                )
            )
        )
    if silent:
        bots = and_list([bot.mention for bot in silent], w)
        blocks.append(
            section(
                w.ngettext(
                    "{bots} holds a card, may have moved cards in the night and will vote, but "
                    "makes no claim: read its card from what the rest of you say.",
                    "{bots} hold cards, may have moved cards in the night and will vote, but "
                    "make no claim: read their cards from what the rest of you say.",
                    len(silent),
                    bots=bots,
                )
            )
        )
    blocks += [
        section(
            w._(
                "The vote opens at {time}, or as soon as {how_many} have heard enough.",
                time=slack_time(deadline),
                how_many=_how_many(needed, people, w),
            )
        ),
        actions(
            [
                button(
                    w._("Heard enough"),
                    ids.HEARD_ENOUGH,
                    ids.ButtonValue(game_id).pack(),
                    label=w._("Heard enough: ready to vote (press again to take it back)"),
                )
            ]
        ),
        context(_heard(heard, needed, people, bool(silent), w)),
        *deck_context(seat_count, w),
    ]
    return Screen(text=w._("Day breaks at the Varulv table: talk it out, out loud."), blocks=blocks)


def _how_many(needed: int, people: int, w: Words) -> str:
    """The people it takes to open the vote early, out of the people at the table."""
    if needed == people:
        if people == 2:
            return w._("both people")
        return w._("all {people} people", people=people)
    return w._("{needed} of the {people} people", needed=needed, people=people)


def _numbered(order: Sequence[SeatLabel]) -> str:
    return ", ".join(f"{number}. {seat.mention}" for number, seat in enumerate(order, start=1))


def _heard(heard: int, needed: int, people: int, bots: bool, w: Words) -> str:
    """Only people count: the bots, if any are seated, have no say in when the day ends. Once
    someone has pressed, they are told they may take it back."""
    how_many = _how_many(needed, people, w)
    if bots:
        opens = w._(
            "the vote opens once {how_many} have (bots are not counted).", how_many=how_many
        )
    else:
        opens = w._("the vote opens once {how_many} have.", how_many=how_many)
    if not heard:
        return w._("No one has heard enough yet: {opens}", opens=opens)
    so_far = w.ngettext(
        "{count} person has heard enough so far: {opens}",
        "{count} people have heard enough so far: {opens}",
        heard,
        opens=opens,
    )
    return w._("{heard} Changed your mind? Click again to take it back.", heard=so_far)


def day_over(reason: str, seat_count: int = 0, words: Words = ENGLISH) -> Screen:
    """The day board once the vote has opened; ``reason`` says why (time, or enough heard)."""
    over = words._("The day is over.")
    blocks: list[Json] = [section(f"*{over}* {reason}"), *deck_context(seat_count, words)]
    return Screen(text=f"{over} {reason}", blocks=blocks)
