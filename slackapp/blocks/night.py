"""The night: the public board in the channel, and each seat's private message.

The board says who sits at the table and how many have confirmed, never who holds what. The
private message shows the seat's card, what it saw, and its choices as buttons.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, HeaderBlock

from slackapp.blocks import ids
from slackapp.blocks.checking import fingerprint_context
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import (
    CENTRE_NAMES,
    Screen,
    and_list,
    button,
    context,
    deck_context,
    possessive,
    seat_names,
    section,
    slack_time,
)
from slackapp.game.cards import Card
from slackapp.game.night import (
    Knowledge,
    NightChoice,
    Rob,
    SawCard,
    SawCenter,
    SawSeat,
    SawWerewolves,
)


def night_board(
    seats: Sequence[SeatLabel],
    confirmed: int,
    people: int,
    deadline: datetime,
    fingerprint: str = "",
) -> Screen:
    blocks: list[Block] = [
        HeaderBlock(text="Night falls"),
        section(f"At the table: {and_list([seat.mention for seat in seats])}."),
        section("Check your DM from Varulv for your card, then confirm the night there."),
        context(
            f"{confirmed} of {people} people have confirmed the night. "
            f"Dawn comes at {slack_time(deadline)} at the latest."
        ),
        *fingerprint_context(fingerprint),
        *deck_context(len(seats)),
    ]
    return Screen(
        text="Night falls on the Varulv table: check your DM for your card.", blocks=blocks
    )


def night_over(seats: Sequence[SeatLabel], fingerprint: str = "") -> Screen:
    """The night board once dawn breaks: the night is done, nothing more is said but the
    deal's fingerprint, kept for the whole game."""
    blocks: list[Block] = [
        HeaderBlock(text="Dawn breaks"),
        section(f"The night is over. Wake up, {and_list([seat.mention for seat in seats])}!"),
        *fingerprint_context(fingerprint),
        *deck_context(len(seats)),
    ]
    return Screen(text="Dawn breaks at the Varulv table.", blocks=blocks)


def night_dm(
    game_id: int,
    channel_id: str,
    card: Card,
    me: SeatLabel,
    others: Sequence[SeatLabel],
    kind: str | None,
    known: str | None,
    pending_first: SeatLabel | None,
    outcome_text: str | None,
    goal: str | None = None,
) -> Screen:
    """The seat's private night message; ``outcome_text`` replaces the choices once made.

    ``kind`` is :func:`slackapp.game.night.choice_kind` for the card the seat was dealt;
    ``goal``: the side and goal of the card the seat has seen it now holds, which replaces
    the dealt card's.
    """
    # A header of its own: a new game's card never reads as a follow-up to the last game's DM.
    blocks: list[Block] = [HeaderBlock(text="Night falls")]
    if goal is None:
        blocks.append(section(f"Your card: *{card}*\n{card.line}\n_{card.day_goal}_"))
    else:
        blocks.append(section(f"Your card: *{card}*\n{card.line}"))
    if known:
        blocks.append(section(known))
    if outcome_text:
        blocks.append(section(outcome_text))
        if goal is not None:
            blocks.append(section(f"_{goal}_"))
    else:
        # Never offer a seat itself, whatever the caller passed as "others".
        targets = [seat for seat in others if seat.key != me.key]
        prompt, buttons = _choices(game_id, kind, targets, pending_first)
        if prompt:
            blocks.append(section(prompt))
        blocks.append(ActionsBlock(elements=buttons))
    blocks.append(context(f"Table in <#{channel_id}>"))
    blocks += deck_context(len({me.key, *(seat.key for seat in others)}))
    return Screen(text="Varulv: your card for tonight is here.", blocks=blocks)


