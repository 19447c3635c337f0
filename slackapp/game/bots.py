"""How a bot plays: its night move and its ballot, from nothing but what that bot knows.

A bot's view (:class:`BotView`) is its own seat, the table's seats, the card it was dealt and,
by day, its own night choice and what that showed it. With the deck for that many seats and the
fixed night order, which everyone knows, that is all it reasons from: the real deal never
reaches these functions. Every decision draws from a generator seeded by the game's seed, the
bot's seat and the decision, so a stored game replays exactly.

**Reasoning.** The bot keeps every deal and every night it cannot rule out
(:mod:`slackapp.game.worlds`): exactly when there are few, by seeded sampling when there are
many. From them it knows, for each other seat, the chance that it holds a Werewolf at dawn,
and for itself the chance of being on each team at dawn: a Robber that took a Werewolf *is* a
werewolf, a dealt Werewolf may have been robbed or swapped without knowing.

**The ballot.** A bot plays for the team it is more likely on at dawn. It weighs each ballot
(every other seat, and nobody) as if it were the one that settled the vote: naming seat *s*
means *s* dies, naming nobody means nobody does. It then wins or not by its team's rule
(RULES.md, "Who wins"), and it takes the ballot worth the most points: two for the win, one
for naming a seat that holds a Werewolf at dawn. What falls out:

- a bot that is likely village names the seat most likely to hold a Werewolf at dawn. It never
  names a seat it knows to be innocent: the Seer's innocent look, the Robber's victim (who now
  holds the Robber);
- it names nobody exactly when that is its best chance: a Seer that saw both Werewolves in
  the centre knows that the village wins only if nobody dies;
- a bot that is likely on the werewolf team (a dealt Werewolf or Minion that was probably not
  moved, a Robber that took a Werewolf or the Minion, an Insomniac that woke as one) names
  nobody whenever a Werewolf is at the table: that protects every Werewolf at once, and it
  never names one of them. A bot dealt a village card that is on the werewolf team now
  foresees the vote instead (below);
- a Minion that saw no Werewolf (both in the centre) names a seat, because it then wins only
  if someone else dies, unless its card has more likely than not been moved.

**The vote foreseen.** At a table of up to four seats (:data:`FORESEEN_VOTE_SEATS`) a bot
dealt a village card does not pretend to settle the vote alone: a handful of ballots decide
it, and the Werewolves' ballots for nobody are most of them. In every world it cannot rule
out it works out what each other seat would know there and the ballot that seat would weigh
alone, then counts the real tally and the real win (RULES.md) for each ballot of its own, and
takes the one worth the most points; where that changes nothing it keeps its ballot weighed
alone, which is what the others expect of it. A Robber that took a Werewolf at three seats,
say, sees that the Troublemaker may have swapped it back and that the wolves' ballots for
nobody save them without its own, so it names a seat, most often its victim. A bot dealt a
Werewolf or the Minion keeps the ballot weighed alone: its ballot for nobody is the shield
its team's win rests on, and wolves that foresaw a vote of bots they no longer faced (the
village foreseeing too) were found to give that shield up and lose. Up to four seats the
worlds are few enough to go through exactly, in milliseconds.

Above four seats the nights are too many to go through, and a bot foresees the vote from a
sample of its worlds (:data:`FORESEEN_WORLDS`, each with one draw of the others' looks), only
where its ballot weighed alone is most often wrong: dealt a village card, it now more likely
holds a Werewolf or the Minion (a Robber that took one, an Insomniac that woke as one). Alone
it would shield the wolves; but the wolves' own ballots for nobody, against a village that
agrees on one seat, settle the vote without it in most worlds, and there a ballot on a likely
Werewolf is a point for nothing. So it names a suspect unless its ballot for nobody (or for
its victim, drawing votes away from the wolves) saves its team often enough to be worth more.
A bot likely on the village's side keeps its ballot weighed alone there: it already names the
seat most likely to hold a Werewolf, and foreseeing for every bot would cost every game the
tens of milliseconds it now costs a few.

Bots that cannot tell the best seats apart (a Villager knows nothing of anyone) pick among them
by one order of the seats drawn from the game's seed alone, the same for every bot at the table.
Scattered over equal suspects their ballots would hardly ever outnumber the Werewolves' ballots
for nobody; agreed on one, they kill a Werewolf whenever that seat holds one. At a small table
each bot has an order of its own instead (:func:`seat_order`, from the seed and its seat), which
a bot foreseeing the vote reads for every seat: there a village that agreed by rote killed an
innocent whenever both Werewolves lay in the centre, and foreseeing the vote already brings the
village's ballots together where that pays.

**The night.** At night a bot knows only its own card, and every other seat looks the same to
it, so a target is drawn at random; what the bot decides is what kind of move to make
(:func:`night_plan`, the same at every game of a table size).

- A lone Werewolf peeks at a centre card: knowing one of them never hurts it.
- The Seer looks at one seat or at both centre cards, whichever leaves it, on average over its
  worlds, the better ballot afterwards (the ballot's worth as above). At three seats that is
  the centre (both Werewolves lie there one time in ten, and a seat's card says little when
  both others are suspects either way); from four seats up it is a seat, where a Werewolf seen
  is a ballot that almost surely hits.
- The Robber robs when that leaves it a better ballot than keeping its card, which it does at
  every table size: it learns a card, clears its victim, and if it took a Werewolf it is on
  the side that wins most often without talk.
- The Troublemaker swaps two other seats. It learns nothing either way, so its own ballot is
  as good with or without the swap; the swap leaves every Werewolf, and the Minion and Seer
  who saw them, less sure of who holds what.

The same policy is how a bot imagines everyone else's night: a Robber robs a seat, a
Troublemaker swaps two, each uniformly among its legal choices, so a bot's chances are right
when it plays other bots (``tests/game/test_bots.py`` checks them against many games).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

from slackapp.game.cards import TEAM_OF, Card, Deal, Team, deck_for
from slackapp.game.night import (
    IllegalChoice,
    Knowledge,
    LookAtCenter,
    LookAtSeat,
    Night,
    NightChoice,
    Peek,
    Rob,
    SawCard,
    SawCenter,
    SawSeat,
    SawWerewolves,
    Swap,
    check_choice,
    resolve_night,
)
from slackapp.game.vote import WEREWOLF_BALLOT_POINTS, WIN_POINTS
from slackapp.game.worlds import (
    Beliefs,
    Move,
    Sight,
    World,
    believe,
    possible_worlds,
    stakes,
    summed_beliefs,
)

WIN_WORTH = 2.0
WEREWOLF_BALLOT_WORTH = 1.0
"""The points a ballot can bring (RULES.md): two for the win, one for naming a Werewolf."""

EXACT_TIE = 1e-9
SAMPLED_TIE = 0.05
"""Ballots whose worth is this close count as equally good (rounding; sampling noise)."""


@dataclass(frozen=True)
class BotView:
    """Everything a bot may use: no other seat's card, no other seat's choice."""

    seat: str
    seats: tuple[str, ...]
    dealt: Card
    lone_wolf: bool = False
    choice: NightChoice | None = None
    learned: Knowledge | None = None

    @property
    def others(self) -> list[str]:
        return [seat for seat in self.seats if seat != self.seat]


def _rng(seed: int | str, seat: str, decision: str) -> random.Random:
    return random.Random(f"{seed}/{seat}/{decision}")


def seat_order(seats: tuple[str, ...], seed: int | str, voter: str) -> list[str]:
    """The order in which one bot breaks ties at a small table: from the seed and its seat."""
    order = list(seats)
    random.Random(f"{seed}/{voter}/ties").shuffle(order)
    return order


def table_order(seats: tuple[str, ...], seed: int | str) -> list[str]:
    """The order in which every bot of a game breaks ties between seats: from the seed alone."""
    order = list(seats)
    random.Random(f"{seed}/table").shuffle(order)
    return order


# --- what the bot knows, by position ---------------------------------------------------------


def sight_of(view: BotView) -> Sight:
    """The bot's knowledge as :mod:`~slackapp.game.worlds` reads it: positions, not names.

    Knowledge that does not fit the dealt card (no such night happens) is ignored.
    """
    seats = view.seats
    index = {seat: position for position, seat in enumerate(seats)}
    me, n = index[view.seat], len(seats)
    known = {me: view.dealt}
    all_wolves_known = False
    dawn_card = None
    my_move: Move | None = None
    learned, choice = view.learned, view.choice
    if view.dealt in (Card.WEREWOLF, Card.MINION):
        if isinstance(learned, SawWerewolves):
            known.update({index[w]: Card.WEREWOLF for w in learned.werewolves if w in index})
            all_wolves_known = True
            if learned.center is not None and view.dealt is Card.WEREWOLF:
                known[n + learned.center.index] = learned.center.card
        elif view.dealt is Card.WEREWOLF and view.lone_wolf:
            all_wolves_known = True
    elif view.dealt is Card.SEER:
        if isinstance(learned, SawSeat) and learned.seat in index:
            known[index[learned.seat]] = learned.card
        elif isinstance(learned, SawCenter):
            known[n], known[n + 1] = learned.cards
    elif view.dealt is Card.ROBBER and isinstance(choice, Rob) and choice.seat in index:
        my_move = (me, index[choice.seat])
        if isinstance(learned, SawCard):
            known[index[choice.seat]] = learned.card
    elif view.dealt is Card.TROUBLEMAKER and isinstance(choice, Swap):
        if choice.first in index and choice.second in index:
            my_move = (index[choice.first], index[choice.second])
    elif view.dealt is Card.INSOMNIAC and isinstance(learned, SawCard):
        dawn_card = learned.card
    return Sight(
        me=me,
        seat_count=n,
        deck=tuple(deck_for(n)),
        known=tuple(sorted(known.items())),
        all_wolves_known=all_wolves_known,
        dawn_card=dawn_card,
        my_move=my_move,
    )


@lru_cache(maxsize=1024)
def assumed_deck(seat_count: int, deck_werewolves: int, seen: tuple[Card, ...]) -> tuple[Card, ...]:
    """The deck for the table with ``deck_werewolves`` Werewolves and every card the bot saw.

    For the app's decks that is exactly :func:`deck_for`. The referee also accepts custom
    decks, and a bot at one must still vote: it swaps Villagers (then cards nobody saw) for
    the cards it needs.
    """
    deck = deck_for(seat_count)
    need = Counter(card for card in seen if card is not Card.WEREWOLF)
    have = Counter(deck)
    have[Card.WEREWOLF] = deck_werewolves
    for card, count in need.items():
        have[card] = max(have[card], count)
    excess = sum(have.values()) - len(deck)
    for card in (Card.VILLAGER, *Card):
        if card is not Card.WEREWOLF and excess > 0:
            dropped = min(excess, have[card] - need[card])
            have[card] -= dropped
            excess -= dropped
    have[Card.VILLAGER] -= min(excess, 0)  # too few cards: make up with Villagers
    return tuple(card for card in Card for _ in range(have[card]))


def bot_beliefs(view: BotView, deck_werewolves: int) -> Beliefs | None:
    """What the bot believes of the table at dawn (None if nothing it imagines fits)."""
    sight = sight_of(view)
    seen = tuple(card for _, card in sight.known)
    deck = assumed_deck(len(view.seats), deck_werewolves, seen)
    return believe(replace(sight, deck=deck))


# --- the ballot --------------------------------------------------------------------------------


def ballot_worth(believed: Beliefs, team: Team, seat: int | None) -> float:
    """Expected points for ``team`` if this ballot settled the vote: ``seat`` alone dies, or
    nobody (None) does."""
    wolf_at_table = 1 - believed.no_werewolf_at_table
    if seat is None:
        wins = believed.no_werewolf_at_table if team is Team.VILLAGE else wolf_at_table
        return WIN_WORTH * wins
    werewolf = believed.werewolf_at_dawn[seat]
    # The werewolf team wins if a Werewolf lives on, or if there is none and the Minion sees
    # someone else die.
    wins = werewolf if team is Team.VILLAGE else wolf_at_table - werewolf + believed.minion_alone
    return WIN_WORTH * wins + WEREWOLF_BALLOT_WORTH * werewolf


def best_ballot(
    believed: Beliefs, me: int, order: list[int], tie: float
) -> tuple[float, int | None]:
    """The best ballot for the bot's likely team: its worth, and its seat (None for nobody).

    Seats whose worth is within ``tie`` of the best are equally good: the first of them in
    ``order`` is named. Nobody is named when it is worth at least as much as the best seat.
    """
    team = believed.likely_team
    worth = {seat: ballot_worth(believed, team, seat) for seat in order if seat != me}
    best = max(worth.values())
    nobody = ballot_worth(believed, team, None)
    if nobody >= best:
        return nobody, None
    return best, next(seat for seat, value in worth.items() if value >= best - tie)


def bot_ballot(view: BotView, seed: int | str, deck_werewolves: int) -> str | None:
    """The bot's ballot: a seat other than its own, or None for nobody.

    ``deck_werewolves`` is public: how many Werewolf cards the table's deck holds.
    """
    index = {seat: position for position, seat in enumerate(view.seats)}
    if len(view.seats) > FORESEEN_VOTE_SEATS:
        order = tuple(index[seat] for seat in table_order(view.seats, seed))
        if view.dealt.team is Team.VILLAGE and _likely_werewolf_team(view, deck_werewolves):
            orders = (order,) * len(view.seats)
            target = foreseen_ballot(_by_position(view), orders, deck_werewolves)
            return None if target is None else view.seats[target]
        return _ballot_alone(view, order, deck_werewolves)
    orders = tuple(
        tuple(index[seat] for seat in seat_order(view.seats, seed, voter)) for voter in view.seats
    )
    if view.dealt.team is Team.VILLAGE:
        target = foreseen_ballot(_by_position(view), orders, deck_werewolves)
        return None if target is None else view.seats[target]
    return _ballot_alone(view, orders[index[view.seat]], deck_werewolves)


def _likely_werewolf_team(view: BotView, deck_werewolves: int) -> bool:
    """Whether a bot dealt a village card now more likely holds a Werewolf or the Minion."""
    believed = bot_beliefs(view, deck_werewolves)
    return believed is not None and believed.likely_team is Team.WEREWOLF


@lru_cache(maxsize=8192)
def _plain_ballot(view: BotView, order: tuple[int, ...], deck_werewolves: int) -> str | None:
    """:func:`_ballot_alone` for the foreseen vote, which asks it again and again with views
    named by position (the same in every game)."""
    return _ballot_alone(view, order, deck_werewolves)


def _ballot_alone(view: BotView, order: tuple[int, ...], deck_werewolves: int) -> str | None:
    """The ballot worth the most as if it alone settled the vote.

    Not kept as such: a view naming a game's seats is asked once per bot and never again, and
    what takes the time, the beliefs, is kept by position (:func:`bot_beliefs`)."""
    index = {seat: position for position, seat in enumerate(view.seats)}
    believed = bot_beliefs(view, deck_werewolves)
    if believed is None:
        return _ballot_without_worlds(view, deck_werewolves, order)
    tie = EXACT_TIE if believed.exact else SAMPLED_TIE
    _, target = best_ballot(believed, index[view.seat], list(order), tie)
    return None if target is None else view.seats[target]


def _ballot_without_worlds(
    view: BotView, deck_werewolves: int, order: tuple[int, ...]
) -> str | None:
    """When what the bot saw cannot come from any deck it can imagine: go by what it saw."""
    learned = view.learned
    if isinstance(learned, SawSeat) and learned.card is Card.WEREWOLF:
        return learned.seat
    if view.dealt in (Card.WEREWOLF, Card.MINION) or (
        isinstance(learned, SawCard) and learned.card in (Card.WEREWOLF, Card.MINION)
    ):
        return None
    if isinstance(learned, SawCenter) and learned.cards.count(Card.WEREWOLF) >= deck_werewolves:
        return None
    cleared = {view.choice.seat} if isinstance(view.choice, Rob) else set()
    suspects = [view.seats[seat] for seat in order if view.seats[seat] != view.seat]
    return next((seat for seat in suspects if seat not in cleared), None)


# --- the vote foreseen at a small table ----------------------------------------------------

FORESEEN_VOTE_SEATS = 4
"""Up to this many seats a bot weighs its ballot with everyone else's, world by world."""
FORESEEN_WORLDS = 240
"""Above :data:`FORESEEN_VOTE_SEATS`, how many of its worlds a bot that foresees the vote
draws, each with one night of the other seats' looks."""


