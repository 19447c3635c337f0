"""One test (or a few) for every rule in RULES.md, on small hand-built deals.

Deals are written out card by card so that each test reads like the rule it checks; the
referee's JSON is used where the rule is about what is printed (``seen``, ``winning_team``).
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from slackapp.game.cards import (
    BOT_TABLE,
    MAX_SEATS,
    MIN_PEOPLE,
    MIN_SEATS,
    Card,
    Deal,
    Team,
    deal,
    deck_for,
)
from slackapp.game.night import (
    CenterCard,
    IllegalChoice,
    LookAtCenter,
    LookAtSeat,
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
from slackapp.game.referee import referee
from slackapp.game.vote import (
    IllegalBallot,
    decide,
    heard_enough_needed,
    tally,
    vote_opens_early,
)

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


def table(*cards: Card, center: tuple[Card, Card] = (V, V)) -> Deal:
    """A deal whose seats are named from NAMES, in order, holding ``cards``."""
    seats = NAMES[: len(cards)]
    return Deal(seats=seats, dealt=dict(zip(seats, cards, strict=True)), center=center)


def judge(
    dealt: dict[str, str],
    center: list[str],
    night: dict[str, Any] | None = None,
    ballots: dict[str, str | None] | None = None,
) -> dict[str, Any]:
    """The referee's verdict on a deal written in REFEREE.md's JSON."""
    return referee(
        json.dumps(
            {
                "seats": list(dealt),
                "dealt": dealt,
                "center": center,
                "night": night or {},
                "ballots": ballots or {},
            }
        )
    )


# --- the table and the deck --------------------------------------------------------------

DECK_TABLE = {
    3: [W, W, S, R, T],
    4: [W, W, S, R, T, V],
    5: [W, W, S, R, T, V, INS],
    6: [W, W, S, R, T, V, INS, M],
    7: [W, W, S, R, T, V, INS, M, V],
    8: [W, W, S, R, T, V, INS, M, V, V],
    9: [W, W, S, R, T, V, INS, M, V, V, V],
    10: [W, W, S, R, T, V, INS, M, V, V, V, V],
}


def test_table_limits_match_the_rules() -> None:
    assert (MIN_SEATS, MAX_SEATS, MIN_PEOPLE, BOT_TABLE) == (3, 10, 2, 5)


@pytest.mark.parametrize("seats", sorted(DECK_TABLE))
def test_deck_by_table_size_has_the_cards_of_the_rules_table(seats: int) -> None:
    deck = deck_for(seats)
    assert len(deck) == seats + 2
    assert Counter(deck) == Counter(DECK_TABLE[seats])


@pytest.mark.parametrize("seats", [0, 2, 11])
def test_deck_for_a_table_outside_3_to_10_seats_is_refused(seats: int) -> None:
    with pytest.raises(ValueError, match="3 to 10"):
        deck_for(seats)


@pytest.mark.parametrize("seats", range(3, 11))
def test_deal_is_a_permutation_of_the_deck_with_two_cards_in_the_centre(seats: int) -> None:
    names = NAMES[:seats]
    dealt = deal(names, seed=seats * 7919)
    assert dealt.seats == names
    assert list(dealt.dealt) == list(names)
    assert len(dealt.center) == 2
    assert Counter([*dealt.dealt.values(), *dealt.center]) == Counter(deck_for(seats))


@pytest.mark.parametrize("seed", [0, 1, 2024, "C0FFEE/game-17"])
def test_deal_from_the_same_seed_is_the_same_deal(seed: int | str) -> None:
    assert deal(NAMES[:7], seed) == deal(list(NAMES[:7]), seed)


def test_deal_depends_on_the_seed() -> None:
    deals = {
        (tuple(d.dealt.values()), d.center) for d in (deal(NAMES[:6], seed) for seed in range(30))
    }
    assert len(deals) > 10


def test_deal_is_the_same_in_another_process_with_another_hash_seed() -> None:
    # A replay on another worker must deal the same cards: the shuffle may not depend on hash().
    script = (
        "from slackapp.game.cards import deal;"
        "d = deal(['anna','bo','cia','dan','eva','fia','gus'], 'channel-C1/game-3');"
        "print([*d.dealt.values(), *d.center])"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    here = deal(["anna", "bo", "cia", "dan", "eva", "fia", "gus"], "channel-C1/game-3")
    assert run.stdout.strip() == str([*here.dealt.values(), *here.center])


# --- the seven cards ------------------------------------------------------------------------

CARD_TABLE = {
    "Werewolf": (
        "werewolf",
        "Wakes with the other werewolves and sees them. "
        "A lone werewolf may look at one centre card.",
    ),
    "Minion": ("werewolf", "Sees who the werewolves are. They never see the Minion."),
    "Seer": ("village", "May look at one other player's card, or at both centre cards."),
    "Robber": (
        "village",
        "May swap own card with another player's card, then looks at the new card.",
    ),
    "Troublemaker": (
        "village",
        "May swap the cards of two other players, without looking at either.",
    ),
    "Insomniac": ("village", "Looks at own card at the very end of the night."),
    "Villager": ("village", "Does not wake."),
}


def test_there_are_exactly_the_seven_cards_of_the_rules() -> None:
    assert [str(card) for card in Card] == list(CARD_TABLE)


@pytest.mark.parametrize("name", list(CARD_TABLE))
def test_card_team_and_line_match_the_rules_table(name: str) -> None:
    team, line = CARD_TABLE[name]
    assert Card(name).team is Team(team)
    assert Card(name).line == line


def test_card_lines_are_copied_from_rules_md() -> None:
    # Guards the hand-copied CARD_TABLE above against drifting from the spec itself.
    rules = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    text = rules.read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\w+) \| (village|werewolf) \| (.+?) \|$", text, flags=re.MULTILINE)
    assert {card: (team, line) for card, team, line in rows} == CARD_TABLE


# --- the night ------------------------------------------------------------------------------


def test_a_lone_wolf_may_peek_at_either_centre_card() -> None:
    lone = table(W, S, R, center=(W, T))
    for index in (0, 1):
        night = resolve_night(lone, {"anna": Peek(index)})
        assert night.seen["anna"] == SawWerewolves((), CenterCard(index, lone.center[index]))


def test_a_lone_wolf_that_does_not_peek_learns_only_that_it_is_alone() -> None:
    night = resolve_night(table(W, S, R, center=(W, T)), {})
    assert night.seen["anna"] == SawWerewolves(())


def test_wolves_in_a_pack_may_not_peek() -> None:
    pack = table(W, W, S, center=(R, T))
    with pytest.raises(IllegalChoice):
        check_choice(pack, "anna", Peek(0))


def test_lone_wolf_is_about_dealt_wolves_not_the_deck() -> None:
    # Three wolves dealt (a custom deck) is no lone wolf; one dealt with two in the centre is.
    with pytest.raises(IllegalChoice):
        check_choice(table(W, W, W, V, center=(S, R)), "bo", Peek(1))
    check_choice(table(W, S, V, center=(W, W)), "anna", Peek(1))


def test_pack_wolves_see_each_other_and_never_the_minion() -> None:
    night = resolve_night(table(W, M, W, S, V, W, center=(R, T)), {})
    assert night.seen["anna"] == SawWerewolves(("cia", "fia"))
    assert night.seen["cia"] == SawWerewolves(("anna", "fia"))
    assert night.seen["fia"] == SawWerewolves(("anna", "cia"))


def test_minion_sees_the_seats_dealt_a_werewolf() -> None:
    night = resolve_night(table(V, W, M, S, W, center=(R, T)), {})
    assert night.seen["cia"] == SawWerewolves(("bo", "eva"))


def test_minion_sees_no_werewolves_when_both_lie_in_the_centre() -> None:
    night = resolve_night(table(M, S, R, T, center=(W, W)), {})
    assert night.seen["anna"] == SawWerewolves(())


def test_minion_sees_the_dealt_wolf_even_after_the_robber_took_its_card() -> None:
    night = resolve_night(table(W, M, R, S, center=(W, V)), {"cia": Rob("anna")})
    assert night.dawn["anna"] is R and night.dawn["cia"] is W
    assert night.seen["bo"] == SawWerewolves(("anna",))


def test_seer_sees_another_seats_dealt_card_before_anything_moves() -> None:
    # The Robber takes anna's card and the Troublemaker then swaps it on; the Seer saw a Werewolf.
    night = resolve_night(
        table(W, S, R, T, V, center=(W, INS)),
        {"bo": LookAtSeat("anna"), "cia": Rob("anna"), "dan": Swap("cia", "eva")},
    )
    assert night.seen["bo"] == SawSeat("anna", W)
    assert night.dawn["anna"] is R


def test_seer_may_look_at_both_centre_cards() -> None:
    night = resolve_night(table(S, R, T, center=(W, M)), {"anna": LookAtCenter()})
    assert night.seen["anna"] == SawCenter((W, M))


def test_seer_may_not_look_at_itself_or_a_single_centre_card() -> None:
    seer_table = table(S, R, T, center=(W, W))
    with pytest.raises(IllegalChoice, match="itself"):
        check_choice(seer_table, "anna", LookAtSeat("anna"))
    with pytest.raises(IllegalChoice):
        check_choice(seer_table, "anna", Peek(0))


def test_robber_takes_a_card_leaves_its_own_and_learns_the_card_it_took() -> None:
    night = resolve_night(table(W, R, S, center=(W, T)), {"bo": Rob("cia")})
    assert night.dawn == {"anna": W, "bo": S, "cia": R}
    assert night.seen["bo"] == SawCard(S)


def test_robber_does_not_act_as_the_card_it_took() -> None:
    # Robbing the Seer gives no look, robbing the Insomniac no dawn look (the Troublemaker then
    # swaps the Insomniac card away, which the Robber never learns), robbing a Werewolf does
    # not show the other wolves, and the wolves never see the Robber that joined them.
    robbed_seer = resolve_night(table(S, R, V, center=(W, W)), {"bo": Rob("anna")})
    assert robbed_seer.seen == {"bo": SawCard(S)}

    robbed_insomniac = resolve_night(
        table(INS, R, T, V, center=(W, W)), {"bo": Rob("anna"), "cia": Swap("bo", "dan")}
    )
    assert robbed_insomniac.dawn["dan"] is INS
    assert robbed_insomniac.seen["bo"] == SawCard(INS)
    assert robbed_insomniac.seen["anna"] == SawCard(R)  # the dealt Insomniac still wakes

    robbed_wolf = resolve_night(table(W, W, R, V, center=(S, T)), {"cia": Rob("anna")})
    assert robbed_wolf.seen["cia"] == SawCard(W)
    assert robbed_wolf.seen["bo"] == SawWerewolves(("anna",))


def test_robber_acts_by_its_dealt_card_so_it_cannot_make_the_taken_cards_choice() -> None:
    robber_table = table(T, R, V, center=(W, W))
    with pytest.raises(IllegalChoice):
        check_choice(robber_table, "bo", Swap("anna", "cia"))


def test_robber_may_not_rob_itself() -> None:
    with pytest.raises(IllegalChoice, match="itself"):
        check_choice(table(R, S, T, center=(W, W)), "anna", Rob("anna"))


def test_troublemaker_swaps_two_other_seats_without_seeing_either() -> None:
    night = resolve_night(table(T, W, S, V, center=(W, R)), {"anna": Swap("bo", "dan")})
    assert night.dawn == {"anna": T, "bo": V, "cia": S, "dan": W}
    assert "anna" not in night.seen


def test_troublemaker_swaps_after_the_robber() -> None:
    # Robber takes the Seer card; the Troublemaker then swaps the Robber's new card away.
    night = resolve_night(
        table(R, T, S, V, center=(W, W)), {"anna": Rob("cia"), "bo": Swap("anna", "dan")}
    )
    assert night.dawn == {"anna": V, "bo": T, "cia": R, "dan": S}


@pytest.mark.parametrize(
    ("swap", "problem"),
    [(Swap("anna", "bo"), "itself"), (Swap("bo", "anna"), "itself"), (Swap("bo", "bo"), "two")],
)
def test_troublemaker_may_not_swap_itself_or_one_seat_with_itself(swap: Swap, problem: str) -> None:
    with pytest.raises(IllegalChoice, match=problem):
        check_choice(table(T, W, S, center=(W, R)), "anna", swap)


@pytest.mark.parametrize(
    ("cards", "choice"),
    [
        ((V, S, R), LookAtSeat("bo")),
        ((M, S, W), LookAtCenter()),
        ((M, W, R), Peek(0)),
        ((INS, S, R), Rob("bo")),
        ((INS, S, W), Peek(0)),
        ((S, R, T), Rob("bo")),
        ((T, R, S), LookAtSeat("bo")),
    ],
)
def test_cards_that_do_not_offer_a_choice_cannot_make_one(
    cards: tuple[Card, Card, Card], choice: NightChoice
) -> None:
    with pytest.raises(IllegalChoice, match="'anna' was dealt"):
        check_choice(table(*cards, center=(W, V)), "anna", choice)


def test_insomniac_sees_its_card_as_it_is_at_dawn() -> None:
    untouched = resolve_night(table(INS, S, R, center=(W, W)), {})
    assert untouched.seen["anna"] == SawCard(INS)

    robbed = resolve_night(table(INS, S, R, center=(W, W)), {"cia": Rob("anna")})
    assert robbed.seen["anna"] == SawCard(R)

    robbed_then_swapped = resolve_night(
        table(INS, W, R, T, center=(W, V)), {"cia": Rob("anna"), "dan": Swap("anna", "bo")}
    )
    assert robbed_then_swapped.dawn["anna"] is W
    assert robbed_then_swapped.seen["anna"] == SawCard(W)


def test_nobody_is_told_that_their_card_moved() -> None:
    # The Robber takes the Seer card and the Troublemaker swaps a Villager and a Werewolf: the
    # Seer, the Villager and the Werewolf learn nothing beyond what their own dealt card shows.
    night = resolve_night(
        table(S, R, T, V, W, center=(W, M)),
        {"anna": LookAtCenter(), "bo": Rob("anna"), "cia": Swap("dan", "eva")},
    )
    assert night.dawn == {"anna": R, "bo": S, "cia": T, "dan": W, "eva": V}
    assert night.seen == {
        "anna": SawCenter((W, M)),
        "bo": SawCard(S),
        "eva": SawWerewolves(()),
    }


def test_a_skipped_choice_changes_nothing_and_shows_nothing() -> None:
    night = resolve_night(table(S, R, T, V, center=(W, W)), {})
    assert night.dawn == {"anna": S, "bo": R, "cia": T, "dan": V}
    assert night.seen == {}


def test_the_night_wakes_seats_in_the_fixed_order() -> None:
    night = resolve_night(table(INS, T, R, S, M, W, V, center=(W, V)), {})
    assert [(step.card, step.seat) for step in night.steps] == [
        (W, "fia"),
        (M, "eva"),
        (S, "dan"),
        (R, "cia"),
        (T, "bo"),
        (INS, "anna"),
    ]


def test_referee_prints_what_each_seat_learned_by_its_dealt_card() -> None:
    verdict = judge(
        {"anna": "Werewolf", "bo": "Minion", "cia": "Seer", "dan": "Robber", "eva": "Insomniac"},
        ["Werewolf", "Troublemaker"],
        night={"anna": {"peek": 1}, "cia": {"look": "center"}, "dan": {"rob": "eva"}},
    )
    assert verdict["seen"] == {
        "anna": {"werewolves": [], "center": {"index": 1, "card": "Troublemaker"}},
        "bo": {"werewolves": ["anna"]},
        "cia": {"center": ["Werewolf", "Troublemaker"]},
        "dan": {"card": "Insomniac"},
        "eva": {"card": "Robber"},
    }


# --- the day --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("people", "needed"),
    [(2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4), (8, 5), (9, 5), (10, 6)],
)
def test_heard_enough_needs_more_than_half_of_the_people(people: int, needed: int) -> None:
    assert heard_enough_needed(people) == needed
    assert not vote_opens_early(people, needed - 1)
    assert vote_opens_early(people, needed)
    assert vote_opens_early(people, people)


def test_exactly_half_of_the_people_does_not_open_the_vote() -> None:
    assert not vote_opens_early(4, 2)
    assert not vote_opens_early(2, 1)


def test_bots_are_counted_on_neither_side_of_heard_enough() -> None:
    # Only people are passed in: two people and three bots need both people, not 3 of 5 seats.
    assert list(inspect.signature(heard_enough_needed).parameters) == ["people"]
    assert list(inspect.signature(vote_opens_early).parameters) == ["people", "marked"]
    assert heard_enough_needed(2) == 2
    assert not vote_opens_early(2, 1)


# --- the vote -------------------------------------------------------------------------------

FIVE = NAMES[:5]


def test_no_ballots_at_all_kills_no_one() -> None:
    counted = tally(FIVE, {})
    assert (counted.votes, counted.nobody, counted.dead) == ({}, 0, ())


def test_only_ballots_for_nobody_kill_no_one() -> None:
    counted = tally(FIVE, {"anna": None, "bo": None})
    assert (counted.votes, counted.nobody, counted.dead) == ({}, 2, ())
    assert counted.as_counts() == {"nobody": 2}


def test_nobody_matching_the_top_seat_kills_no_one() -> None:
    counted = tally(FIVE, {"anna": "bo", "cia": "bo", "bo": None, "dan": None, "eva": "anna"})
    assert counted.votes == {"anna": 1, "bo": 2}
    assert counted.dead == ()


def test_nobody_above_the_top_seat_kills_no_one() -> None:
    counted = tally(FIVE, {"anna": "bo", "bo": None, "cia": None})
    assert counted.dead == ()


def test_a_seat_with_more_ballots_than_nobody_dies() -> None:
    counted = tally(FIVE, {"anna": "bo", "cia": "bo", "dan": None, "eva": "anna"})
    assert counted.dead == ("bo",)
    assert counted.as_counts() == {"anna": 1, "bo": 2, "nobody": 1}


def test_a_tie_at_the_top_kills_every_tied_seat_in_seat_order() -> None:
    counted = tally(FIVE, {"anna": "eva", "bo": "cia", "cia": "eva", "dan": "cia", "eva": "bo"})
    assert counted.dead == ("cia", "eva")


def test_a_single_ballot_kills_when_nobody_else_voted() -> None:
    assert tally(FIVE, {"dan": "anna"}).dead == ("anna",)


def test_missing_ballots_count_for_no_one_and_for_nothing() -> None:
    # Only two of five ballots came in: they decide alone, missing ones are not "nobody".
    counted = tally(FIVE, {"anna": "cia", "bo": "cia"})
    assert counted.as_counts() == {"cia": 2}
    assert counted.dead == ("cia",)


def test_a_ballot_for_oneself_is_illegal() -> None:
    with pytest.raises(IllegalBallot, match="themself"):
        tally(FIVE, {"anna": "anna"})


def test_a_ballot_for_an_unknown_seat_or_from_one_is_illegal() -> None:
    with pytest.raises(IllegalBallot, match="zed"):
        tally(FIVE, {"anna": "zed"})
    with pytest.raises(IllegalBallot, match="zed"):
        tally(FIVE, {"zed": "anna"})


# --- who wins -------------------------------------------------------------------------------


def test_a_werewolf_dies_so_every_village_card_wins() -> None:
    seats = NAMES[:6]
    dawn = dict(zip(seats, [W, M, S, V, W, T], strict=True))
    result = decide(seats, dawn, {}, ("eva",))
    assert result.winning_team is Team.VILLAGE
    assert result.winners == ("cia", "dan", "fia")


def test_one_of_two_werewolves_dying_in_a_tie_is_enough_for_the_village() -> None:
    seats = NAMES[:4]
    dawn = dict(zip(seats, [W, W, S, V], strict=True))
    result = decide(seats, dawn, {}, ("bo", "cia"))
    assert result.winning_team is Team.VILLAGE
    assert result.winners == ("cia", "dan")


def test_no_werewolf_dies_so_the_werewolves_and_minion_win() -> None:
    seats = NAMES[:6]
    dawn = dict(zip(seats, [W, M, S, V, W, T], strict=True))
    for dead in [(), ("cia",), ("bo",), ("bo", "cia")]:
        result = decide(seats, dawn, {}, dead)
        assert result.winning_team is Team.WEREWOLF, dead
        assert result.winners == ("anna", "bo", "eva"), dead


def test_team_is_decided_by_the_card_held_at_dawn_not_the_dealt_card() -> None:
    # The Robber took anna's Werewolf: the Robber seat is now the wolf, anna is village.
    outcome = play(
        table(W, R, S, V, center=(T, V)),
        {"bo": Rob("anna")},
        {"anna": "bo", "cia": "bo", "dan": "anna"},
    )
    assert outcome.tally.dead == ("bo",)
    assert outcome.result.winning_team is Team.VILLAGE
    assert outcome.result.winners == ("anna", "cia", "dan")


def test_no_werewolf_at_the_table_and_nobody_dies_so_the_village_wins_without_the_minion() -> None:
    seats = NAMES[:6]
    dawn = dict(zip(seats, [M, S, R, T, V, INS], strict=True))
    result = decide(seats, dawn, {}, ())
    assert result.winning_team is Team.VILLAGE
    assert result.winners == ("bo", "cia", "dan", "eva", "fia")


def test_no_werewolf_at_the_table_and_someone_else_dies_so_the_minion_wins_alone() -> None:
    seats = NAMES[:6]
    dawn = dict(zip(seats, [S, M, R, T, V, INS], strict=True))
    result = decide(seats, dawn, {}, ("eva",))
    assert result.winning_team is Team.WEREWOLF
    assert result.winners == ("bo",)


def test_minion_dying_beside_someone_else_with_no_wolf_at_the_table_still_wins() -> None:
    seats = NAMES[:6]
    dawn = dict(zip(seats, [S, M, R, T, V, INS], strict=True))
    result = decide(seats, dawn, {}, ("bo", "eva"))
    assert result.winning_team is Team.WEREWOLF
    assert result.winners == ("bo",)


def test_no_werewolf_at_the_table_and_only_the_minion_dies_so_nobody_wins() -> None:
    verdict = judge(
        {"anna": "Seer", "bo": "Minion", "cia": "Robber", "dan": "Troublemaker"},
        ["Werewolf", "Werewolf"],
        ballots={"anna": "bo", "cia": "bo", "dan": "bo", "bo": "anna"},
    )
    assert verdict["dead"] == ["bo"]
    assert verdict["winning_team"] is None
    assert verdict["winners"] == []
    assert verdict["points"] == {"anna": 0, "bo": 0, "cia": 0, "dan": 0}


def test_no_werewolf_and_no_minion_at_the_table_and_someone_dies_so_nobody_wins() -> None:
    seats = NAMES[:3]
    dawn = dict(zip(seats, [S, R, T], strict=True))
    result = decide(seats, dawn, {"anna": "bo", "cia": "bo"}, ("bo",))
    assert result.winning_team is None
    assert result.winners == ()
    assert result.points == {"anna": 0, "bo": 0, "cia": 0}


def test_the_minion_that_was_swapped_away_wins_or_loses_by_its_dawn_card() -> None:
    # The Troublemaker moved the Minion card to eva; wolves in the centre, dan dies: eva wins.
    outcome = play(
        table(M, S, T, V, V, INS, center=(W, W)),
        {"cia": Swap("anna", "eva")},
        {"anna": "dan", "bo": "dan", "eva": "dan", "dan": "anna"},
    )
    assert outcome.tally.dead == ("dan",)
    assert outcome.result.winners == ("eva",)


# --- points ---------------------------------------------------------------------------------


def test_winners_score_two_and_losers_zero() -> None:
    seats = NAMES[:4]
    dawn = dict(zip(seats, [W, S, V, R], strict=True))
    result = decide(seats, dawn, {}, ("cia",))
    assert result.points == {"anna": 2, "bo": 0, "cia": 0, "dan": 0}


def test_a_ballot_naming_a_werewolf_at_dawn_scores_one_whether_or_not_it_died() -> None:
    seats = NAMES[:5]
    dawn = dict(zip(seats, [W, W, S, V, R], strict=True))
    # anna has 2, bo 1: anna dies, the village wins; bo's voter still scores for naming a wolf.
    ballots = {"bo": "anna", "cia": "anna", "dan": "bo", "eva": None, "anna": "cia"}
    result = decide(seats, dawn, ballots, ("anna",))
    assert result.winning_team is Team.VILLAGE
    assert result.points == {"anna": 0, "bo": 1, "cia": 3, "dan": 3, "eva": 2}


def test_a_losing_seat_scores_one_for_naming_a_werewolf_that_survived() -> None:
    seats = NAMES[:4]
    dawn = dict(zip(seats, [W, S, V, R], strict=True))
    result = decide(seats, dawn, {"bo": "anna", "cia": "dan", "dan": "cia"}, ("cia", "dan"))
    assert result.winning_team is Team.WEREWOLF
    assert result.points == {"anna": 2, "bo": 1, "cia": 0, "dan": 0}


def test_naming_the_dealt_werewolf_that_was_robbed_scores_nothing() -> None:
    outcome = play(
        table(W, R, S, V, center=(T, V)),
        {"bo": Rob("anna")},
        {"cia": "anna", "dan": "bo", "anna": "cia", "bo": "cia"},
    )
    assert outcome.tally.dead == ("cia",)
    assert outcome.result.winners == ("bo",)
    assert outcome.result.points == {"anna": 0, "bo": 2, "cia": 0, "dan": 1}


def test_every_seat_has_points_zeros_included() -> None:
    verdict = judge(
        {"anna": "Seer", "bo": "Robber", "cia": "Villager"},
        ["Werewolf", "Werewolf"],
        ballots={"anna": "bo", "bo": "anna", "cia": "anna"},
    )
    assert verdict["points"] == {"anna": 0, "bo": 0, "cia": 0}