def _choices(
    game_id: int,
    kind: str | None,
    others: Sequence[SeatLabel],
    pending_first: SeatLabel | None,
) -> tuple[str | None, list[ButtonElement]]:
    """The prompt and the buttons for one kind of night choice."""

    def value(target: str | None = None) -> str:
        return ids.ButtonValue(game_id, target).pack()

    def per_seat(
        prefix: str, seats: Sequence[SeatLabel], label: Callable[[str], str]
    ) -> list[ButtonElement]:
        """One button per seat; ``label(name)`` says what pressing it does to that seat."""
        return [
            button(
                seat.button_text,
                ids.indexed(prefix, index),
                value(seat.key),
                label=label(seat.button_text),
            )
            for index, seat in enumerate(seats)
        ]

    skip = button("Skip", ids.NIGHT_SKIP, value(), label="Skip: do nothing tonight")
    match kind:
        case "peek":
            centre = [
                button(
                    f"{side.capitalize()} centre card",
                    ids.indexed(ids.NIGHT_PEEK, i),
                    value(str(i)),
                    label=f"Look at the {side} centre card",
                )
                for i, side in enumerate(CENTRE_NAMES)
            ]
            return "Which centre card?", [*centre, skip]
        case "look":
            both = button(
                "Both centre cards",
                ids.indexed(ids.NIGHT_LOOK, len(others)),
                value(ids.CENTER),
                label="Look at both centre cards",
            )
            return (
                "Whose card, or both centre cards?",
                [
                    *per_seat(ids.NIGHT_LOOK, others, lambda name: f"Look at {name}'s card"),
                    both,
                    skip,
                ],
            )
        case "rob":
            return (
                "Whose card do you take?",
                [*per_seat(ids.NIGHT_ROB, others, lambda name: f"Rob {name}"), skip],
            )
        case "swap":
            if pending_first is None:
                first = per_seat(ids.NIGHT_SWAP, others, lambda name: f"Swap {name}'s card first")
                return "Swap whom? Pick the first.", [*first, skip]
            seconds = [seat for seat in others if seat.key != pending_first.key]
            first_name = pending_first.button_text
            reset = button(
                "Start over",
                ids.NIGHT_SWAP_RESET,
                value(),
                label="Start over: pick the first card again",
            )
            return (
                f"Swap {pending_first.mention} with…",
                [
                    *per_seat(
                        ids.NIGHT_SWAP,
                        seconds,
                        lambda name: f"Swap {first_name}'s card with {name}'s",
                    ),
                    reset,
                    skip,
                ],
            )
        case None:
            return None, [button("Got it", ids.NIGHT_CONFIRM, value(), style="primary")]
    raise ValueError(f"unknown night choice kind {kind!r}")


def knowledge_text(
    knowledge: Knowledge,
    labels: Mapping[str, SeatLabel],
    *,
    card: Card,
    choice: NightChoice | None = None,
) -> str:
    """What a seat dealt ``card`` learned at night, as a sentence addressed to it.

    ``choice`` is the seat's own night choice: it names the seat a Robber took from.
    """
    match knowledge:
        case SawWerewolves(werewolves, centre) if card is Card.WEREWOLF:
            if centre is not None:  # a lone wolf's peek: waking already said it is alone
                return f"The {CENTRE_NAMES[centre.index]} centre card is *{centre.card}*."
            wolves = seat_names(labels, werewolves)
            if not werewolves:
                return "You are the only werewolf."
            if len(werewolves) == 1:
                return f"The other werewolf is {wolves}."
            return f"The other werewolves are {wolves}."
        case SawWerewolves(werewolves):
            if not werewolves:
                return "No one at the table was dealt a Werewolf."
            verb = "werewolf is" if len(werewolves) == 1 else "werewolves are"
            return f"The {verb} {seat_names(labels, werewolves)}."
        case SawSeat(seat, seen):
            return f"{possessive(labels, seat)} card is *{seen}*."
        case SawCenter((left, right)):
            return f"The centre cards are *{left}* (left) and *{right}* (right)."
        case SawCard(held) if card is Card.ROBBER and isinstance(choice, Rob):
            return f"You took {possessive(labels, choice.seat)} card: your card is now *{held}*."
        case SawCard(held) if card is Card.INSOMNIAC:
            return f"At the end of the night your card is *{held}*."
        case SawCard(held):
            return f"Your card is now *{held}*."
    raise TypeError(f"not a night's knowledge: {knowledge!r}")
