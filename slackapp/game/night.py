"""The night: the choices a dealt card allows, and their resolution in the fixed order.

Every seat acts by the card it was *dealt*. Nothing moves before the Robber, so what the lone
werewolf, the Minion, the Seer and the Robber learn depends only on the deal; the Insomniac
learns its card as it is at dawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from slackapp.game.cards import Card, Deal, deck_for

# The cards the night tests at every step, as plain names: looking a member up on its enum
# costs as much as the test itself, and the referee resolves tens of thousands of nights a second.
_WEREWOLF, _MINION, _SEER = Card.WEREWOLF, Card.MINION, Card.SEER
_ROBBER, _TROUBLEMAKER, _INSOMNIAC = Card.ROBBER, Card.TROUBLEMAKER, Card.INSOMNIAC

# --- choices -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Peek:
    """A lone werewolf looks at centre card ``index`` (0 left, 1 right)."""

    index: int


@dataclass(frozen=True)
class LookAtSeat:
    """The Seer looks at another seat's card."""

    seat: str


@dataclass(frozen=True)
class LookAtCenter:
    """The Seer looks at both centre cards."""


@dataclass(frozen=True)
class Rob:
    """The Robber takes ``seat``'s card and leaves its own there."""

    seat: str


@dataclass(frozen=True)
class Swap:
    """The Troublemaker swaps two other seats' cards."""

    first: str
    second: str


NightChoice = Peek | LookAtSeat | LookAtCenter | Rob | Swap


class NightRule(StrEnum):
    """The rule a night choice breaks: what a person is told, as data
    (``slackapp.blocks.said`` words it)."""

    NOT_THIS_CARD = "not_this_card"
    CHOICE_TO_MAKE = "choice_to_make"
    NOTHING_TO_SKIP = "nothing_to_skip"
    NO_PICK = "no_pick"
    CENTRE_CARD = "centre_card"
    ONLY_TROUBLEMAKER = "only_troublemaker"
    TWO_OTHERS = "two_others"
    TWO_DIFFERENT = "two_different"
    NOT_ITSELF = "not_itself"
    UNKNOWN_SEAT = "unknown_seat"


class IllegalChoice(ValueError):
    """A night choice that the seat's dealt card cannot make: the ``rule`` it breaks, and (for
    the referee, in English) which seat made it."""

    def __init__(self, rule: NightRule, detail: str = "") -> None:
        super().__init__(detail or rule.value)
        self.rule = rule


# --- what a seat learns --------------------------------------------------------------------


@dataclass(frozen=True)
class CenterCard:
    index: int
    card: Card


@dataclass(frozen=True)
class SawWerewolves:
    """A Werewolf learns the *other* werewolves (and a lone wolf maybe a centre card);
    the Minion learns all of them."""

    werewolves: tuple[str, ...]
    center: CenterCard | None = None


@dataclass(frozen=True)
class SawSeat:
    """The Seer saw ``seat``'s card as it was dealt."""

    seat: str
    card: Card


@dataclass(frozen=True)
class SawCenter:
    """The Seer saw both centre cards."""

    cards: tuple[Card, Card]


@dataclass(frozen=True)
class SawCard:
    """The Robber's new card, or the Insomniac's card at dawn."""

    card: Card


Knowledge = SawWerewolves | SawSeat | SawCenter | SawCard


def choice_kind(card: Card, lone_wolf: bool) -> str | None:
    """The kind of choice ``card`` offers at night, or None when it only confirms."""
    if card is Card.WEREWOLF:
        return "peek" if lone_wolf else None
    return {Card.SEER: "look", Card.ROBBER: "rob", Card.TROUBLEMAKER: "swap"}.get(card)


def check_choice(deal: Deal, seat: str, choice: NightChoice) -> None:
    """Raise IllegalChoice unless ``seat`` may make ``choice`` with the card it was dealt."""
    card = deal.dealt[seat]
    # One test per card rather than a match: every choice of every deal the referee reads
    # comes through here.
    if card is _ROBBER and isinstance(choice, Rob):
        _must_be_other(deal, seat, choice.seat)
        return
    if card is _TROUBLEMAKER and isinstance(choice, Swap):
        _must_be_other(deal, seat, choice.first)
        _must_be_other(deal, seat, choice.second)
        if choice.first == choice.second:
            raise IllegalChoice(NightRule.TWO_DIFFERENT, f"{seat!r} must swap two different seats")
        return
    if card is _SEER and isinstance(choice, LookAtSeat):
        _must_be_other(deal, seat, choice.seat)
        return
    if card is _SEER and isinstance(choice, LookAtCenter):
        return
    lone = card is _WEREWOLF and deal.dealt_werewolves() == (seat,)
    if lone and isinstance(choice, Peek):
        index = choice.index
        if index not in (0, 1) or isinstance(index, bool):
            raise IllegalChoice(
                NightRule.CENTRE_CARD, f"{seat!r} may peek at centre card 0 or 1, not {index!r}"
            )
        return
    article = "an" if card.value[0] in "AEIOU" else "a"
    what = "a lone Werewolf" if lone else f"{article} {card}"
    raise IllegalChoice(
        NightRule.NOT_THIS_CARD, f"{seat!r} was dealt {what} and cannot make that choice"
    )


def _must_be_other(deal: Deal, seat: str, target: str) -> None:
    if target == seat:
        raise IllegalChoice(NightRule.NOT_ITSELF, f"{seat!r} cannot act on itself")
    if target not in deal.dealt:
        raise IllegalChoice(NightRule.UNKNOWN_SEAT, f"{seat!r} names unknown seat {target!r}")