def _by_position(view: BotView) -> BotView:
    """The same view with the seats named by position: what the foreseen vote depends on.

    A seat the view names that is not at the table keeps a name no position has, so that it is
    ignored as :func:`sight_of` ignores it."""
    names = {seat: str(position) for position, seat in enumerate(view.seats)}

    def name(seat: str) -> str:
        return names.get(seat, f"not seated: {seat}")

    choice, learned = view.choice, view.learned
    if isinstance(choice, LookAtSeat):
        choice = LookAtSeat(name(choice.seat))
    elif isinstance(choice, Rob):
        choice = Rob(name(choice.seat))
    elif isinstance(choice, Swap):
        choice = Swap(name(choice.first), name(choice.second))
    if isinstance(learned, SawWerewolves):
        learned = replace(learned, werewolves=tuple(name(w) for w in learned.werewolves))
    elif isinstance(learned, SawSeat):
        learned = replace(learned, seat=name(learned.seat))
    return replace(
        view, seat=name(view.seat), seats=tuple(names.values()), choice=choice, learned=learned
    )


def _nights_of_others(
    view: BotView, deal: Deal, choices: dict[str, NightChoice], rng: random.Random | None = None
) -> Iterator[tuple[float, dict[str, NightChoice]]]:
    """The looks the other seats may take in one world (the moves are the world's own), with
    their chances: a Seer by its plan at a random seat, a lone wolf at a random centre card.

    With ``rng``, one of them drawn from it instead of every one."""
    branches: list[tuple[float, dict[str, NightChoice]]] = [(1.0, choices)]
    lone = deal.dealt_werewolves()
    for seat in view.others:
        card = deal.dealt[seat]
        options: list[NightChoice] = []
        if card is Card.SEER:
            if night_plan(Card.SEER, len(view.seats)) == "center":
                options = [LookAtCenter()]
            else:
                options = [LookAtSeat(other) for other in deal.seats if other != seat]
        elif card is Card.WEREWOLF and lone == (seat,):
            options = [Peek(0), Peek(1)]
        if options and rng is not None:
            branches = [(chance, {**made, seat: rng.choice(options)}) for chance, made in branches]
        elif options:
            branches = [
                (chance / len(options), {**made, seat: option})
                for chance, made in branches
                for option in options
            ]
    yield from branches


