"""How the bots reason and play: legal moves, replays, the information barrier, and the
behaviours RULES.md's scoring asks of a player who knows what the bot knows.

Views are built as the app builds them: from the deal and the resolved night, one seat at a
time. The expected behaviours are written out by hand per situation.
"""

from __future__ import annotations

import dataclasses
import inspect
import random
from collections import Counter

import pytest

from slackapp.game import bots, vote, worlds
from slackapp.game.bots import (
    BotView,
    assumed_deck,
    bot_ballot,
    bot_beliefs,
    bot_night_choice,
    night_plan,
    seat_order,
    sight_of,
    table_order,
)
from slackapp.game.cards import Card, Deal, Team, deal, deck_for
from slackapp.game.night import (
    LookAtCenter,
    LookAtSeat,
    Night,
    NightChoice,
    Peek,
    Rob,
    SawCard,
    SawSeat,
    SawWerewolves,
    Swap,
    check_choice,
    resolve_night,
)
from slackapp.game.vote import check_ballot

pytestmark = pytest.mark.long(6)

W, M, S, R, T, INS, V = (
    Card.WEREWOLF,
    Card.MINION,
    Card.SEER,
    Card.ROBBER,
    Card.TROUBLEMAKER,
    Card.INSOMNIAC,
    Card.VILLAGER,
)
NAMES = ("anna", "bo", "cia", "dan", "eva", "fia", "gus", "hed", "ivo", "jon")
FIVE = NAMES[:5]
SIX = NAMES[:6]


def night_view(game: Deal, seat: str) -> BotView:
    return BotView(seat, game.seats, game.dealt[seat], game.dealt_werewolves() == (seat,))


def bot_night(game: Deal, seed: int | str) -> tuple[dict[str, NightChoice], Night]:
    choices: dict[str, NightChoice] = {}
    for seat in game.seats:
        choice = bot_night_choice(night_view(game, seat), seed)
        if choice is not None:
            choices[seat] = choice
    return choices, resolve_night(game, choices)


def day_view(game: Deal, choices: dict[str, NightChoice], night: Night, seat: str) -> BotView:
    return dataclasses.replace(
        night_view(game, seat), choice=choices.get(seat), learned=night.seen.get(seat)
    )


def view_after(game: Deal, seat: str, choices: dict[str, NightChoice]) -> BotView:
    """The view of ``seat`` once the night of ``choices`` is resolved."""
    night = resolve_night(game, choices)
    return day_view(game, choices, night, seat)


def table(seats: tuple[str, ...], cards: list[Card], center: tuple[Card, Card]) -> Deal:
    assert Counter([*cards, *center]) == Counter(deck_for(len(seats)))
    return Deal(seats, dict(zip(seats, cards, strict=True)), center)


# --- every move legal, every game replayable -----------------------------------------------


@pytest.mark.parametrize("size", range(3, 11))
def test_every_bot_move_and_ballot_is_legal_over_many_deals(size: int) -> None:
    # Fifty seeded deals of each size, through the app's own bot_night: test_properties checks
    # the same two rules (a legal choice exactly when the card acts, a legal ballot) over
    # Hypothesis' deals of every size and deck too.
    seats = NAMES[:size]
    for number in range(50):
        seed = f"legal/{size}/{number}"
        game = deal(seats, seed)
        choices, night = bot_night(game, seed)
        for seat, choice in choices.items():
            check_choice(game, seat, choice)
        for seat in seats:
            card = game.dealt[seat]
            acts = card in (S, R, T) or game.dealt_werewolves() == (seat,)
            assert (seat in choices) == acts, (seat, card)
            ballot = bot_ballot(day_view(game, choices, night, seat), seed, 2)
            check_ballot(seats, seat, ballot)


def test_a_game_replays_exactly_from_its_seed_and_another_seed_plays_otherwise() -> None:
    def played(seed: str) -> tuple[dict[str, NightChoice], dict[str, str | None]]:
        game = deal(NAMES, "one deal")
        choices, night = bot_night(game, seed)
        ballots = {
            seat: bot_ballot(day_view(game, choices, night, seat), seed, 2) for seat in NAMES
        }
        return choices, ballots

    assert played("first") == played("first")
    assert any(played("first") != played(f"other {n}") for n in range(5))


