"""The night: the public board in the channel, and each seat's private message.

The board says who sits at the table and how many have confirmed, never who holds what. The
private message shows the seat's card, what it saw, and its choices as buttons.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from slackapp.blocks import ids
from slackapp.blocks.checking import fingerprint_context
from slackapp.blocks.kit import Json, actions, button, context, header, section
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import Screen, and_list, deck_context, seat_name, seat_names, slack_time
from slackapp.blocks.sides import day_goal
from slackapp.blocks.words import ENGLISH, Words
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
    words: Words = ENGLISH,
) -> Screen:
    w = words
    blocks: list[Json] = [
        header(w._("Night falls")),
        section(w._("At the table: {seats}.", seats=and_list([s.mention for s in seats], w))),
        section(w._("Check your DM from Varulv for your card, then confirm the night there.")),
        context(
            w._(
                "{confirmed} of {people} people have confirmed the night. Dawn comes at "
                "{time} at the latest.",
                confirmed=confirmed,
                people=people,
                time=slack_time(deadline),
            )
        ),
        *fingerprint_context(fingerprint, w),
        *deck_context(len(seats), w),
    ]
    return Screen(
        text=w._("Night falls on the Varulv table: check your DM for your card."), blocks=blocks
    )


def night_over(seats: Sequence[SeatLabel], fingerprint: str = "", words: Words = ENGLISH) -> Screen:
    """The night board once dawn breaks: the night is done, nothing more is said but the
    deal's fingerprint, kept for the whole game."""
    w = words
    everyone = and_list([seat.mention for seat in seats], w)
    blocks: list[Json] = [
        header(w._("Dawn breaks")),
        section(w._("The night is over. Wake up, {seats}!", seats=everyone)),
        *fingerprint_context(fingerprint, w),
        *deck_context(len(seats), w),
    ]
    return Screen(text=w._("Dawn breaks at the Varulv table."), blocks=blocks)


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
    words: Words = ENGLISH,
    dealt_goal: str | None = None,
) -> Screen:
    """The seat's private night message; ``outcome_text`` replaces the choices once made.

    ``kind`` is :func:`slackapp.game.night.choice_kind` for the card the seat was dealt;
    ``goal``: the side and goal of the card the seat has seen it now holds, which replaces
    the dealt card's; ``dealt_goal``: what the dealt card plays for, when what the seat saw
    changed it (the Minion that saw no Werewolf). The card's name and its line stay in English
    in every language.
    """
    w = words
    # A header of its own: a new game's card never reads as a follow-up to the last game's DM.
    blocks: list[Json] = [header(w._("Night falls"))]
    yours = w._("Your card: *{card}*", card=card)
    if goal is None:
        side = dealt_goal or day_goal(card, w)
        blocks.append(section(f"{yours}\n{card.line}\n_{side}_"))
    else:
        blocks.append(section(f"{yours}\n{card.line}"))
    if known:
        blocks.append(section(known))
    if outcome_text:
        blocks.append(section(outcome_text))
        if goal is not None:
            blocks.append(section(f"_{goal}_"))
    else:
        # Never offer a seat itself, whatever the caller passed as "others".
        targets = [seat for seat in others if seat.key != me.key]
        prompt, buttons = _choices(game_id, kind, targets, pending_first, w)
        if prompt:
            blocks.append(section(prompt))
        blocks.append(actions(buttons))
    blocks.append(context(w._("Table in <#{channel}>", channel=channel_id)))
    blocks += deck_context(len({me.key, *(seat.key for seat in others)}), w)
    return Screen(text=w._("Varulv: your card for tonight is here."), blocks=blocks)