@dataclass(frozen=True)
class _ForeseenNights:
    """The nights a bot foreseeing the vote imagines, in the order it weighs them: everything
    but the other seats' ballots, which also depend on their orders (that is, on the seed)."""

    exact: bool
    total_weight: float
    """The worlds' weights summed, which scales the tie."""
    views: tuple[tuple[BotView, ...], ...]
    """Per seat, every view it may have in these nights (none for the bot itself)."""
    nights: tuple[tuple[float, tuple[Card, ...], tuple[int, ...]], ...]
    """Each night's weight, the seats' cards at dawn, and each seat's view as an index into
    ``views`` (-1 for the bot itself)."""
    views_around: frozenset[tuple[int, ...]]
    """Each combination of the seats' views that some night has: far fewer than the nights."""


@lru_cache(maxsize=512)
def _kept_nights(view: BotView, deck_werewolves: int) -> _ForeseenNights | None:
    """:func:`_foreseen_nights` kept, up to :data:`FORESEEN_VOTE_SEATS`: there the same view
    comes back with other seeds (other orders), and the nights, resolved once, serve them all.
    Above, a view's nights weigh a few hundred kilobytes and its situation is seldom met
    again: they are worked out anew each time, in milliseconds."""
    return _foreseen_nights(view, deck_werewolves)