def test_the_table_order_that_breaks_ties_comes_from_the_seed_alone() -> None:
    assert table_order(FIVE, 7) == table_order(FIVE, 7)
    assert sorted(table_order(FIVE, 7)) == sorted(FIVE)
    assert len({tuple(table_order(FIVE, seed)) for seed in range(30)}) > 10


# --- the information barrier ---------------------------------------------------------------


def test_no_bot_decision_is_handed_the_deal_or_the_night() -> None:
    # Everything a decision may read is in its parameters; none of them can carry the deal.
    for decide in (bot_night_choice, bot_ballot, bot_beliefs):
        for parameter in inspect.signature(decide).parameters.values():
            assert parameter.annotation in ("BotView", "int | str", "int"), parameter


def test_two_deals_that_agree_on_all_a_bot_knows_give_the_same_decisions() -> None:
    # The Seer (anna) looks at bo; what lies anywhere else differs between the two deals,
    # and so do the others' night moves.
    first = table(SIX, [S, W, V, R, T, INS], (W, M))
    second = table(SIX, [S, W, M, INS, V, T], (R, W))
    seed = "barrier"
    choice = bot_night_choice(night_view(first, "anna"), seed)
    assert (
        choice
        == bot_night_choice(night_view(second, "anna"), seed)
        == LookAtSeat(choice.seat if isinstance(choice, LookAtSeat) else "bo")
    )
    look = {"anna": LookAtSeat("bo")}
    seen_first = view_after(first, "anna", {**look, "dan": Rob("eva")})
    seen_second = view_after(second, "anna", {**look, "fia": Swap("cia", "eva")})
    assert seen_first == seen_second
    assert bot_ballot(seen_first, seed, 2) == bot_ballot(seen_second, seed, 2)
    assert bot_beliefs(seen_first, 2) == bot_beliefs(seen_second, 2)


def test_beliefs_do_not_depend_on_which_seat_is_called_what() -> None:
    game = table(FIVE, [V, W, S, R, T], (W, INS))
    renamed = Deal(
        ("eve", "ann", "cid", "dag", "bob"),
        {"eve": V, "ann": W, "cid": S, "dag": R, "bob": T},
        (W, INS),
    )
    one = bot_beliefs(night_view(game, "anna"), 2)
    other = bot_beliefs(night_view(renamed, "eve"), 2)
    assert one == other


def kept_by_bots() -> int:
    """Entries in every ``functools.lru_cache`` of the bots' modules."""
    cached = [f for m in (bots, worlds) for f in vars(m).values() if hasattr(f, "cache_info")]
    return sum(f.cache_info().currsize for f in cached)


def test_what_the_bots_keep_stops_growing_when_new_people_play_the_same_games() -> None:
    # A running app meets new people at every table: nothing the bots keep is named by them,
    # so the same situations under other names add nothing (memory levels off).
    def play(people: tuple[str, ...]) -> list[str | None]:
        """The bots' ballots, at a table where the people's cards make no move."""
        seated_bots = ("Astrid", "Bosse")
        seats = (*people, *seated_bots)
        game = Deal(seats, dict(zip(seats, [V, INS, W, W, S], strict=True)), (R, T))
        choices, night = bot_night(game, "same seed")
        return [bot_ballot(day_view(game, choices, night, b), "same seed", 2) for b in seated_bots]

    first = play(("U1A", "U1B", "U1C"))
    kept = kept_by_bots()
    for number in range(2, 30):
        people = tuple(f"U{number}{seat}" for seat in "ABC")
        renamed = dict(zip(("U1A", "U1B", "U1C"), people, strict=True))
        assert play(people) == [renamed.get(b, b) if b else None for b in first]
    assert kept_by_bots() == kept


# --- what the bots believe -----------------------------------------------------------------


