"""How many whole deals per second the referee resolves, in-process on one core.

Run it with ``python benchmarks/referee_bench.py [DEALS]``. The deals (random tables of 3 to 10
seats, random legal night choices and ballots, some skipped or missing) are generated and
written as REFEREE.md JSON before the clock starts, so only ``referee()`` is timed: parsing,
checking, the night, the tally, the winners and the points.
"""

from __future__ import annotations

import json
import random
import sys
import time
from typing import Any

from slackapp.game.cards import Card, deck_for
from slackapp.game.referee import referee

NAMES = ["anna", "bo", "cia", "dan", "eva", "fia", "gus", "hed", "ivo", "jon"]
SEED = 20241129


def random_deal(rng: random.Random) -> dict[str, Any]:
    """One legal referee input; each acting seat skips its choice one time in five."""
    seats = NAMES[: rng.randint(3, 10)]
    deck = [str(card) for card in deck_for(len(seats))]
    rng.shuffle(deck)
    dealt = dict(zip(seats, deck, strict=False))
    wolves = [seat for seat in seats if dealt[seat] == Card.WEREWOLF]
    night: dict[str, Any] = {}
    for seat in seats:
        others = [other for other in seats if other != seat]
        if rng.random() < 0.2:
            continue
        match dealt[seat]:
            case Card.WEREWOLF if wolves == [seat]:
                night[seat] = {"peek": rng.randrange(2)}
            case Card.SEER:
                night[seat] = {"look": rng.choice([*others, "center"])}
            case Card.ROBBER:
                night[seat] = {"rob": rng.choice(others)}
            case Card.TROUBLEMAKER:
                night[seat] = {"swap": rng.sample(others, 2)}
    ballots: dict[str, str | None] = {}
    for seat in seats:
        if rng.random() < 0.1:
            continue  # a missing ballot
        others = [other for other in seats if other != seat]
        ballots[seat] = rng.choice([*others, None])
    return {"seats": seats, "dealt": dealt, "center": deck[-2:], "night": night, "ballots": ballots}


def main(argv: list[str]) -> None:
    count = int(argv[1]) if len(argv) > 1 else 100_000
    rng = random.Random(SEED)
    texts = [json.dumps(random_deal(rng)) for _ in range(count)]

    start = time.perf_counter()
    for text in texts:
        referee(text)
    elapsed = time.perf_counter() - start

    print(f"referee: {count} deals in {elapsed:.2f} s = {count / elapsed:,.0f} deals/s (one core)")


if __name__ == "__main__":
    main(sys.argv)