def _foreseen_nights(view: BotView, deck_werewolves: int) -> _ForeseenNights | None:
    """The nights of :func:`foreseen_ballot` for ``view``, None when no world fits it."""
    sight = sight_of(view)
    seen = tuple(card for _, card in sight.known)
    sight = replace(sight, deck=assumed_deck(len(view.seats), deck_werewolves, seen))
    rng = random.Random(repr(sight))
    worlds, exact = possible_worlds(sight, rng)
    if not worlds:
        return None
    looks = None
    if len(view.seats) > FORESEEN_VOTE_SEATS:
        # Too many nights to go through: a sample of worlds, drawn by their weights, each with
        # one draw of the others' looks.
        weights = [world.weight for world in worlds]
        drawn = rng.choices(worlds, weights, k=FORESEEN_WORLDS)
        worlds = [replace(world, weight=1.0) for world in drawn]
        exact, looks = False, rng
    seats = view.seats
    index_of: list[dict[BotView, int]] = [{} for _ in seats]
    nights: list[tuple[float, tuple[Card, ...], tuple[int, ...]]] = []
    for world in worlds:
        deal, moves = _world_night(view, sight, world)
        for chance, choices in _nights_of_others(view, deal, moves, looks):
            night = resolve_night(deal, choices)
            around = tuple(
                -1
                if seat == view.seat
                else index_of[position].setdefault(
                    _seat_view(deal, seat, choices, night), len(index_of[position])
                )
                for position, seat in enumerate(seats)
            )
            nights.append(
                (world.weight * chance, tuple(night.dawn[seat] for seat in seats), around)
            )
    return _ForeseenNights(
        exact=exact,
        total_weight=sum(world.weight for world in worlds),
        views=tuple(tuple(known) for known in index_of),
        nights=tuple(nights),
        views_around=frozenset(seen for _, _, seen in nights),
    )