def test_a_villager_believes_each_other_seat_equally_likely_to_hold_a_werewolf() -> None:
    believed = bot_beliefs(BotView("anna", FIVE, V), 2)
    assert believed is not None
    others = believed.werewolf_at_dawn[1:]
    assert len(set(others)) == 1
    assert 0.2 < others[0] < 0.35  # two Werewolves among six unseen cards, then moved
    assert believed.team[Team.VILLAGE] < 1  # a Robber or Troublemaker may have moved its card


def test_beliefs_are_exact_at_small_tables_and_match_sampling_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    view = BotView("anna", NAMES[:4], V)
    exact = bot_beliefs(view, 2)
    assert exact is not None and exact.exact
    monkeypatch.setattr(worlds, "EXACT_WORLDS", 0)
    worlds._believe_canonical.cache_clear()
    try:
        sampled = bot_beliefs(view, 2)
    finally:
        worlds._believe_canonical.cache_clear()
    assert sampled is not None and not sampled.exact
    for expected, estimate in zip(exact.werewolf_at_dawn, sampled.werewolf_at_dawn, strict=True):
        assert estimate == pytest.approx(expected, abs=0.04)
    assert sampled.team[Team.VILLAGE] == pytest.approx(exact.team[Team.VILLAGE], abs=0.04)


def test_a_card_that_moved_cards_itself_believes_exactly_at_five_seats() -> None:
    # Only the Robber's victim is left to guess: few enough worlds to go through them all,
    # and no sampling noise to make the seats it swapped look other than the rest.
    believed = bot_beliefs(BotView("anna", FIVE, T, choice=Swap("bo", "cia")), 2)
    assert believed is not None and believed.exact
    assert believed.werewolf_at_dawn[1:] == pytest.approx([1 / 3] * 4)
    robbed = BotView("anna", FIVE, R, choice=Rob("bo"), learned=SawCard(V))
    believed = bot_beliefs(robbed, 2)
    assert believed is not None and believed.exact


def test_beliefs_match_how_often_it_is_so_over_many_bot_games() -> None:
    # Five seats, every seat a bot: the chance each bot gives a seat of holding a Werewolf at
    # dawn, summed, against how often it does (and likewise for its own team).
    said: dict[str, float] = {"wolf": 0.0, "village": 0.0}
    was: dict[str, float] = {"wolf": 0.0, "village": 0.0}
    for number in range(600):
        seed = f"calibration/{number}"
        game = deal(FIVE, seed)
        choices, night = bot_night(game, seed)
        for position, seat in enumerate(FIVE):
            believed = bot_beliefs(day_view(game, choices, night, seat), 2)
            assert believed is not None
            for other_position, other in enumerate(FIVE):
                if other_position != position:
                    said["wolf"] += believed.werewolf_at_dawn[other_position]
                    was["wolf"] += night.dawn[other] is W
            said["village"] += believed.team[Team.VILLAGE]
            was["village"] += night.dawn[seat].team is Team.VILLAGE
    for key in ("wolf", "village"):
        assert said[key] == pytest.approx(was[key], rel=0.05), key


def test_a_seer_who_saw_both_werewolves_in_the_centre_knows_no_seat_holds_one() -> None:
    game = table(FIVE, [S, V, R, T, INS], (W, W))
    view = view_after(game, "anna", {"anna": LookAtCenter()})
    believed = bot_beliefs(view, 2)
    assert believed is not None and believed.no_werewolf_at_table == 1


def test_assumed_deck_is_the_tables_deck_and_makes_room_for_a_custom_one() -> None:
    for size in range(3, 11):
        assert Counter(assumed_deck(size, 2, (S, W))) == Counter(deck_for(size))
    custom = assumed_deck(3, 3, (M, W))
    assert Counter(custom)[W] == 3 and M in custom and len(custom) == 5


def test_a_view_that_no_deck_allows_still_gets_a_legal_ballot() -> None:
    # Three Werewolves dealt at three seats (a custom deck the referee accepts).
    view = BotView("anna", ("anna", "bo", "cia"), W, learned=SawWerewolves(("bo", "cia")))
    assert bot_ballot(view, 1, deck_werewolves=3) is None
    assert bot_beliefs(BotView("anna", FIVE, M, learned=SawWerewolves(FIVE[1:])), 2) is None


# --- ballots -------------------------------------------------------------------------------


