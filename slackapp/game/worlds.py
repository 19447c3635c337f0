"""The deals one seat cannot rule out, and what they say about the table at dawn.

A seat knows the public facts (the seats, the deck for that many seats, the fixed night order)
and what its own card showed it. Everything else could be any way the deck allows, so the seat
keeps every *world* that agrees with what it knows:

- a **layout**: the cards it has not seen, on the other seats and in the centre, every
  arrangement of the deck being equally likely before the night;
- the **moves** of the other cards that move cards: a Robber dealt to another seat robs one of
  its other seats, a Troublemaker swaps two of its other seats. We assume each picks uniformly
  among its legal moves. That is also how the bots themselves pick a target: a card that has
  just woken knows nothing that tells the other seats apart, so no seat is a better target than
  another (see :mod:`slackapp.game.bots`). A person may pick with a purpose or not at all; the
  bots do not try to read people.

Knowledge prunes the layouts: a Werewolf knows which other seats were dealt a Werewolf (and so
that no other seat was), the Minion all of them, the Seer one seat's card or both centre cards,
the Robber its victim's card, a lone wolf one centre card. The Insomniac knows its card at dawn,
which prunes layout and moves together. Nothing is ever read from the real deal: a
:class:`Sight` is built from the seat's own view only.

When the worlds are few (small tables, a seat that saw a lot, or one that knows the Robber or
the Troublemaker to be itself or in the centre) they are all enumerated and weighed exactly;
otherwise a fixed number are drawn from the seat's own seeded generator.
Either way each world weighs what it is worth: a layout is worth the same as any other, and
each move the chance the mover picks it.

The seats the seat knows nothing particular about are interchangeable in this model, so their
estimates are pooled: every such seat gets their average. That makes "equally likely" exact
even when the worlds are sampled, which is what lets bots agree on one seat among equals.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import cast

from slackapp.game.cards import Card, Team

_WEREWOLF, _MINION = Card.WEREWOLF, Card.MINION
_ROBBER, _TROUBLEMAKER = Card.ROBBER, Card.TROUBLEMAKER

EXACT_WORLDS = 2_000
"""Enumerate every world when there are at most this many; otherwise sample."""
SAMPLED_WORLDS = 700
"""How many worlds a seat draws when there are too many to enumerate."""
SAMPLING_ATTEMPTS = 4 * SAMPLED_WORLDS
"""Draws allowed before giving up on more worlds (only the Insomniac rejects any)."""

Move = tuple[int, int]
"""Two positions whose cards are swapped: a robbery (robber, victim) or a Troublemaker's swap."""


@dataclass(frozen=True)
class Sight:
    """What one seat knows, by position: seats ``0 .. n-1`` in seat order, then the two centre
    cards at ``n`` and ``n + 1``."""

    me: int
    seat_count: int
    deck: tuple[Card, ...]
    known: tuple[tuple[int, Card], ...]
    """(position, card) for every position whose card *as dealt* the seat knows, its own
    among them, in position order."""
    all_wolves_known: bool = False
    """True when the seat knows every seat dealt a Werewolf (the wolves and the Minion do)."""
    dawn_card: Card | None = None
    """Its own card at dawn, if it looked (the Insomniac)."""
    my_move: Move | None = None
    """Its own robbery or swap, if it made one."""

    @property
    def others(self) -> list[int]:
        return [seat for seat in range(self.seat_count) if seat != self.me]

    @property
    def cards_known(self) -> dict[int, Card]:
        return dict(self.known)


@dataclass(frozen=True)
class World:
    weight: float
    layout: tuple[Card, ...]
    """Every position's card as dealt."""
    robbery: Move | None
    swap: Move | None


def _free_cards(sight: Sight) -> Counter[Card] | None:
    """The cards the seat has not placed, or None when what it knows cannot come from the deck."""
    left = Counter(sight.deck)
    left.subtract(card for _, card in sight.known)
    if any(count < 0 for count in left.values()):
        return None
    return +left


def _wolf_places(sight: Sight) -> list[int]:
    """Where an unplaced Werewolf may lie: anywhere unknown, or only in the centre when the
    seat knows every seat dealt one."""
    first = sight.seat_count if sight.all_wolves_known else 0
    known = sight.cards_known
    return [pos for pos in range(first, sight.seat_count + 2) if pos not in known]


