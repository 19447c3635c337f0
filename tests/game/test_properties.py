"""Properties of the engine over random legal deals, night choices and ballots.

The expected outcomes are recomputed here in the plainest way, card by card, without calling
the engine's own functions, so that a mistake in the engine cannot also hide in its check.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random
import typing
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from slackapp.game.bots import BotView, bot_ballot, bot_night_choice
from slackapp.game.cards import REPEATABLE_CARDS, Card, Deal, Team, deck_for
from slackapp.game.night import (
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
from slackapp.game.outcome import play
from slackapp.game.referee import name_problem, referee
from slackapp.game.vote import check_ballot

pytestmark = pytest.mark.long(25)

# Per test rather than a global profile, so other test modules keep their own settings.
ENOUGH = settings(max_examples=100, deadline=None)

UNIQUE_CARDS = [card for card in Card if card not in REPEATABLE_CARDS]
NAMES = ["anna", "bo", "cia", "dan", "eva", "fia", "gus", "hed", "ivo", "jon", "kim", "lo"]


@dataclass
class Game:
    deal: Deal
    choices: dict[str, NightChoice] = field(default_factory=dict)
    ballots: dict[str, str | None] = field(default_factory=dict)

    @property
    def seats(self) -> tuple[str, ...]:
        return self.deal.seats


# --- strategies -----------------------------------------------------------------------------
# Each strategy is built once per situation (functools.cache): Hypothesis checks a strategy the
# first time it draws from it, and building new ones for every example spent most of these
# tests' time checking them.

# Any name the referee takes: not blank, not "nobody" or "center", no control character.
NAME = st.sampled_from(NAMES) | st.text(max_size=4).filter(lambda n: name_problem(n) is None)


@functools.cache
def seat_names(count: int) -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(NAME, min_size=count, max_size=count, unique=True).map(tuple)


@functools.cache
def _cards(cards: tuple[Card, ...], count: int, unique: bool) -> st.SearchStrategy[list[Card]]:
    return st.lists(
        st.sampled_from(cards), min_size=0 if unique else count, max_size=count, unique=unique
    )


@functools.cache
@st.composite
def decks(draw: st.DrawFn, seat_count: int) -> list[Card]:
    """The standard deck for the table, or any custom deck REFEREE.md accepts."""
    if draw(st.booleans()):
        return deck_for(seat_count)
    size = seat_count + 2
    unique = draw(_cards(tuple(UNIQUE_CARDS), size, unique=True))
    rest = draw(_cards(tuple(sorted(REPEATABLE_CARDS)), size - len(unique), unique=False))
    return unique + rest


@functools.cache
def one_of_the(seats: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from(seats)


@functools.lru_cache(maxsize=4096)
def orders(items: tuple[Any, ...]) -> st.SearchStrategy[list[Any]]:
    return st.permutations(items)


@st.composite
def deals(draw: st.DrawFn) -> Deal:
    seat_count = draw(st.integers(3, 10))
    seats = draw(seat_names(seat_count))
    cards = draw(orders(tuple(draw(decks(seat_count)))))
    return Deal(
        seats=seats,
        dealt=dict(zip(seats, cards[:seat_count], strict=True)),
        center=(cards[-2], cards[-1]),
    )


def legal_choices(deal: Deal, seat: str) -> st.SearchStrategy[NightChoice | None]:
    """Every choice ``seat`` may make with its dealt card, or None for skipping."""
    others = tuple(other for other in deal.seats if other != seat)
    lone = [s for s in deal.seats if deal.dealt[s] is Card.WEREWOLF] == [seat]
    return _legal_choices(deal.dealt[seat], lone, others)


@functools.cache
def _legal_choices(
    card: Card, lone: bool, others: tuple[str, ...]
) -> st.SearchStrategy[NightChoice | None]:
    made: st.SearchStrategy[NightChoice]
    if card is Card.WEREWOLF and lone:
        made = st.builds(Peek, st.sampled_from([0, 1]))
    elif card is Card.SEER:
        made = st.just(LookAtCenter()) | st.builds(LookAtSeat, st.sampled_from(others))
    elif card is Card.ROBBER:
        made = st.builds(Rob, st.sampled_from(others))
    elif card is Card.TROUBLEMAKER:
        made = st.lists(st.sampled_from(others), min_size=2, max_size=2, unique=True).map(
            lambda pair: Swap(pair[0], pair[1])
        )
    else:
        return st.none()
    return st.none() | made


@st.composite
def nights(draw: st.DrawFn, deal: Deal, skip: str | None = None) -> dict[str, NightChoice]:
    choices: dict[str, NightChoice] = {}
    for seat in deal.seats:
        if seat != skip and (choice := draw(legal_choices(deal, seat))) is not None:
            choices[seat] = choice
    return choices


@functools.cache
def ballot_for_one_of(others: tuple[str, ...]) -> st.SearchStrategy[tuple[str | None] | None]:
    """Absent (None), for nobody (just None in a tuple), or for another seat."""
    return st.none() | st.tuples(st.none() | st.sampled_from(others))


@functools.cache
@st.composite
def ballot_boxes(draw: st.DrawFn, seats: tuple[str, ...]) -> dict[str, str | None]:
    ballots: dict[str, str | None] = {}
    for voter in seats:
        ballot = draw(ballot_for_one_of(tuple(seat for seat in seats if seat != voter)))
        if ballot is not None:
            ballots[voter] = ballot[0]
    return ballots


@st.composite
def games(draw: st.DrawFn) -> Game:
    deal = draw(deals())
    return Game(deal, draw(nights(deal)), draw(ballot_boxes(deal.seats)))


# --- the plain model ------------------------------------------------------------------------


def plain_dawn(game: Game) -> dict[str, str]:
    """Only the Robber and then the Troublemaker move cards."""
    cards = {seat: str(card) for seat, card in game.deal.dealt.items()}
    for mover in ("Robber", "Troublemaker"):
        for seat, choice in game.choices.items():
            if game.deal.dealt[seat] != mover:
                continue
            if isinstance(choice, Rob):
                cards[seat], cards[choice.seat] = cards[choice.seat], cards[seat]
            if isinstance(choice, Swap):
                cards[choice.first], cards[choice.second] = (
                    cards[choice.second],
                    cards[choice.first],
                )
    return cards


def plain_seen(game: Game) -> dict[str, dict[str, Any]]:
    """What each seat learns, read straight off the dealt cards (and the dawn for the Insomniac)."""
    dealt, center = game.deal.dealt, game.deal.center
    wolves = [seat for seat in game.seats if dealt[seat] == "Werewolf"]
    dawn = plain_dawn(game)
    seen: dict[str, dict[str, Any]] = {}
    for seat in game.seats:
        choice = game.choices.get(seat)
        if dealt[seat] == "Werewolf":
            seen[seat] = {"werewolves": [wolf for wolf in wolves if wolf != seat]}
            if isinstance(choice, Peek):
                seen[seat]["center"] = {"index": choice.index, "card": center[choice.index]}
        elif dealt[seat] == "Minion":
            seen[seat] = {"werewolves": wolves}
        elif isinstance(choice, LookAtSeat):
            seen[seat] = {"seat": choice.seat, "card": dealt[choice.seat]}
        elif isinstance(choice, LookAtCenter):
            seen[seat] = {"center": list(center)}
        elif isinstance(choice, Rob):
            seen[seat] = {"card": dealt[choice.seat]}
        elif dealt[seat] == "Insomniac":
            seen[seat] = {"card": dawn[seat]}
    return seen


def plain_tally(game: Game) -> tuple[dict[str, int], list[str]]:
    counts: dict[str, int] = {}
    for target in game.ballots.values():
        key = "nobody" if target is None else target
        counts[key] = counts.get(key, 0) + 1
    top = max([n for seat, n in counts.items() if seat != "nobody"], default=0)
    if top == 0 or counts.get("nobody", 0) >= top:
        return counts, []
    return counts, [seat for seat in game.seats if counts.get(seat) == top]


def plain_result(game: Game) -> tuple[str | None, list[str], dict[str, int]]:
    dawn = plain_dawn(game)
    _, dead = plain_tally(game)
    village = [s for s in game.seats if dawn[s] not in ("Werewolf", "Minion")]
    werewolf_team = [s for s in game.seats if dawn[s] in ("Werewolf", "Minion")]
    minions = [s for s in game.seats if dawn[s] == "Minion"]
    wolves = [s for s in game.seats if dawn[s] == "Werewolf"]
    team: str | None
    if wolves and any(s in wolves for s in dead):
        team, winners = "village", village
    elif wolves:
        team, winners = "werewolf", werewolf_team
    elif not dead:
        team, winners = "village", village
    elif minions and any(s not in minions for s in dead):
        team, winners = "werewolf", minions
    else:
        team, winners = None, []
    points = {seat: 2 if seat in winners else 0 for seat in game.seats}
    for voter, target in game.ballots.items():
        if target is not None and dawn[target] == "Werewolf":
            points[voter] += 1
    return team, winners, points


def referee_input(game: Game) -> str:
    def choice(made: NightChoice) -> dict[str, Any]:
        if isinstance(made, Peek):
            return {"peek": made.index}
        if isinstance(made, LookAtSeat):
            return {"look": made.seat}
        if isinstance(made, LookAtCenter):
            return {"look": "center"}
        if isinstance(made, Rob):
            return {"rob": made.seat}
        return {"swap": [made.first, made.second]}

    return json.dumps(
        {
            "seats": list(game.seats),
            "dealt": {seat: str(card) for seat, card in game.deal.dealt.items()},
            "center": [str(card) for card in game.deal.center],
            "night": {seat: choice(made) for seat, made in game.choices.items()},
            "ballots": game.ballots,
        }
    )


# --- the night ------------------------------------------------------------------------------


@ENOUGH
@given(games())
def test_dawn_cards_are_a_permutation_of_the_dealt_cards(game: Game) -> None:
    night = resolve_night(game.deal, game.choices)
    assert list(night.dawn) == list(game.seats)
    assert Counter(night.dawn.values()) == Counter(game.deal.dealt.values())


@ENOUGH
@given(games())
def test_dawn_is_the_robber_then_the_troublemaker_moving_cards(game: Game) -> None:
    assert resolve_night(game.deal, game.choices).dawn == plain_dawn(game)


@ENOUGH
@given(games())
def test_the_nights_moves_replayed_on_the_deal_give_the_dawn(game: Game) -> None:
    night = resolve_night(game.deal, game.choices)
    cards = {seat: str(card) for seat, card in game.deal.dealt.items()}
    movers = [seat for seat, choice in game.choices.items() if isinstance(choice, Rob | Swap)]
    assert sorted(move.by for move in night.moves) == sorted(movers)
    for move in night.moves:
        cards[move.first], cards[move.second] = cards[move.second], cards[move.first]
        assert (cards[move.first], cards[move.second]) == (move.first_card, move.second_card)
        assert move.changes_sides == (move.first_card.team != move.second_card.team)
    assert cards == plain_dawn(game)


@ENOUGH
@given(games())
def test_the_centre_never_changes(game: Game) -> None:
    assert resolve_night(game.deal, game.choices).center == game.deal.center


@ENOUGH
@given(games())
def test_knowledge_is_the_dealt_cards_except_the_insomniacs_dawn_card(game: Game) -> None:
    verdict = referee(referee_input(game))
    assert verdict["seen"] == plain_seen(game)
    # The same through the engine's own types, on the points the rules single out.
    night = resolve_night(game.deal, game.choices)
    for seat, knowledge in night.seen.items():
        if isinstance(knowledge, SawSeat):
            assert knowledge.card is game.deal.dealt[knowledge.seat]
        if isinstance(knowledge, SawCenter):
            assert knowledge.cards == game.deal.center
        if game.deal.dealt[seat] is Card.INSOMNIAC:
            assert knowledge == SawCard(night.dawn[seat])


# --- the vote and the result ----------------------------------------------------------------


@ENOUGH
@given(games())
def test_deaths_follow_the_tally_rule(game: Game) -> None:
    counts, dead = plain_tally(game)
    outcome = play(game.deal, game.choices, game.ballots)
    assert outcome.tally.as_counts() == counts
    assert list(outcome.tally.dead) == dead


@ENOUGH
@given(games())
def test_winners_and_points_follow_the_rules(game: Game) -> None:
    team, winners, points = plain_result(game)
    result = play(game.deal, game.choices, game.ballots).result
    assert (None if result.winning_team is None else str(result.winning_team)) == team
    assert list(result.winners) == winners
    assert result.points == points


@ENOUGH
@given(games())
def test_referee_agrees_with_the_plain_model_on_everything(game: Game) -> None:
    counts, dead = plain_tally(game)
    team, winners, points = plain_result(game)
    assert referee(referee_input(game)) == {
        "dawn": plain_dawn(game),
        "center": [str(card) for card in game.deal.center],
        "seen": plain_seen(game),
        "tally": counts,
        "dead": dead,
        "winning_team": team,
        "winners": winners,
        "points": points,
    }


@ENOUGH
@given(games())
def test_resolving_twice_gives_the_same_result(game: Game) -> None:
    assert play(game.deal, game.choices, game.ballots) == play(
        game.deal, game.choices, game.ballots
    )
    text = referee_input(game)
    assert referee(text) == referee(text)


# --- bots -----------------------------------------------------------------------------------


def is_lone_wolf(deal: Deal, seat: str) -> bool:
    return [s for s in deal.seats if deal.dealt[s] is Card.WEREWOLF] == [seat]


def waking_view(deal: Deal, seat: str) -> BotView:
    """What a bot knows when it is asked for its night choice."""
    return BotView(seat, deal.seats, deal.dealt[seat], is_lone_wolf(deal, seat))


def day_view(deal: Deal, night: Night, seat: str, choice: NightChoice | None) -> BotView:
    """What a bot knows when it votes: the waking view plus its choice and what it learned."""
    return dataclasses.replace(waking_view(deal, seat), choice=choice, learned=night.seen.get(seat))


def deck_werewolves(deal: Deal) -> int:
    return [*deal.dealt.values(), *deal.center].count(Card.WEREWOLF)


@dataclass
class BotGame:
    """A game in which every seat is a bot, as the app would play it."""

    deal: Deal
    seed: int | str
    choices: dict[str, NightChoice]
    night: Night
    views: dict[str, BotView]
    ballots: dict[str, str | None]


def play_bots(deal: Deal, seed: int | str) -> BotGame:
    choices: dict[str, NightChoice] = {}
    for seat in deal.seats:
        choice = bot_night_choice(waking_view(deal, seat), seed)
        if choice is not None:
            choices[seat] = choice
    night = resolve_night(deal, choices)
    views = {seat: day_view(deal, night, seat, choices.get(seat)) for seat in deal.seats}
    wolves = deck_werewolves(deal)
    ballots = {seat: bot_ballot(views[seat], seed, wolves) for seat in deal.seats}
    return BotGame(deal, seed, choices, night, views, ballots)


seeds = st.integers(0, 2**32) | st.text(max_size=8)


@ENOUGH
@given(deals(), seeds)
def test_bot_night_choice_is_always_legal_and_made_when_the_card_acts(
    deal: Deal, seed: int | str
) -> None:
    for seat in deal.seats:
        choice = bot_night_choice(waking_view(deal, seat), seed)
        card = deal.dealt[seat]
        acts = card in (Card.SEER, Card.ROBBER, Card.TROUBLEMAKER) or is_lone_wolf(deal, seat)
        assert (choice is not None) == acts, (seat, card, choice)
        if choice is not None:
            check_choice(deal, seat, choice)


@ENOUGH
@given(deals(), seeds)
def test_bot_ballot_names_another_seat_or_nobody(deal: Deal, seed: int | str) -> None:
    game = play_bots(deal, seed)
    for voter, target in game.ballots.items():
        assert target is None or (target in deal.seats and target != voter)
        check_ballot(deal.seats, voter, target)
    play(deal, game.choices, game.ballots)  # and the whole bot game resolves


@ENOUGH
@given(deals(), seeds)
def test_bots_are_deterministic_for_a_seed_whatever_the_global_random_state(
    deal: Deal, seed: int | str
) -> None:
    random.seed(1)
    first = play_bots(deal, seed)
    random.seed(2)
    second = play_bots(deal, seed)
    assert (first.choices, first.ballots) == (second.choices, second.ballots)


# Custom decks where every other seat is a wolf the bot knows: it can only shield them by
# naming nobody.
ALL_WOLVES = Deal(
    ("anna", "bo", "cia"),
    {"anna": Card.WEREWOLF, "bo": Card.WEREWOLF, "cia": Card.WEREWOLF},
    (Card.VILLAGER, Card.VILLAGER),
)
MINION_AMONG_WOLVES = Deal(
    ("anna", "bo", "cia"),
    {"anna": Card.MINION, "bo": Card.WEREWOLF, "cia": Card.WEREWOLF},
    (Card.SEER, Card.VILLAGER),
)


def believes_werewolf(view: BotView) -> bool:
    """Dealt a Werewolf and shown no other card, or shown a Werewolf as its own card."""
    if isinstance(view.learned, SawCard):
        return view.learned.card is Card.WEREWOLF
    return view.dealt is Card.WEREWOLF


def known_wolves(view: BotView) -> tuple[str, ...]:
    return view.learned.werewolves if isinstance(view.learned, SawWerewolves) else ()


@ENOUGH
@given(deals(), seeds)
@example(ALL_WOLVES, 0)
def test_a_bot_that_believes_it_is_a_werewolf_never_votes_for_a_wolf_it_knows(
    deal: Deal, seed: int | str
) -> None:
    game = play_bots(deal, seed)
    for seat, view in game.views.items():
        if believes_werewolf(view):
            assert game.ballots[seat] not in known_wolves(view)


@ENOUGH
@given(deals(), seeds)
@example(MINION_AMONG_WOLVES, 0)
def test_a_minion_bot_never_votes_for_a_wolf_it_saw(deal: Deal, seed: int | str) -> None:
    game = play_bots(deal, seed)
    for seat, view in game.views.items():
        if view.dealt is Card.MINION:
            assert isinstance(view.learned, SawWerewolves)
            assert game.ballots[seat] not in view.learned.werewolves


# A custom deck in which every card the Seer has not seen is a Werewolf: every other seat is
# as surely a wolf as the one it saw.
WOLVES_EVERYWHERE = Deal(
    ("anna", "bo", "cia", "dan"),
    {"anna": Card.SEER, "bo": Card.WEREWOLF, "cia": Card.WEREWOLF, "dan": Card.WEREWOLF},
    (Card.WEREWOLF, Card.WEREWOLF),
)


@ENOUGH
@given(deals(), seeds)
@example(WOLVES_EVERYWHERE, 0)
def test_a_seer_bot_that_saw_a_werewolf_votes_for_that_seat(deal: Deal, seed: int | str) -> None:
    game = play_bots(deal, seed)
    deck = Counter([*deal.dealt.values(), *deal.center])
    for seat, view in game.views.items():
        if isinstance(view.learned, SawSeat) and view.learned.card is Card.WEREWOLF:
            unseen = deck - Counter([view.dealt, view.learned.card])
            if set(unseen) == {Card.WEREWOLF}:  # any other seat is a wolf just as surely
                assert game.ballots[seat] in set(deal.seats) - {seat}
            else:
                assert game.ballots[seat] == view.learned.seat


# Three seats' standard deck with both Werewolves in the centre, where the Seer bot looks:
# random deals reach a Seer that saw every wolf too seldom to count on one.
WOLVES_IN_THE_CENTRE = Deal(
    ("anna", "bo", "cia"),
    {"anna": Card.SEER, "bo": Card.ROBBER, "cia": Card.TROUBLEMAKER},
    (Card.WEREWOLF, Card.WEREWOLF),
)


@ENOUGH
@given(deals(), seeds)
@example(WOLVES_IN_THE_CENTRE, 0)
def test_a_seer_bot_that_saw_every_werewolf_in_the_centre_votes_nobody(
    deal: Deal, seed: int | str
) -> None:
    game = play_bots(deal, seed)
    for seat, view in game.views.items():
        saw_all_wolves = isinstance(view.learned, SawCenter) and (
            view.learned.cards.count(Card.WEREWOLF) == deck_werewolves(deal)
        )
        if deal == WOLVES_IN_THE_CENTRE and view.dealt is Card.SEER:
            assert saw_all_wolves, f"the example's Seer looks at the centre: {view}"
        if saw_all_wolves:
            assert game.ballots[seat] is None


@ENOUGH
@given(deals(), seeds)
def test_a_robber_bot_that_took_a_village_card_never_votes_for_its_victim(
    deal: Deal, seed: int | str
) -> None:
    # The victim now holds the Robber card, so the Robber knows it is innocent.
    game = play_bots(deal, seed)
    for seat, view in game.views.items():
        took = view.learned.card if isinstance(view.learned, SawCard) else None
        if isinstance(view.choice, Rob) and took is not None and took.team is Team.VILLAGE:
            assert game.ballots[seat] != view.choice.seat


def test_bots_with_no_information_at_one_table_name_the_same_seat() -> None:
    seats = ("anna", "bo", "cia", "dan", "eva")
    for seed in range(60):
        ballots = {
            seat: bot_ballot(BotView(seat, seats, Card.VILLAGER), seed, deck_werewolves=2)
            for seat in seats
        }
        assert all(ballots[seat] not in (None, seat) for seat in seats)
        # One seat, except from that seat itself, which names another.
        assert len(set(ballots.values())) == 2, ballots


def test_bot_view_holds_no_other_seats_cards_or_choices() -> None:
    # Anything that could carry the table's cards (a mapping, a Deal, a Night) would show here.
    hints = typing.get_type_hints(BotView)
    assert list(hints) == ["seat", "seats", "dealt", "lone_wolf", "choice", "learned"]
    assert hints["seat"] is str
    assert hints["seats"] == tuple[str, ...]
    assert hints["dealt"] is Card
    assert hints["lone_wolf"] is bool
    assert hints["choice"] == NightChoice | None
    assert hints["learned"] == Knowledge | None


def test_bot_decisions_take_nothing_but_the_view_a_seed_and_the_public_deck() -> None:
    assert list(typing.get_type_hints(bot_night_choice)) == ["view", "seed", "return"]
    assert list(typing.get_type_hints(bot_ballot)) == [
        "view",
        "seed",
        "deck_werewolves",
        "return",
    ]


Position = tuple[str, str | int]
"""("seat", name) or ("center", 0|1)."""


def positions_the_bot_saw(view: BotView) -> set[Position]:
    saw: set[Position] = {("seat", view.seat)}
    match view.choice:
        case Peek(index):
            saw.add(("center", index))
        case LookAtSeat(target) | Rob(target):
            saw.add(("seat", target))
        case LookAtCenter():
            saw |= {("center", 0), ("center", 1)}
    return saw


def dawn_source(deal: Deal, choices: dict[str, NightChoice], seat: str) -> str:
    """The seat whose dealt card ends up at ``seat`` at dawn."""
    came_from = {s: s for s in deal.seats}
    for mover in (Card.ROBBER, Card.TROUBLEMAKER):
        for chooser, choice in choices.items():
            if deal.dealt[chooser] is not mover:
                continue
            match choice:
                case Rob(target):
                    came_from[chooser], came_from[target] = came_from[target], came_from[chooser]
                case Swap(a, b):
                    came_from[a], came_from[b] = came_from[b], came_from[a]
    return came_from[seat]


@dataclass
class TwinDeals:
    """Two games that look the same to the bot at ``seat`` and differ where it cannot see."""

    seat: str
    seed: int | str
    first: Deal
    first_choices: dict[str, NightChoice]
    second: Deal
    second_choices: dict[str, NightChoice]


@st.composite
def twin_deals(draw: st.DrawFn) -> TwinDeals:
    first = draw(deals())
    seat = draw(one_of_the(first.seats))
    seed = draw(seeds)
    bot_choice = bot_night_choice(waking_view(first, seat), seed)
    first_choices = draw(nights(first, skip=seat))
    if bot_choice is not None:
        first_choices[seat] = bot_choice
    view = day_view(first, resolve_night(first, first_choices), seat, bot_choice)

    # Fixed: what the bot saw; every Werewolf (the wolves and the Minion know where they are,
    # and moving one would change who is a lone wolf); for the Insomniac also every seat that
    # chose (its choices are replayed) and the card that travels to the Insomniac by dawn.
    fixed = positions_the_bot_saw(view)
    cards: dict[Position, Card] = {("seat", s): c for s, c in first.dealt.items()}
    cards |= {("center", 0): first.center[0], ("center", 1): first.center[1]}
    fixed |= {pos for pos, card in cards.items() if card is Card.WEREWOLF}
    if view.dealt is Card.INSOMNIAC:
        fixed |= {("seat", chooser) for chooser in first_choices}
        fixed.add(("seat", dawn_source(first, first_choices, seat)))
    free = [pos for pos in cards if pos not in fixed]
    moved = dict(zip(free, draw(orders(tuple(cards[pos] for pos in free))), strict=True))
    cards |= moved
    second = Deal(
        seats=first.seats,
        dealt={s: cards[("seat", s)] for s in first.seats},
        center=(cards[("center", 0)], cards[("center", 1)]),
    )
    if view.dealt is Card.INSOMNIAC:
        second_choices = dict(first_choices)
    else:
        # Everyone else may also choose differently: the bot cannot see that either.
        second_choices = draw(nights(second, skip=seat))
        if bot_choice is not None:
            second_choices[seat] = bot_choice
    return TwinDeals(seat, seed, first, first_choices, second, second_choices)


@ENOUGH
@given(twin_deals())
def test_a_bot_never_uses_knowledge_it_cannot_have(twins: TwinDeals) -> None:
    seat, seed = twins.seat, twins.seed
    choice = bot_night_choice(waking_view(twins.first, seat), seed)
    assert bot_night_choice(waking_view(twins.second, seat), seed) == choice

    first_night = resolve_night(twins.first, twins.first_choices)
    second_night = resolve_night(twins.second, twins.second_choices)
    first_view = day_view(twins.first, first_night, seat, choice)
    second_view = day_view(twins.second, second_night, seat, choice)
    # The engine shows the bot the same things in both games...
    assert first_view == second_view
    # ...so it must vote the same way, however differently the rest of the table lies.
    wolves = deck_werewolves(twins.first)
    assert wolves == deck_werewolves(twins.second)
    assert bot_ballot(first_view, seed, wolves) == bot_ballot(second_view, seed, wolves)