def named_suspects(view: BotView, seeds: int) -> list[str | None]:
    """The bot's ballots over ``seeds`` seeds, each checked legal and, if it names a seat, on
    one the bot gives some chance of holding a Werewolf at dawn (the point it plays for)."""
    believed = bot_beliefs(view, 2)
    assert believed is not None
    ballots = [bot_ballot(view, seed, 2) for seed in range(seeds)]
    for ballot in ballots:
        check_ballot(view.seats, view.seat, ballot)
        if ballot is not None:
            assert believed.werewolf_at_dawn[view.seats.index(ballot)] > 0, ballot
    return ballots


def test_a_robber_who_took_a_werewolf_foresees_the_vote_and_names_a_suspect() -> None:
    # It is on the werewolf team now, but the wolves' own ballots for nobody already shield
    # them in most worlds: a ballot on a likely Werewolf adds a point and seldom the loss.
    game = table(FIVE, [R, W, S, T, INS], (W, V))
    view = view_after(game, "anna", {"anna": Rob("bo")})
    assert view.learned == SawCard(W)
    believed = bot_beliefs(view, 2)
    assert believed is not None and believed.likely_team is Team.WEREWOLF
    assert None not in named_suspects(view, 20)


def test_at_three_seats_a_robber_who_took_a_werewolf_foresees_the_vote_and_names_a_seat() -> None:
    # Alone it would shield the wolves; but the Troublemaker may have swapped it back, and the
    # wolves' own ballots for nobody already save them if it is one: a seat is worth more.
    game = Deal(NAMES[:3], {"anna": R, "bo": W, "cia": T}, (W, S))
    view = view_after(game, "anna", {"anna": Rob("bo")})
    assert view.learned == SawCard(W)
    believed = bot_beliefs(view, 2)
    assert believed is not None and believed.likely_team is Team.WEREWOLF
    ballots = [bot_ballot(view, seed, 2) for seed in range(30)]
    assert None not in ballots
    assert ballots.count("bo") > ballots.count("cia")


def test_at_a_small_table_knowledge_of_a_seat_not_at_the_table_is_ignored() -> None:
    three = NAMES[:3]
    for view in (
        BotView("anna", three, S, choice=LookAtSeat("zed"), learned=SawSeat("zed", W)),
        BotView("anna", three, R, choice=Rob("zed"), learned=SawCard(V)),
        BotView("anna", three, T, choice=Swap("bo", "zed")),
    ):
        knowing_nothing = BotView("anna", three, view.dealt)
        for seed in range(5):
            ballot = bot_ballot(view, seed, 2)
            check_ballot(three, "anna", ballot)
            assert ballot == bot_ballot(knowing_nothing, seed, 2), (view, seed)


def test_at_a_small_table_the_werewolves_still_vote_nobody() -> None:
    game = Deal(NAMES[:3], {"anna": W, "bo": W, "cia": R}, (S, T))
    for seat in ("anna", "bo"):
        view = view_after(game, seat, {})
        assert all(bot_ballot(view, seed, 2) is None for seed in range(20))


def test_at_a_small_table_each_bot_breaks_ties_by_an_order_of_its_own() -> None:
    four = NAMES[:4]
    assert seat_order(four, 7, "anna") == seat_order(four, 7, "anna")
    assert sorted(seat_order(four, 7, "anna")) == sorted(four)
    differ = sum(
        seat_order(four, seed, "anna") != seat_order(four, seed, "bo") for seed in range(30)
    )
    assert differ > 20


def test_a_robber_who_took_the_minion_foresees_the_vote_and_never_names_its_victim() -> None:
    game = table(SIX, [R, M, W, S, T, INS], (W, V))
    view = view_after(game, "anna", {"anna": Rob("bo")})
    assert view.learned == SawCard(M)
    ballots = named_suspects(view, 20)
    assert None not in ballots
    assert "bo" not in ballots  # it holds the Robber now, barring a swap: no point in it


