"""The seven cards, their teams and the one line a player reads, and the deck by table size."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import StrEnum

MIN_SEATS = 3
MAX_SEATS = 10
MIN_PEOPLE = 2
BOT_TABLE = 5
"""Bots fill empty seats up to this many seats ("that is how three players become five")."""


class Card(StrEnum):
    """A card, named exactly as players read it."""

    WEREWOLF = "Werewolf"
    MINION = "Minion"
    SEER = "Seer"
    ROBBER = "Robber"
    TROUBLEMAKER = "Troublemaker"
    INSOMNIAC = "Insomniac"
    VILLAGER = "Villager"

    @property
    def team(self) -> Team:
        return TEAM_OF[self]

    @property
    def line(self) -> str:
        """The one line of rules text a player holding this card reads."""
        return CARD_LINES[self]


class Team(StrEnum):
    VILLAGE = "village"
    WEREWOLF = "werewolf"


TEAM_OF: dict[Card, Team] = {
    card: Team.WEREWOLF if card in (Card.WEREWOLF, Card.MINION) else Team.VILLAGE for card in Card
}
"""Each card's team, looked up rather than worked out: the tally asks for it of every seat."""

CARD_LINES: dict[Card, str] = {
    Card.WEREWOLF: "Wakes with the other werewolves and sees them. "
    "A lone werewolf may look at one centre card.",
    Card.MINION: "Sees who the werewolves are. They never see the Minion.",
    Card.SEER: "May look at one other player's card, or at both centre cards.",
    Card.ROBBER: "May swap own card with another player's card, then looks at the new card.",
    Card.TROUBLEMAKER: "May swap the cards of two other players, without looking at either.",
    Card.INSOMNIAC: "Looks at own card at the very end of the night.",
    Card.VILLAGER: "Does not wake.",
}

REPEATABLE_CARDS = frozenset({Card.WEREWOLF, Card.VILLAGER})
"""Only these may appear more than once in a deck."""

_BASE_DECK = (Card.WEREWOLF, Card.WEREWOLF, Card.SEER, Card.ROBBER, Card.TROUBLEMAKER)
_ADDED_BY_SEAT = {4: Card.VILLAGER, 5: Card.INSOMNIAC, 6: Card.MINION}


def deck_for(seat_count: int) -> list[Card]:
    """The deck for a table of ``seat_count`` seats: seats + 2 cards.

    >>> [card.value for card in deck_for(3)]
    ['Werewolf', 'Werewolf', 'Seer', 'Robber', 'Troublemaker']
    >>> len(deck_for(10))
    12
    """
    if not MIN_SEATS <= seat_count <= MAX_SEATS:
        raise ValueError(f"a table has {MIN_SEATS} to {MAX_SEATS} seats, not {seat_count}")
    deck = list(_BASE_DECK)
    for seats in range(4, seat_count + 1):
        deck.append(_ADDED_BY_SEAT.get(seats, Card.VILLAGER))
    return deck


def deck_in_play(seat_count: int) -> tuple[tuple[Card, int], ...]:
    """The table's deck as (card, copies), in the order the deck is built.

    >>> deck_in_play(3)[0] == (Card.WEREWOLF, 2)
    True
    """
    counts: dict[Card, int] = {}
    for card in deck_for(seat_count):
        counts[card] = counts.get(card, 0) + 1
    return tuple(counts.items())


@dataclass(frozen=True)
class Deal:
    """Who was dealt what, and the two cards face down in the centre (left, right)."""

    seats: tuple[str, ...]
    dealt: dict[str, Card]
    center: tuple[Card, Card]
    _werewolves: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Asked for by every wolf and the Minion at each step of the night: work it out once.
        werewolf, dealt = Card.WEREWOLF, self.dealt  # looked up once, not per seat
        wolves = tuple(seat for seat in self.seats if dealt[seat] is werewolf)
        object.__setattr__(self, "_werewolves", wolves)

    def dealt_werewolves(self) -> tuple[str, ...]:
        """The seats dealt a Werewolf, in seat order."""
        return self._werewolves

    def seat_dealt(self, card: Card) -> str | None:
        """The seat dealt ``card`` (a card that appears at most once), or None."""
        return next((seat for seat in self.seats if self.dealt[seat] is card), None)


def deal(seats: tuple[str, ...] | list[str], seed: int | str) -> Deal:
    """Shuffle the table's deck with a generator seeded by ``seed`` and deal it.

    The same seats and seed always give the same deal; the last two cards go to the centre.
    """
    seats = tuple(seats)
    deck = deck_for(len(seats))
    random.Random(seed).shuffle(deck)
    dealt = dict(zip(seats, deck, strict=False))
    return Deal(seats=seats, dealt=dealt, center=(deck[-2], deck[-1]))