def _arrangements(cards: Counter[Card]) -> Iterator[tuple[Card, ...]]:
    """Every distinct ordering of a small multiset of cards."""
    if not cards:
        yield ()
        return
    for card in list(cards):
        rest = cards.copy()
        rest[card] -= 1
        for tail in _arrangements(+rest):
            yield (card, *tail)


def _layout_count(sight: Sight, free: Counter[Card]) -> int:
    wolves = free[_WEREWOLF]
    others = sum(free.values()) - wolves
    ways = math.comb(len(_wolf_places(sight)), wolves) * math.factorial(others)
    for card, count in free.items():
        if card is not _WEREWOLF:
            ways //= math.factorial(count)
    return ways


def _mover_seat(layout: tuple[Card, ...], seat_count: int, card: Card) -> int | None:
    """The first seat dealt ``card``: its first position, unless that is in the centre. The
    tuple's own search is several times faster than a loop over the seats."""
    if card not in layout:
        return None
    position = layout.index(card)
    return position if position < seat_count else None


def _moves(
    sight: Sight, layout: tuple[Card, ...]
) -> Iterator[tuple[float, Move | None, Move | None]]:
    """Every (chance, robbery, swap) of the night for one layout."""
    n, me = sight.seat_count, sight.me
    robberies: list[Move | None] = [None]
    swaps: list[Move | None] = [None]
    robber = _mover_seat(layout, n, _ROBBER)
    if robber == me:
        robberies = [sight.my_move]
    elif robber is not None:
        robberies = [(robber, victim) for victim in range(n) if victim != robber]
    troublemaker = _mover_seat(layout, n, _TROUBLEMAKER)
    if troublemaker == me:
        swaps = [sight.my_move]
    elif troublemaker is not None:
        seats = [seat for seat in range(n) if seat != troublemaker]
        swaps = list(itertools.combinations(seats, 2))
    chance = 1 / (len(robberies) * len(swaps))
    for robbery in robberies:
        for swap in swaps:
            yield chance, robbery, swap


# --- drawing as random.Random does -----------------------------------------------------------
# A sampled world takes a handful of indices from the generator. random.Random's randrange,
# sample and shuffle draw each one the same way (CPython 3.10 to 3.13: Random._randbelow, by
# rejection from getrandbits), and their own checks cost several times the draw at this size.
# The functions here make exactly those draws from getrandbits, so a seat's worlds stay the
# ones those methods would give.

Bits = Callable[[int], int]
"""A generator's ``getrandbits``."""


def _below(bits: Bits, size: int) -> int:
    """``rng.randrange(size)``, for ``size`` > 0."""
    length = size.bit_length()
    index = bits(length)
    while index >= size:
        index = bits(length)
    return index


def _sample(bits: Bits, population: Sequence[int], count: int) -> list[int]:
    """``rng.sample(population, count)`` for a population of at most 21 (random.sample then
    draws from a shrinking pool)."""
    pool = list(population)
    size = len(pool)
    chosen = []
    for _ in range(count):
        # _below(bits, size), written out: this is the innermost loop of the sampling.
        length = size.bit_length()
        index = bits(length)
        while index >= size:
            index = bits(length)
        chosen.append(pool[index])
        size -= 1
        pool[index] = pool[size]
    return chosen


def _pair(bits: Bits, size: int) -> tuple[int, int]:
    """``rng.sample(range(size), 2)``, for ``size`` of 2 to 21: the second index is drawn from
    the pool with the first replaced by the last, ``size - 1``."""
    first = _below(bits, size)
    second = _below(bits, size - 1)
    return first, size - 1 if second == first else second


def _shuffle(bits: Bits, cards: list[Card]) -> None:
    """``rng.shuffle(cards)``."""
    for last in range(len(cards) - 1, 0, -1):
        # _below(bits, last + 1), written out: this is the innermost loop of the sampling.
        length = (last + 1).bit_length()
        index = bits(length)
        while index > last:
            index = bits(length)
        cards[last], cards[index] = cards[index], cards[last]