def test_a_robber_who_took_a_village_card_never_names_its_victim() -> None:
    game = table(FIVE, [R, S, W, T, INS], (W, V))
    view = view_after(game, "anna", {"anna": Rob("bo")})
    believed = bot_beliefs(view, 2)
    assert believed is not None
    assert believed.werewolf_at_dawn[1] < min(believed.werewolf_at_dawn[2:]) / 2
    for seed in range(20):
        assert bot_ballot(view, seed, 2) not in ("bo", None)


def test_an_insomniac_who_woke_as_a_werewolf_foresees_the_vote() -> None:
    game = table(FIVE, [INS, W, S, R, T], (W, V))
    view = view_after(game, "anna", {"dan": Rob("anna")})
    assert view.learned == SawCard(R)  # robbed: not a Werewolf
    view = view_after(game, "anna", {"eva": Swap("anna", "bo")})
    assert view.learned == SawCard(W)
    believed = bot_beliefs(view, 2)
    assert believed is not None and believed.team[Team.WEREWOLF] == 1
    # Sure of its team, it keeps the shield where its ballot may decide the vote, and names a
    # suspect where the others' ballots decide it anyway: by the order of the seats.
    ballots = named_suspects(view, 30)
    assert 0 < ballots.count(None) < len(ballots) / 2


def test_an_insomniac_who_was_robbed_suspects_no_one_it_cannot_tell_apart() -> None:
    game = table(FIVE, [INS, W, S, R, T], (W, V))
    view = view_after(game, "anna", {"dan": Rob("anna")})
    believed = bot_beliefs(view, 2)
    assert believed is not None and believed.likely_team is Team.VILLAGE
    assert bot_ballot(view, 3, 2) not in (None, "anna")


def test_a_seer_who_saw_both_werewolves_in_the_centre_votes_nobody() -> None:
    game = table(FIVE, [S, V, R, T, INS], (W, W))
    view = view_after(game, "anna", {"anna": LookAtCenter()})
    for seed in range(10):
        assert bot_ballot(view, seed, 2) is None


def test_a_seer_who_saw_a_werewolf_names_that_seat() -> None:
    game = table(FIVE, [S, V, R, W, INS], (W, T))
    view = view_after(game, "anna", {"anna": LookAtSeat("dan")})
    for seed in range(10):
        assert bot_ballot(view, seed, 2) == "dan"


@pytest.mark.parametrize("size", range(4, 11))
def test_a_seer_who_saw_an_innocent_card_does_not_name_that_seat(size: int) -> None:
    seats = NAMES[:size]
    cards = [S, V, *deck_for(size)[2:]]  # anna the Seer, bo a Villager...
    cards.remove(S)
    cards.insert(1, cards.pop(cards.index(V)))
    game = Deal(seats, dict(zip(seats, cards[:size], strict=True)), (cards[-2], cards[-1]))
    view = view_after(game, "anna", {"anna": LookAtSeat("bo")})
    assert view.learned == SawSeat("bo", V)
    for seed in range(20):
        assert bot_ballot(view, seed, 2) != "bo"


def test_the_minion_shields_the_werewolves_it_saw() -> None:
    game = table(SIX, [M, W, S, R, T, INS], (W, V))
    view = view_after(game, "anna", {})
    assert view.learned == SawWerewolves(("bo",))
    for seed in range(20):
        assert bot_ballot(view, seed, 2) in (None, "cia", "dan", "eva", "fia")
        assert bot_ballot(view, seed, 2) != "bo"


def test_a_minion_who_saw_no_werewolf_wants_someone_dead_while_it_likely_is_the_minion() -> None:
    # Both Werewolves are in the centre: the Minion wins only if someone else dies. At six
    # seats a Robber or Troublemaker has more likely than not moved its card, and then the
    # village wins only if nobody dies.
    eight = NAMES[:8]
    game = table(eight, [M, V, S, R, T, INS, V, V], (W, W))
    view = view_after(game, "anna", {})
    for seed in range(10):
        assert bot_ballot(view, seed, 2) not in (None, "anna")
    game = table(SIX, [M, V, S, R, T, INS], (W, W))
    believed = bot_beliefs(view_after(game, "anna", {}), 2)
    assert believed is not None and believed.likely_team is Team.VILLAGE
    assert bot_ballot(view_after(game, "anna", {}), 1, 2) is None


