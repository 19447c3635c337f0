"""How many whole deals per second the referee resolves, in-process on one core.

Run it with ``python benchmarks/referee_bench.py [DEALS]``. The deals (random tables of 3 to 10
seats, random legal night choices and ballots, some skipped or missing) are generated and
written as REFEREE.md JSON before the clock starts, so only the resolvers are timed: parsing,
checking, the night, the tally, the winners and the points.

The yardstick, timed on the same texts in the same run, is :func:`minimal_referee`: the same
rules with no checking at all, written as plainly and directly as they go. The ratio between
the two is what the validating referee costs over the least a resolver must do.
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


WOLF = "Werewolf"
WOLF_TEAM = ("Werewolf", "Minion")


def minimal_referee(text: str) -> dict[str, Any]:
    """REFEREE.md's outcome for valid input, checking nothing: the yardstick."""
    data = json.loads(text)
    seats, dealt, night = data["seats"], data["dealt"], data["night"]
    wolves = [seat for seat in seats if dealt[seat] == WOLF]
    holding = dict(dealt)
    seen: dict[str, Any] = {}
    robber = troublemaker = insomniac = None
    for seat in seats:
        card, choice = dealt[seat], night.get(seat)
        if card == WOLF:
            seen[seat] = {"werewolves": [w for w in wolves if w != seat]}
            if choice is not None:
                index = choice["peek"]
                seen[seat]["center"] = {"index": index, "card": data["center"][index]}
        elif card == "Minion":
            seen[seat] = {"werewolves": wolves}
        elif card == "Seer" and choice is not None:
            look = choice["look"]
            if look == "center":
                seen[seat] = {"center": data["center"]}
            else:
                seen[seat] = {"seat": look, "card": dealt[look]}
        elif card == "Robber" and choice is not None:
            robber = seat
            seen[seat] = {"card": dealt[choice["rob"]]}
        elif card == "Troublemaker" and choice is not None:
            troublemaker = seat
        elif card == "Insomniac":
            insomniac = seat
    if robber is not None:
        target = night[robber]["rob"]
        holding[robber], holding[target] = holding[target], holding[robber]
    if troublemaker is not None:
        first, second = night[troublemaker]["swap"]
        holding[first], holding[second] = holding[second], holding[first]
    if insomniac is not None:
        seen[insomniac] = {"card": holding[insomniac]}

    votes: dict[str, int] = {}
    nobody = 0
    for target in data["ballots"].values():
        if target is None:
            nobody += 1
        else:
            votes[target] = votes.get(target, 0) + 1
    top = max(votes.values(), default=0)
    dead = [] if top == 0 or nobody >= top else [s for s in seats if votes.get(s) == top]
    dawn_wolves = {seat for seat in seats if holding[seat] == WOLF}
    team: str | None
    if dawn_wolves:
        team = "village" if dawn_wolves.intersection(dead) else "werewolf"
        winners = [s for s in seats if (holding[s] in WOLF_TEAM) == (team == "werewolf")]
    elif not dead:
        team, winners = "village", [s for s in seats if holding[s] not in WOLF_TEAM]
    else:
        minions = [s for s in seats if holding[s] == "Minion"]
        winners = minions if any(s not in minions for s in dead) else []
        team = "werewolf" if winners else None
    points = {seat: 2 if seat in winners else 0 for seat in seats}
    for voter, target in data["ballots"].items():
        if target in dawn_wolves:
            points[voter] += 1
    tally = {seat: votes[seat] for seat in seats if seat in votes}
    if nobody:
        tally["nobody"] = nobody
    return {
        "dawn": holding,
        "center": data["center"],
        "seen": {seat: seen[seat] for seat in seats if seat in seen},
        "tally": tally,
        "dead": dead,
        "winning_team": team,
        "winners": winners,
        "points": points,
    }


def deals_per_second(resolve: Any, texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        resolve(text)
    return len(texts) / (time.perf_counter() - start)


def main(argv: list[str]) -> None:
    count = int(argv[1]) if len(argv) > 1 else 100_000
    rng = random.Random(SEED)
    texts = [json.dumps(random_deal(rng)) for _ in range(count)]
    for text in texts[:2000]:  # the yardstick must be a resolver of the same rules
        assert minimal_referee(text) == referee(text), text

    # Alternate the two, best of three each, so that a noisy neighbour hurts both alike.
    validating, minimal = 0.0, 0.0
    for _ in range(3):
        validating = max(validating, deals_per_second(referee, texts))
        minimal = max(minimal, deals_per_second(minimal_referee, texts))
    print(f"{count} deals, 3 to 10 seats, best of three runs each, one core:")
    print(f"  referee (validating): {validating:9,.0f} deals/s")
    print(f"  minimal resolver:     {minimal:9,.0f} deals/s")
    print(f"  referee / minimal:    {validating / minimal:9.2f}")


if __name__ == "__main__":
    main(sys.argv)