def _sampled_moves(
    sight: Sight, layout: tuple[Card, ...], bits: Bits
) -> tuple[Move | None, Move | None]:
    n, me = sight.seat_count, sight.me
    robbery = swap = None
    robber = _mover_seat(layout, n, _ROBBER)
    if robber == me:
        robbery = sight.my_move
    elif robber is not None:
        victim = _below(bits, n - 1)
        robbery = (robber, victim + (victim >= robber))
    troublemaker = _mover_seat(layout, n, _TROUBLEMAKER)
    if troublemaker == me:
        swap = sight.my_move
    elif troublemaker is not None:
        first, second = _pair(bits, n - 1)
        swap = (first + (first >= troublemaker), second + (second >= troublemaker))
    return robbery, swap


def dawn(
    layout: Sequence[Card], seat_count: int, robbery: Move | None, swap: Move | None
) -> list[Card]:
    """The seats' cards at dawn: the Robber's move, then the Troublemaker's."""
    cards = list(layout[:seat_count])
    for move in (robbery, swap):
        if move is not None:
            first, second = move
            cards[first], cards[second] = cards[second], cards[first]
    return cards


def _dawn_card(layout: Sequence[Card], seat: int, robbery: Move | None, swap: Move | None) -> Card:
    """``dawn(...)[seat]`` without the others: follow the seat back through the swap, then the
    robbery, to the position whose dealt card it ends up with."""
    for move in (swap, robbery):
        if move is not None:
            if seat == move[0]:
                seat = move[1]
            elif seat == move[1]:
                seat = move[0]
    return layout[seat]


def _fits(sight: Sight, layout: Sequence[Card], robbery: Move | None, swap: Move | None) -> bool:
    """Whether the night leaves the seat the card it saw at dawn (an Insomniac's), if any."""
    if sight.dawn_card is None:
        return True
    return _dawn_card(layout, sight.me, robbery, swap) is sight.dawn_card


def _most_moves(sight: Sight, free: Counter[Card]) -> int:
    """The most (robbery, swap) pairs one layout can have: a Robber or Troublemaker the seat
    knows to lie with itself or in the centre moves nothing it has to guess."""
    n = sight.seat_count

    def guessed(card: Card) -> bool:
        """Whether the first seat dealt ``card`` may be another seat."""
        return free[card] > 0 or any(
            card is known and pos != sight.me and pos < n for pos, known in sight.known
        )

    robberies = n - 1 if guessed(_ROBBER) else 1
    swaps = math.comb(n - 1, 2) if guessed(_TROUBLEMAKER) else 1
    return robberies * swaps


def possible_worlds(sight: Sight, rng: random.Random) -> tuple[list[World], bool]:
    """The worlds the seat cannot rule out, and whether they are all of them (else a sample).

    Empty when what the seat knows cannot happen with the deck it assumes (a custom deck).
    """
    free = _free_cards(sight)
    if free is None:
        return [], True
    places = _wolf_places(sight)
    if free[_WEREWOLF] > len(places):
        return [], True
    if _layout_count(sight, free) * _most_moves(sight, free) <= EXACT_WORLDS:
        worlds = _every_world(sight, free, places)
        return [w for w in worlds if _fits(sight, w.layout, w.robbery, w.swap)], True
    return _sampled_worlds(sight, free, places, rng), False


class _LayoutTemplate:
    """The positions whose card the seat knows, filled once: a world only places the rest."""

    def __init__(self, sight: Sight) -> None:
        cards: list[Card | None] = [None] * (sight.seat_count + 2)
        for pos, card in sight.known:
            cards[pos] = card
        self.cards = cards
        self.unknown = [pos for pos, card in enumerate(cards) if card is None]

    def fill(self, wolf_at: Sequence[int], rest: Sequence[Card]) -> tuple[Card, ...]:
        """The layout with a Werewolf at each of ``wolf_at`` and ``rest``, in order, elsewhere."""
        cards = self.cards.copy()
        for pos in wolf_at:
            cards[pos] = _WEREWOLF
        others = iter(rest)
        for pos in self.unknown:
            if cards[pos] is None:
                cards[pos] = next(others)
        return cast(tuple[Card, ...], tuple(cards))  # every position is filled now


