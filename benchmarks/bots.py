"""How well the bots play, and how fast they decide.

Run it with ``python -m benchmarks.bots [--quick] [--deals N] [--sizes 3 4 ...]``: N all-bot
deals per table size, 3 to 10 seats unless sizes are given (10,000 by default, 1,000 with
``--quick``), the same deals for every row.

Every row sets one way of playing the village against the same werewolf side, the bots of
:mod:`slackapp.game.bots`:

- ``new``: the bots of :mod:`slackapp.game.bots` at every seat;
- ``today``: the village plays the bots as they were before (``benchmarks/baseline_bots.py``);
- ``random``: the village's night moves are today's (random) and its ballots uniformly random
  among the other seats;
- ``all-knowing``: the village moves like the new bots and knows every card at dawn: each of
  its bots names a seat that really holds a Werewolf then (the first in seat order), or
  nobody when none does or when it now holds a werewolf-team card itself;
- ``today, all seats``: today's bots on both sides, as the game played before.

A seat plays the policy of the side its *dealt* card is on, night and ballot: that is the
player it is. Who wins goes by the cards at dawn (RULES.md). For each row and size it prints
the village's win rate, the werewolf team's win rate, and the share of the village bots'
ballots that name a seat holding a Werewolf at dawn; for the new bots also the most that share
could be from what each bot knows (the best possible: the mean, over those ballots, of the
highest chance the bot gives any seat), and what the bots expected of their own ballots (the
mean of the chance each gave the seat it named). The best possible is an expectation and the
hit rate what 1,000 deals happened to give, so their ratio carries the deals' luck (about
±0.03 at three seats); the expected share against the best possible does not. Then the time a
bot's decision takes at ten seats, six and four (the largest table where every village bot
foresees the whole vote; above it only one that now likely holds a werewolf card does).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from benchmarks.baseline_bots import baseline_ballot, baseline_night_choice
from slackapp.game import bots as new_bots
from slackapp.game import worlds
from slackapp.game.bots import BotView, bot_ballot, bot_beliefs, bot_night_choice
from slackapp.game.cards import Card, Deal, Team, deal
from slackapp.game.night import Night, NightChoice, resolve_night
from slackapp.game.outcome import play

NAMES = ("anna", "bo", "cia", "dan", "eva", "fia", "gus", "hed", "ivo", "jon")
SIZES = range(3, 11)

NightPolicy = Callable[[BotView, str], NightChoice | None]
BallotPolicy = Callable[[BotView, str, int, Night], str | None]


def new_ballot(view: BotView, seed: str, wolves: int, night: Night) -> str | None:
    return bot_ballot(view, seed, wolves)


def today_ballot(view: BotView, seed: str, wolves: int, night: Night) -> str | None:
    return baseline_ballot(view, seed, wolves)


def random_ballot(view: BotView, seed: str, wolves: int, night: Night) -> str | None:
    return random.Random(f"{seed}/{view.seat}/random").choice(view.others)


def all_knowing_ballot(view: BotView, seed: str, wolves: int, night: Night) -> str | None:
    if night.dawn[view.seat].team is Team.WEREWOLF:
        return None  # it took a Werewolf or the Minion, and knows: it shields its new team
    dawn_wolves = [seat for seat in view.seats if night.dawn[seat] is Card.WEREWOLF]
    return next((seat for seat in dawn_wolves if seat != view.seat), None)


@dataclass(frozen=True)
class Side:
    night: NightPolicy
    ballot: BallotPolicy


NEW = Side(bot_night_choice, new_ballot)
TODAY = Side(baseline_night_choice, today_ballot)
ROWS: dict[str, tuple[Side, Side]] = {
    # name: (village, werewolf side)
    "new": (NEW, NEW),
    "today": (TODAY, NEW),
    "random": (Side(baseline_night_choice, random_ballot), NEW),
    "all-knowing": (Side(bot_night_choice, all_knowing_ballot), NEW),
    "today, all seats": (TODAY, TODAY),
}


@dataclass
class Count:
    games: int = 0
    village_wins: int = 0
    werewolf_wins: int = 0
    village_ballots: int = 0
    hits: int = 0
    best_chance: float = 0.0
    """Summed over village ballots: the highest chance the voter gives any seat of holding a
    Werewolf at dawn, which no ballot from its knowledge can beat on average."""
    named_chance: float = 0.0
    """Summed over village ballots: the chance the voter gives the seat it named (0 for
    nobody), the hit rate it expects without the luck of the deals."""


def views_at_dawn(game: Deal, choices: dict[str, NightChoice], night: Night) -> dict[str, BotView]:
    return {
        seat: BotView(
            seat,
            game.seats,
            game.dealt[seat],
            game.dealt_werewolves() == (seat,),
            choices.get(seat),
            night.seen.get(seat),
        )
        for seat in game.seats
    }


def play_row(game: Deal, seed: str, village: Side, wolves: Side, count: Count, bound: bool) -> None:
    choices: dict[str, NightChoice] = {}
    for seat in game.seats:
        side = village if game.dealt[seat].team is Team.VILLAGE else wolves
        view = BotView(seat, game.seats, game.dealt[seat], game.dealt_werewolves() == (seat,))
        choice = side.night(view, seed)
        if choice is not None:
            choices[seat] = choice
    night = resolve_night(game, choices)
    views = views_at_dawn(game, choices, night)
    deck_wolves = [*game.dealt.values(), *game.center].count(Card.WEREWOLF)
    dawn_wolves = {seat for seat in game.seats if night.dawn[seat] is Card.WEREWOLF}
    ballots: dict[str, str | None] = {}
    for seat in game.seats:
        on_village = game.dealt[seat].team is Team.VILLAGE
        side = village if on_village else wolves
        ballots[seat] = side.ballot(views[seat], seed, deck_wolves, night)
        if on_village:
            count.village_ballots += 1
            count.hits += ballots[seat] in dawn_wolves
            if bound:
                believed = bot_beliefs(views[seat], deck_wolves)
                if believed is not None:
                    count.best_chance += max(believed.werewolf_at_dawn)
                    named = ballots[seat]
                    if named is not None:
                        count.named_chance += believed.werewolf_at_dawn[game.seats.index(named)]
    winner = play(game, choices, ballots).result.winning_team
    count.games += 1
    count.village_wins += winner is Team.VILLAGE
    count.werewolf_wins += winner is Team.WEREWOLF


def measure(deals: int, sizes: Iterable[int] = SIZES) -> dict[int, dict[str, Count]]:
    results: dict[int, dict[str, Count]] = {}
    for size in sizes:
        seats = NAMES[:size]
        results[size] = {row: Count() for row in ROWS}
        for number in range(deals):
            seed = f"bench/{size}/{number}"
            game = deal(seats, seed)
            for row, (village, wolves) in ROWS.items():
                play_row(game, seed, village, wolves, results[size][row], bound=row == "new")
    return results


def percent(part: float, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "   -  "


def print_results(results: dict[int, dict[str, Count]], deals: int) -> None:
    print(f"{deals} all-bot deals per table size; the werewolf side is the new bots in every")
    print("row but the last.\n")
    plans = ", ".join(
        f"{size}: {new_bots.night_plan(Card.SEER, size)}/{new_bots.night_plan(Card.ROBBER, size)}"
        for size in results
    )
    print(f"The new Seer's and Robber's plans by table size: {plans}\n")
    print("| seats | village plays | village wins | werewolf team wins | ballots on a Werewolf |")
    print("|---|---|---|---|---|")
    for size, rows in results.items():
        for row, count in rows.items():
            hit = percent(count.hits, count.village_ballots)
            if row == "new":
                hit += f" (best possible {percent(count.best_chance, count.village_ballots)})"
            village = percent(count.village_wins, count.games)
            werewolf = percent(count.werewolf_wins, count.games)
            print(f"| {size} | {row} | {village} | {werewolf} | {hit} |")
    print("\nGoals, size by size (hit = share of village ballots on a dawn Werewolf):")
    print(
        "| seats | hit rate, new / random | new / best possible: hit rate, expected"
        " | village wins, new - today's"
        " | werewolf team wins, vs today's village - vs the new one |"
    )
    print("|---|---|---|---|---|")
    for size, rows in results.items():
        new, today, rand = rows["new"], rows["today"], rows["random"]
        ratio = (new.hits / new.village_ballots) / max(rand.hits / rand.village_ballots, 1e-9)
        best = max(new.best_chance, 1e-9)
        of_best = f"{new.hits / best:.2f}, {new.named_chance / best:.2f}"
        wins = (new.village_wins - today.village_wins) / new.games
        wolves = (today.werewolf_wins - new.werewolf_wins) / new.games
        print(
            f"| {size} | {ratio:.2f}x | {of_best} | {100 * wins:+.1f} points"
            f" | {100 * wolves:+.1f} points |"
        )


def clear_bot_caches() -> None:
    """Empty everything the bots' modules keep between decisions."""
    for module in (new_bots, worlds):
        for kept in vars(module).values():
            if hasattr(kept, "cache_clear"):
                kept.cache_clear()