def _choices(
    game_id: int,
    kind: str | None,
    others: Sequence[SeatLabel],
    pending_first: SeatLabel | None,
    w: Words,
) -> tuple[str | None, list[Json]]:
    """The prompt and the buttons for one kind of night choice."""

    def value(target: str | None = None) -> str:
        return ids.ButtonValue(game_id, target).pack()

    def per_seat(
        prefix: str, seats: Sequence[SeatLabel], label: Callable[[str], str]
    ) -> list[Json]:
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

    skip = button(w._("Skip"), ids.NIGHT_SKIP, value(), label=w._("Skip: do nothing tonight"))
    match kind:
        case "peek":
            sides = (
                (w._("Left centre card"), w._("Look at the left centre card")),
                (w._("Right centre card"), w._("Look at the right centre card")),
            )
            centre = [
                button(text, ids.indexed(ids.NIGHT_PEEK, i), value(str(i)), label=label)
                for i, (text, label) in enumerate(sides)
            ]
            return w._("Which centre card?"), [*centre, skip]
        case "look":
            both = button(
                w._("Both centre cards"),
                ids.indexed(ids.NIGHT_LOOK, len(others)),
                value(ids.CENTER),
                label=w._("Look at both centre cards"),
            )
            return (
                w._("Whose card, or both centre cards?"),
                [
                    *per_seat(
                        ids.NIGHT_LOOK, others, lambda name: w._("Look at {name}'s card", name=name)
                    ),
                    both,
                    skip,
                ],
            )
        case "rob":
            return (
                w._("Whose card do you take?"),
                [*per_seat(ids.NIGHT_ROB, others, lambda name: w._("Rob {name}", name=name)), skip],
            )
        case "swap":
            if pending_first is None:
                first = per_seat(
                    ids.NIGHT_SWAP, others, lambda name: w._("Swap {name}'s card first", name=name)
                )
                return w._("Swap whom? Pick the first."), [*first, skip]
            seconds = [seat for seat in others if seat.key != pending_first.key]
            first_name = pending_first.button_text
            reset = button(
                w._("Start over"),
                ids.NIGHT_SWAP_RESET,
                value(),
                label=w._("Start over: pick the first card again"),
            )
            return (
                w._("Swap {name} with…", name=pending_first.mention),
                [
                    *per_seat(
                        ids.NIGHT_SWAP,
                        seconds,
                        lambda name: w._(
                            "Swap {first}'s card with {name}'s", first=first_name, name=name
                        ),
                    ),
                    reset,
                    skip,
                ],
            )
        case None:
            return None, [button(w._("Got it"), ids.NIGHT_CONFIRM, value(), style="primary")]
    raise ValueError(f"unknown night choice kind {kind!r}")


def knowledge_text(
    knowledge: Knowledge,
    labels: Mapping[str, SeatLabel],
    *,
    card: Card,
    choice: NightChoice | None = None,
    words: Words = ENGLISH,
) -> str:
    """What a seat dealt ``card`` learned at night, as a sentence addressed to it.

    ``choice`` is the seat's own night choice: it names the seat a Robber took from.
    """
    w = words
    match knowledge:
        case SawWerewolves(werewolves, centre) if card is Card.WEREWOLF:
            if centre is not None:  # a lone wolf's peek: waking already said it is alone
                if centre.index == 0:
                    return w._("The left centre card is *{card}*.", card=centre.card)
                return w._("The right centre card is *{card}*.", card=centre.card)
            wolves = seat_names(labels, werewolves, w)
            if not werewolves:
                return w._("You are the only werewolf.")
            if len(werewolves) == 1:
                return w._("The other werewolf is {wolves}.", wolves=wolves)
            return w._("The other werewolves are {wolves}.", wolves=wolves)
        case SawWerewolves(werewolves):
            if not werewolves:
                return w._("No one at the table was dealt a Werewolf.")
            wolves = seat_names(labels, werewolves, w)
            if len(werewolves) == 1:
                return w._("The werewolf is {wolves}.", wolves=wolves)
            return w._("The werewolves are {wolves}.", wolves=wolves)
        case SawSeat(seat, seen):
            return w._("{seat}'s card is *{card}*.", seat=seat_name(labels, seat), card=seen)
        case SawCenter((left, right)):
            return w._(
                "The centre cards are *{left}* (left) and *{right}* (right).",
                left=left,
                right=right,
            )
        case SawCard(held) if card is Card.ROBBER and isinstance(choice, Rob):
            return w._(
                "You took {seat}'s card: your card is now *{card}*.",
                seat=seat_name(labels, choice.seat),
                card=held,
            )
        case SawCard(held) if card is Card.INSOMNIAC:
            return w._("At the end of the night your card is *{card}*.", card=held)
        case SawCard(held):
            return w._("Your card is now *{card}*.", card=held)
    raise TypeError(f"not a night's knowledge: {knowledge!r}")