def _every_world(sight: Sight, free: Counter[Card], places: list[int]) -> Iterator[World]:
    others = +Counter({card: count for card, count in free.items() if card is not _WEREWOLF})
    template = _LayoutTemplate(sight)
    for wolf_at in itertools.combinations(places, free[_WEREWOLF]):
        for rest in _arrangements(others):
            layout = template.fill(wolf_at, rest)
            for chance, robbery, swap in _moves(sight, layout):
                yield World(chance, layout, robbery, swap)


def _sampled_worlds(
    sight: Sight, free: Counter[Card], places: list[int], rng: random.Random
) -> list[World]:
    wolves = free[_WEREWOLF]
    others = [card for card in free.elements() if card is not _WEREWOLF]
    template = _LayoutTemplate(sight)
    bits = rng.getrandbits
    worlds: list[World] = []
    for _ in range(SAMPLING_ATTEMPTS):
        wolf_at = _sample(bits, places, wolves)
        _shuffle(bits, others)
        layout = template.fill(wolf_at, others)
        robbery, swap = _sampled_moves(sight, layout, bits)
        if _fits(sight, layout, robbery, swap):
            worlds.append(World(1.0, layout, robbery, swap))
            if len(worlds) == SAMPLED_WORLDS:
                break
    return worlds


# --- what the worlds say -------------------------------------------------------------------


@dataclass
class Stakes:
    """Weights summed over worlds: what :class:`Beliefs` is worked out from.

    ``village_wolf[j]``: the seat is village at dawn and seat ``j`` holds a Werewolf.
    ``team_wolf[j]``: the seat is on the werewolf team at dawn and ``j`` holds a Werewolf.
    """

    seat_count: int
    total: float = 0.0
    village: float = 0.0
    minion_no_wolf: float = 0.0
    no_wolf: float = 0.0
    village_wolf: list[float] = field(default_factory=list)
    team_wolf: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.village_wolf = [0.0] * self.seat_count
        self.team_wolf = [0.0] * self.seat_count

    def add(self, weight: float, my_card: Card, wolves: Sequence[int]) -> None:
        """One world: the seat's own card at dawn and the seats holding a Werewolf then."""
        self.total += weight
        on_village = my_card is not _WEREWOLF and my_card is not _MINION
        if on_village:
            self.village += weight
            if wolves:
                for seat in wolves:
                    self.village_wolf[seat] += weight
            else:
                self.no_wolf += weight
        elif wolves:
            for seat in wolves:
                self.team_wolf[seat] += weight
        else:  # the Minion, with both Werewolves in the centre
            self.minion_no_wolf += weight
            self.no_wolf += weight

    def wolf_chance(self, seat: int) -> float:
        return (self.village_wolf[seat] + self.team_wolf[seat]) / self.total


def stakes(sight: Sight, worlds: Sequence[World], my_move: Move | None = None) -> Stakes:
    """Sum the worlds; ``my_move`` replaces the seat's own move (to weigh a move not yet made)."""
    n, me = sight.seat_count, sight.me
    summed = Stakes(n)
    for world in worlds:
        robbery, swap = world.robbery, world.swap
        if my_move is not None:
            if world.layout[me] is _ROBBER:
                robbery = my_move
            else:
                swap = my_move
        cards = dawn(world.layout, n, robbery, swap)
        summed.add(world.weight, cards[me], [seat for seat in range(n) if cards[seat] is _WEREWOLF])
    return summed


def seat_classes(sight: Sight) -> dict[int, tuple[Card | None, bool]]:
    """Each other seat's standing in what the seat knows; seats alike here are interchangeable."""
    moved, known = sight.my_move or (), sight.cards_known
    return {seat: (known.get(seat), seat in moved) for seat in sight.others}


def pooled(sight: Sight, value: dict[int, float]) -> dict[int, float]:
    """``value`` averaged over interchangeable seats."""
    groups: dict[tuple[Card | None, bool], list[int]] = {}
    for seat, standing in seat_classes(sight).items():
        groups.setdefault(standing, []).append(seat)
    averaged: dict[int, float] = {}
    for seats in groups.values():
        mean = sum(value[seat] for seat in seats) / len(seats)
        averaged.update(dict.fromkeys(seats, mean))
    return averaged