def learned_on_choosing(deal: Deal, seat: str, choice: NightChoice | None) -> Knowledge | None:
    """What ``seat`` learns as soon as it wakes and chooses (everything but the Insomniac).

    Valid before dawn because nothing moves before the Robber has looked.
    """
    card = deal.dealt[seat]
    if card is _WEREWOLF:
        others = tuple(w for w in deal.dealt_werewolves() if w != seat)
        peek = None
        if isinstance(choice, Peek):
            peek = CenterCard(choice.index, deal.center[choice.index])
        return SawWerewolves(others, peek)
    if card is _MINION:
        return SawWerewolves(deal.dealt_werewolves())
    if isinstance(choice, Rob):
        return SawCard(deal.dealt[choice.seat])
    if isinstance(choice, LookAtSeat):
        return SawSeat(choice.seat, deal.dealt[choice.seat])
    if isinstance(choice, LookAtCenter):
        return SawCenter(deal.center)
    return None


# --- resolution ----------------------------------------------------------------------------

WAKE_ORDER = (
    Card.WEREWOLF,
    Card.MINION,
    Card.SEER,
    Card.ROBBER,
    Card.TROUBLEMAKER,
    Card.INSOMNIAC,
)
_WAKE_RANK = {card: rank for rank, card in enumerate(WAKE_ORDER)}


def wake_order(seat_count: int) -> tuple[Card, ...]:
    """The cards of a table's deck that wake, in the order the night calls them."""
    deck = deck_for(seat_count)
    return tuple(card for card in WAKE_ORDER if card in deck)


MOVES_CARDS = (Card.ROBBER, Card.TROUBLEMAKER)
"""The cards whose night moves cards between seats."""


def may_still_move(card: Card, seat_count: int) -> bool:
    """Whether a card that moves cards wakes after ``card`` at this table, so that what a seat
    dealt ``card`` saw of its own card could still change: after the Robber the Troublemaker
    wakes; after the Insomniac no one does.

    >>> may_still_move(Card.ROBBER, 5), may_still_move(Card.INSOMNIAC, 5)
    (True, False)
    """
    order = wake_order(seat_count)
    later = order[order.index(card) + 1 :] if card in order else order
    return any(each in MOVES_CARDS for each in later)


@dataclass(frozen=True)
class NightStep:
    """One seat's turn in the night, in wake order: its dealt card, its choice, what it learned."""

    seat: str
    card: Card
    choice: NightChoice | None
    learned: Knowledge | None


@dataclass(frozen=True)
class CardMove:
    """Two seats' cards changed hands in the night: ``by`` robbed or swapped them, and after it
    ``first`` holds ``first_card`` and ``second`` holds ``second_card``."""

    by: str
    first: str
    second: str
    first_card: Card
    second_card: Card

    @property
    def changes_sides(self) -> bool:
        """Both seats went over to the other team (cards of two teams changed hands)."""
        return self.first_card.team != self.second_card.team


@dataclass(frozen=True)
class Night:
    dawn: dict[str, Card]
    center: tuple[Card, Card]
    seen: dict[str, Knowledge]
    """What each seat learned, in seat order; seats that learned nothing are absent."""
    steps: tuple[NightStep, ...]
    """Every seat whose dealt card wakes, in wake order then seat order."""
    moves: tuple[CardMove, ...] = ()
    """Every exchange of cards, in the order the night made them (the Robber's, the
    Troublemaker's): what the night did to the teams."""

    def changed_hands(self, seat: str) -> bool:
        """Whether the seat's card was exchanged in the night, even when the same kind of card
        came back to it by dawn (robbed and swapped back, or two Villagers swapped)."""
        return any(seat in (move.first, move.second) for move in self.moves)


def resolve_night(deal: Deal, choices: Mapping[str, NightChoice]) -> Night:
    """Play the night in the fixed order. A seat absent from ``choices`` chose nothing.

    Raises IllegalChoice for a choice the seat's dealt card cannot make.
    """
    for chooser, made in choices.items():
        if chooser not in deal.dealt:
            raise IllegalChoice(
                NightRule.UNKNOWN_SEAT, f"unknown seat {chooser!r} made a night choice"
            )
        check_choice(deal, chooser, made)

    holding = dict(deal.dealt)
    learned: dict[str, Knowledge] = {}
    steps: list[NightStep] = []
    moves: list[CardMove] = []
    by_rank: list[list[str]] = [[] for _ in WAKE_ORDER]
    for seat in deal.seats:  # each card's seats in seat order
        rank = _WAKE_RANK.get(deal.dealt[seat])
        if rank is not None:
            by_rank[rank].append(seat)
    for seat in [seat for seats in by_rank for seat in seats]:
        card = deal.dealt[seat]
        choice = choices.get(seat)
        knowledge: Knowledge | None
        if card is _INSOMNIAC:
            knowledge = SawCard(holding[seat])  # wakes last: its card is as at dawn
        else:
            knowledge = learned_on_choosing(deal, seat, choice)
        if isinstance(choice, Rob):
            target = choice.seat
            holding[seat], holding[target] = holding[target], holding[seat]
            moves.append(CardMove(seat, seat, target, holding[seat], holding[target]))
        elif isinstance(choice, Swap):
            first, second = choice.first, choice.second
            holding[first], holding[second] = holding[second], holding[first]
            moves.append(CardMove(seat, first, second, holding[first], holding[second]))
        if knowledge is not None:
            learned[seat] = knowledge
        steps.append(NightStep(seat, card, choice, knowledge))

    seen = {seat: learned[seat] for seat in deal.seats if seat in learned}
    return Night(
        dawn=holding, center=deal.center, seen=seen, steps=tuple(steps), moves=tuple(moves)
    )