def test_a_werewolf_votes_nobody_and_never_for_its_partner() -> None:
    game = table(FIVE, [W, W, S, R, T], (V, INS))
    view = view_after(game, "anna", {})
    assert view.learned == SawWerewolves(("bo",))
    for seed in range(10):
        assert bot_ballot(view, seed, 2) is None


def test_village_bots_vote_for_the_most_likely_dawn_werewolf() -> None:
    for number in range(300):
        seed = f"most-likely/{number}"
        game = deal(SIX, seed)
        choices, night = bot_night(game, seed)
        for position, seat in enumerate(SIX):
            view = day_view(game, choices, night, seat)
            believed = bot_beliefs(view, 2)
            assert believed is not None
            ballot = bot_ballot(view, seed, 2)
            if believed.likely_team is not Team.VILLAGE or ballot is None:
                continue
            chances = [c for p, c in enumerate(believed.werewolf_at_dawn) if p != position]
            named = believed.werewolf_at_dawn[SIX.index(ballot)]
            tie = 1e-9 if believed.exact else 0.05 / 3
            assert named >= max(chances) - tie, (seat, view, ballot, believed)


def test_the_foreseen_vote_counts_points_as_the_rules_do() -> None:
    # bots.ballot_points scores one seat's every ballot at once; vote.decide is the rule.
    rng = random.Random("points")
    for _ in range(3000):
        size = rng.randrange(3, 8)
        seats = tuple(str(position) for position in range(size))
        cards = tuple(rng.sample([W, W, M, S, R, T, INS, V, V, V], size))
        me = rng.randrange(size)
        others = tuple(
            rng.choice([None, *(seat for seat in range(size) if seat != voter)])
            for voter in range(size)
        )
        points = bots.ballot_points(cards, others, me)
        assert len(points) == size + 1
        for ballot in (*range(size), None):
            if ballot == me:
                continue
            cast = {seats[v]: None if t is None else seats[t] for v, t in enumerate(others)}
            cast[seats[me]] = None if ballot is None else seats[ballot]
            dawn = dict(zip(seats, cards, strict=True))
            result = vote.decide(seats, dawn, cast, vote.tally(seats, cast).dead)
            assert points[size if ballot is None else ballot] == result.points[seats[me]]


# --- the night ------------------------------------------------------------------------------


def test_the_lone_werewolf_peeks_and_a_pack_does_not() -> None:
    lone = table(FIVE, [W, S, R, T, INS], (W, V))
    assert isinstance(bot_night_choice(night_view(lone, "anna"), 1), Peek)
    pack = table(FIVE, [W, W, R, T, INS], (S, V))
    assert bot_night_choice(night_view(pack, "anna"), 1) is None


def test_the_seer_looks_where_its_plan_says_and_the_robber_robs() -> None:
    for size in range(3, 11):
        seats = NAMES[:size]
        plan = night_plan(S, size)
        assert plan in ("seat", "center")
        seer = bot_night_choice(BotView(seats[0], seats, S), size)
        assert isinstance(seer, LookAtSeat if plan == "seat" else LookAtCenter)
        assert night_plan(R, size) == "rob"
        robbery = bot_night_choice(BotView(seats[0], seats, R), size)
        assert isinstance(robbery, Rob) and robbery.seat != seats[0]
        swap = bot_night_choice(BotView(seats[0], seats, T), size)
        assert isinstance(swap, Swap) and seats[0] not in (swap.first, swap.second)
    assert night_plan(S, 10) == "seat"  # a Werewolf seen at a seat beats two centre cards


def test_cards_that_do_not_act_choose_nothing() -> None:
    for card in (M, INS, V):
        assert bot_night_choice(BotView("anna", FIVE, card), 1) is None


def test_a_sight_holds_only_what_the_view_shows() -> None:
    view = BotView("cia", FIVE, R, choice=Rob("eva"), learned=SawCard(W))
    sight = sight_of(view)
    assert sight.me == 2 and sight.my_move == (2, 4)
    assert sight.known == ((2, R), (4, W))
    assert sight.dawn_card is None and not sight.all_wolves_known