def foreseen_ballot(
    view: BotView, orders: tuple[tuple[int, ...], ...], deck_werewolves: int
) -> int | None:
    """The ballot worth the most points when every other seat votes as a bot that weighs its
    ballot alone would: world by world, the real tally and the real win. Where that makes no
    difference the bot keeps the ballot it weighs alone, the one the others expect of it.

    ``view`` names the seats by position (:func:`_by_position`), so one answer serves every
    game in the same situation; the answer is a position.
    """
    if len(view.seats) <= FORESEEN_VOTE_SEATS:
        return _kept_foreseen_ballot(view, orders, deck_werewolves)
    return _foresee(view, orders, deck_werewolves, small=False)


@lru_cache(maxsize=8192)
def _kept_foreseen_ballot(
    view: BotView, orders: tuple[tuple[int, ...], ...], deck_werewolves: int
) -> int | None:
    """:func:`foreseen_ballot` kept, up to :data:`FORESEEN_VOTE_SEATS`: above, the other
    seats' orders are the table's, drawn from the game's seed, and a game asks once."""
    return _foresee(view, orders, deck_werewolves, small=True)


def _foresee(
    view: BotView, orders: tuple[tuple[int, ...], ...], deck_werewolves: int, small: bool
) -> int | None:
    """:func:`foreseen_ballot`, keeping what recurs (the nights, the ballots weighed alone,
    the points of a tally) only at a ``small`` table, where it does."""
    alone = _plain_ballot if small else _ballot_alone
    me = int(view.seat)
    order = orders[me]
    plain = alone(view, order, deck_werewolves)
    mine = None if plain is None else int(plain)
    foreseen = (_kept_nights if small else _foreseen_nights)(view, deck_werewolves)
    if foreseen is None:
        return mine
    seats = view.seats
    ballots_of = [
        tuple(alone(seen, orders[position], deck_werewolves) for seen in views)
        for position, views in enumerate(foreseen.views)
    ]
    # Worlds that leave the same cards at dawn and the same ballots around the bot count alike.
    outcomes: defaultdict[tuple[tuple[Card, ...], tuple[int | None, ...]], float] = defaultdict(
        float
    )
    around_of = {
        seen: tuple(
            None if index < 0 else _position(ballots_of[position][index])
            for position, index in enumerate(seen)
        )
        for seen in foreseen.views_around
    }
    for weight, cards, seen in foreseen.nights:
        outcomes[cards, around_of[seen]] += weight
    candidates: list[int | None] = [*(seat for seat in order if seat != me), None]
    worth = dict.fromkeys(candidates, 0.0)
    nobody = len(seats)
    for (cards, others), weight in outcomes.items():
        points = (_kept_ballot_points if small else ballot_points)(cards, others, me)
        for candidate in candidates:
            worth[candidate] += weight * points[nobody if candidate is None else candidate]
    tie = (EXACT_TIE if foreseen.exact else SAMPLED_TIE) * foreseen.total_weight
    best = max(worth.values())
    if worth[mine] >= best - tie:
        return mine
    return next(candidate for candidate in candidates if worth[candidate] >= best - tie)