def time_decisions(deals: int, size: int) -> None:
    """Time every bot decision of ``deals`` games at ``size`` seats, in processor time (other
    work on the machine does not count). First the games are played from empty caches, each
    decision as it comes with what earlier games left (a running app's case), and each game's
    decisions summed; then every decision again, with the caches emptied first (cold: worked
    out from nothing) and once more at once (warm: the same decision asked twice)."""
    seats = NAMES[:size]
    comes: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    games: list[float] = []

    def as_it_comes(decide: Callable[[], object]) -> object:
        start = time.process_time()
        made = decide()
        comes.append(time.process_time() - start)
        games[-1] += comes[-1]
        return made

    def cold_then_warm(decide: Callable[[], object]) -> object:
        clear_bot_caches()
        start = time.process_time()
        decide()
        cold.append(time.process_time() - start)
        start = time.process_time()
        made = decide()
        warm.append(time.process_time() - start)
        return made

    for timed in (as_it_comes, cold_then_warm):
        clear_bot_caches()
        for number in range(deals):
            seed = f"time/{number}"
            game = deal(seats, seed)
            games.append(0.0)
            choices: dict[str, NightChoice] = {}
            for seat in seats:
                view = BotView(seat, seats, game.dealt[seat], game.dealt_werewolves() == (seat,))
                choice = timed(partial(bot_night_choice, view, seed))
                if choice is not None:
                    assert isinstance(choice, NightChoice)
                    choices[seat] = choice
            night = resolve_night(game, choices)
            for view in views_at_dawn(game, choices, night).values():
                timed(partial(bot_ballot, view, seed, 2))
    games = games[:deals]

    def quantiles(times: list[float]) -> str:
        times = sorted(times)
        p50, p99 = times[len(times) // 2], times[int(len(times) * 0.99)]
        return f"p50 {1000 * p50:5.2f} ms, p99 {1000 * p99:5.2f} ms, max {1000 * times[-1]:5.1f} ms"

    print(
        f"\nA bot's decision at {size} seats, {len(cold)} decisions ({deals} games,"
        " night and ballot), processor time:"
    )
    print(f"  as it comes (earlier games kept): {quantiles(comes)}")
    print(f"  cold (nothing worked out before): {quantiles(cold)}")
    print(f"  warm (the same decision again):   {quantiles(warm)}")
    print(f"  one game's bot decisions, as they come: {quantiles(games[1:])},")
    print(f"    the first game after a start {1000 * games[0]:5.1f} ms")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 deals per table size")
    parser.add_argument("--deals", type=int, help="deals per table size (default 10,000)")
    parser.add_argument(
        "--sizes", type=int, nargs="+", choices=SIZES, help="table sizes (default 3 to 10)"
    )
    args = parser.parse_args(argv)
    deals = args.deals or (1_000 if args.quick else 10_000)
    start = time.perf_counter()
    results = measure(deals, args.sizes or SIZES)
    print_results(results, deals)
    for size in (10, 6, new_bots.FORESEEN_VOTE_SEATS):
        time_decisions(50 if args.quick else 200, size)
    print(f"\n(whole run {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