@lru_cache(maxsize=4096)  # asked again for every ballot the bot weighs, with each other order
def canonical(sight: Sight) -> tuple[Sight, tuple[int, ...]]:
    """The same knowledge, renumbered so that every seat in the same situation writes it alike.

    The seat itself comes first, then the seats it knows something of (ordered by what it
    knows), then the rest; a lone known centre card goes on the left, two in name order.
    Returns the renumbered sight and, for each new position, the old one.
    """
    n, standing = sight.seat_count, seat_classes(sight)
    others = sorted(
        sight.others,
        key=lambda seat: (standing[seat][0] is None, str(standing[seat][0]), not standing[seat][1]),
    )
    known = sight.cards_known
    center = [n, n + 1]
    if (n + 1 in known and n not in known) or (
        n in known and n + 1 in known and str(known[n + 1]) < str(known[n])
    ):
        center.reverse()
    old_of = (sight.me, *others, *center)
    new_of = {old: new for new, old in enumerate(old_of)}
    move = sight.my_move
    if move is not None:
        first, second = new_of[move[0]], new_of[move[1]]
        move = (first, second) if move[0] == sight.me else (min(first, second), max(first, second))
    form = Sight(
        me=0,
        seat_count=n,
        deck=tuple(sorted(sight.deck, key=_CARD_ORDER.index)),
        known=tuple(sorted((new_of[pos], card) for pos, card in sight.known)),
        all_wolves_known=sight.all_wolves_known,
        dawn_card=sight.dawn_card,
        my_move=move,
    )
    return form, old_of


_CARD_ORDER = list(Card)


@dataclass(frozen=True)
class Beliefs:
    """What one seat believes of the table at dawn, seat by seat in seat order."""

    werewolf_at_dawn: tuple[float, ...]
    """Each seat's chance of holding a Werewolf at dawn (0 for the seat itself)."""
    werewolf_while_village: tuple[float, ...]
    """Each seat's chance of holding a Werewolf at dawn *and* the seat itself being village."""
    team: dict[Team, float]
    """The seat's own chance of being on each team at dawn."""
    no_werewolf_at_table: float
    minion_alone: float
    """The chance that no seat holds a Werewolf at dawn and the seat itself holds the Minion."""
    worlds: int
    exact: bool

    @property
    def likely_team(self) -> Team:
        return Team.VILLAGE if self.team[Team.VILLAGE] >= 0.5 else Team.WEREWOLF


def summed_beliefs(sight: Sight, summed: Stakes, worlds: int, exact: bool) -> Beliefs:
    """The chances in ``summed`` (which holds at least one world), equal seats pooled."""
    total, seats = summed.total, range(sight.seat_count)
    wolf = pooled(sight, {seat: summed.wolf_chance(seat) for seat in sight.others})
    hit = pooled(sight, {seat: summed.village_wolf[seat] / total for seat in sight.others})
    village = summed.village / total
    return Beliefs(
        werewolf_at_dawn=tuple(wolf.get(seat, 0.0) for seat in seats),
        werewolf_while_village=tuple(hit.get(seat, 0.0) for seat in seats),
        team={Team.VILLAGE: village, Team.WEREWOLF: 1 - village},
        no_werewolf_at_table=summed.no_wolf / total,
        minion_alone=summed.minion_no_wolf / total,
        worlds=worlds,
        exact=exact,
    )


def believe(sight: Sight) -> Beliefs | None:
    """What the worlds the seat cannot rule out say; None when there are none.

    Worked out once per situation: two seats that know the same, up to which seat is which,
    believe the same, and the worlds are drawn from a generator seeded by the situation itself.
    """
    form, old_of = canonical(sight)
    believed = _believe_canonical(form)
    if believed is None:
        return None
    n = sight.seat_count

    def back(values: tuple[float, ...]) -> tuple[float, ...]:
        by_old = [0.0] * n
        for new, old in enumerate(old_of[:n]):
            by_old[old] = values[new]
        return tuple(by_old)

    return replace(
        believed,
        werewolf_at_dawn=back(believed.werewolf_at_dawn),
        werewolf_while_village=back(believed.werewolf_while_village),
    )


@lru_cache(maxsize=4096)
def _believe_canonical(sight: Sight) -> Beliefs | None:
    worlds, exact = possible_worlds(sight, random.Random(repr(sight)))
    summed = stakes(sight, worlds)
    if summed.total == 0:
        return None
    return summed_beliefs(sight, summed, len(worlds), exact)