def _position(seat: str | None) -> int | None:
    return None if seat is None else int(seat)


@lru_cache(maxsize=65536)
def _kept_ballot_points(
    cards: tuple[Card, ...], others: tuple[int | None, ...], me: int
) -> tuple[int, ...]:
    """:func:`ballot_points` kept, up to :data:`FORESEEN_VOTE_SEATS`, where a foreseen vote
    meets the same few again and again; above, it meets each once."""
    return ballot_points(cards, others, me)


def ballot_points(
    cards: tuple[Card, ...], others: tuple[int | None, ...], me: int
) -> tuple[int, ...]:
    """The points seat ``me`` scores for each ballot it may cast, the others' ballots being
    ``others`` (seat positions, None for nobody; its own entry is ignored) and the seats
    holding ``cards`` at dawn: its ballot for seat *i* at index *i*, for nobody at the end.

    The tally and the win as :mod:`slackapp.game.vote` has them (RULES.md), for one seat and
    every ballot at once: a foreseen vote asks this for every world it weighs.
    """
    n = len(cards)
    received = [0] * n
    nobody = 0
    for voter, target in enumerate(others):
        if voter == me:
            continue
        if target is None:
            nobody += 1
        else:
            received[target] += 1
    wolves = {seat for seat, card in enumerate(cards) if card is Card.WEREWOLF}
    mine = cards[me]
    team = TEAM_OF[mine]
    points: list[int] = []
    for ballot in (*range(n), None):
        if ballot == me:
            points.append(0)  # no such ballot
            continue
        votes = received.copy()
        against = nobody
        if ballot is None:
            against += 1
        else:
            votes[ballot] += 1
        top = max(votes)
        dead = () if top == 0 or against >= top else [s for s in range(n) if votes[s] == top]
        if wolves:
            winner = Team.VILLAGE if wolves.intersection(dead) else Team.WEREWOLF
            wins = team is winner
        elif not dead:
            wins = team is Team.VILLAGE
        else:  # no Werewolf at the table: only a Minion wins, if someone else died
            wins = mine is Card.MINION and any(cards[seat] is not Card.MINION for seat in dead)
        points.append(WIN_POINTS * wins + WEREWOLF_BALLOT_POINTS * (ballot in wolves))
    return tuple(points)


