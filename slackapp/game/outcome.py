"""A whole game from deal to points: the night, the tally and the result together."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from slackapp.game.cards import Deal
from slackapp.game.night import Night, NightChoice, resolve_night
from slackapp.game.vote import Result, Tally, decide, tally


@dataclass(frozen=True)
class Outcome:
    deal: Deal
    night: Night
    ballots: dict[str, str | None]
    tally: Tally
    result: Result


def play(
    deal: Deal, choices: Mapping[str, NightChoice], ballots: Mapping[str, str | None]
) -> Outcome:
    """Resolve the night, count the ballots and decide the winners and points."""
    night = resolve_night(deal, choices)
    counted = tally(deal.seats, ballots)
    result = decide(deal.seats, night.dawn, ballots, counted.dead)
    return Outcome(deal=deal, night=night, ballots=dict(ballots), tally=counted, result=result)
