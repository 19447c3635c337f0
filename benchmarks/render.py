"""CPU per screen drawn: a game's views rendered to the Block Kit JSON that is sent.

``python -m benchmarks.render --rounds 3`` prints, for a ten-seat table, microseconds per
render of the day board, a night DM with a choice to make, a personal ballot and the reveal:
each from the machine's view to the blocks as ``chat.postMessage`` takes them (what the
outbox stores). Each figure is the best of ``--rounds`` rounds of ``--renders`` renders.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, datetime

from slackapp.blocks.render import personal_ballot, render
from slackapp.blocks.screen import Screen
from slackapp.game import (
    BotView,
    Card,
    bot_ballot,
    bot_night_choice,
    deal,
    learned_on_choosing,
    play,
)
from slackapp.game.effects import DayBoardView, NightDmView, PersonalBallotView, RevealView
from slackapp.game.lines import SeatName

SEATS = 10
GAME = 42
DEADLINE = datetime(2024, 5, 17, 14, 5, tzinfo=UTC)


def ten_seats() -> tuple[SeatName, ...]:
    people = [SeatName(f"U0PERSON{i:02d}", f"Person {i}", False) for i in range(6)]
    bots = [SeatName(f"bot{i}", f"Bot {i}", True) for i in range(SEATS - len(people))]
    return (*people, *bots)


def views() -> dict[str, Callable[[], Screen]]:
    """The four screens, each as a function that draws it from its view."""
    seats = ten_seats()
    keys = tuple(seat.key for seat in seats)
    people = [seat for seat in seats if not seat.is_bot]
    day = DayBoardView(
        GAME, DEADLINE, 2, 4, len(people), SEATS, people[0], tuple(people), seats[len(people) :]
    )
    me = seats[0]
    dm = NightDmView(
        GAME, "C0TABLE", me, seats, Card.TROUBLEMAKER, "swap", None, None, False, None, None
    )
    ballot = PersonalBallotView(GAME, seats[1:], True, seats[3].key, DEADLINE)
    dealt = deal(keys, 7)
    lone = len(dealt.dealt_werewolves()) == 1
    choices = {}
    ballots = {}
    for key in keys:
        bot = BotView(key, keys, dealt.dealt[key], lone_wolf=lone)
        choice = bot_night_choice(bot, 7)
        if choice is not None:
            choices[key] = choice
        informed = BotView(
            key, keys, bot.dealt, lone, choice, learned_on_choosing(dealt, key, choice)
        )
        ballots[key] = bot_ballot(informed, 7, 2)
    reveal = RevealView(play(dealt, choices, ballots), seats, GAME)
    return {
        "day board": lambda: render(day),
        "night DM": lambda: render(dm),
        "personal ballot": lambda: personal_ballot(ballot, "Your ballot: someone."),
        "reveal": lambda: render(reveal),
    }


def per_render(draw: Callable[[], Screen], renders: int, rounds: int) -> float:
    """Microseconds per render and serialisation, best of ``rounds``."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(renders):
            draw().as_dicts()
        best = min(best, (time.perf_counter() - started) / renders)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--renders", type=int, default=300)
    options = parser.parse_args()
    for name, draw in views().items():
        blocks = draw().as_dicts()
        micros = per_render(draw, options.renders, options.rounds)
        print(f"{name:16} {micros:8.1f} µs per render ({len(blocks)} blocks)")


if __name__ == "__main__":
    main()