def _world_night(view: BotView, sight: Sight, world: World) -> tuple[Deal, dict[str, NightChoice]]:
    """One world as a deal, with the bot's own choice and the world's robbery and swap."""
    seats, n = view.seats, len(view.seats)
    dealt = {seat: world.layout[position] for position, seat in enumerate(seats)}
    deal = Deal(seats, dealt, (world.layout[n], world.layout[n + 1]))
    moves: dict[str, NightChoice] = {}
    if view.choice is not None and _allowed(deal, view.seat, view.choice):
        moves[view.seat] = view.choice
    if world.robbery is not None and world.robbery[0] != sight.me:
        moves[seats[world.robbery[0]]] = Rob(seats[world.robbery[1]])
    troublemaker = deal.seat_dealt(Card.TROUBLEMAKER)
    if world.swap is not None and troublemaker not in (None, view.seat):
        assert troublemaker is not None
        moves[troublemaker] = Swap(seats[world.swap[0]], seats[world.swap[1]])
    return deal, moves


def _allowed(deal: Deal, seat: str, choice: NightChoice) -> bool:
    """Whether the night allows ``choice``: a view may carry one that no night made."""
    try:
        check_choice(deal, seat, choice)
    except IllegalChoice:
        return False
    return True


def _seat_view(deal: Deal, seat: str, choices: dict[str, NightChoice], night: Night) -> BotView:
    """What ``seat`` would know in that world."""
    lone_wolf = deal.dealt_werewolves() == (seat,)
    return BotView(
        seat, deal.seats, deal.dealt[seat], lone_wolf, choices.get(seat), night.seen.get(seat)
    )


# --- the night ---------------------------------------------------------------------------------


def _worth_after(
    sight: Sight, worlds: list[World], my_move: Move | None, looks_at: tuple[int, ...]
) -> float:
    """The expected worth of the bot's best ballot after making ``my_move`` and seeing the
    dealt cards at ``looks_at``, over its worlds."""
    groups: dict[tuple[Card, ...], list[World]] = {}
    for world in worlds:
        groups.setdefault(tuple(world.layout[pos] for pos in looks_at), []).append(world)
    total = worth = 0.0
    for seen, group in groups.items():
        known = {**sight.cards_known, **dict(zip(looks_at, seen, strict=True))}
        after = replace(sight, known=tuple(sorted(known.items())), my_move=my_move)
        summed = stakes(after, group, my_move)
        believed = summed_beliefs(after, summed, len(group), exact=True)
        best, _ = best_ballot(believed, after.me, after.others, EXACT_TIE)
        total += summed.total
        worth += summed.total * best
    return worth / total if total else 0.0


@lru_cache(maxsize=64)
def night_plan(card: Card, seat_count: int) -> str:
    """What kind of move ``card`` makes at a table of ``seat_count``: ``"seat"`` or
    ``"center"`` for the Seer, ``"rob"`` or ``"keep"`` for the Robber.

    Decided by the worth of the ballot each leaves, over the worlds the card cannot rule out
    when it wakes. It depends on nothing but the card and the table size, so it is the same
    at every game and worked out once.
    """
    sight = Sight(me=0, seat_count=seat_count, deck=tuple(deck_for(seat_count)), known=((0, card),))
    worlds, _ = possible_worlds(sight, random.Random(f"plan/{card}/{seat_count}"))
    n = seat_count
    if card is Card.SEER:
        at_seat = _worth_after(sight, worlds, None, (1,))
        return "seat" if at_seat >= _worth_after(sight, worlds, None, (n, n + 1)) else "center"
    robbing = _worth_after(sight, worlds, (0, 1), (1,))
    return "rob" if robbing >= _worth_after(sight, worlds, None, ()) else "keep"


def bot_night_choice(view: BotView, seed: int | str) -> NightChoice | None:
    """The bot's night choice, by the card it was dealt."""
    rng = _rng(seed, view.seat, "night")
    others = view.others
    if view.dealt is Card.WEREWOLF and view.lone_wolf:
        return Peek(rng.randrange(2))
    if view.dealt is Card.TROUBLEMAKER:
        first, second = rng.sample(others, 2)
        return Swap(first, second)
    if view.dealt is Card.SEER:
        target = rng.choice(others)
        plan = night_plan(Card.SEER, len(view.seats))
        return LookAtSeat(target) if plan == "seat" else LookAtCenter()
    if view.dealt is Card.ROBBER:
        target = rng.choice(others)
        return Rob(target) if night_plan(Card.ROBBER, len(view.seats)) == "rob" else None
    return None
