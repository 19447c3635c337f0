"""A whole game from deal to points: the night, the tally and the result together."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

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


class BallotScore(StrEnum):
    """What a seat's ballot did for its points: the reason beside its win or loss."""

    NAMED_WEREWOLF = "named a werewolf"
    """The extra point: the ballot named a seat holding a Werewolf at dawn."""
    NAMED_NO_WEREWOLF = "named no werewolf"
    FOR_NOBODY = "for nobody"
    NO_BALLOT = "no ballot"


def ballot_score(outcome: Outcome, seat: str) -> BallotScore:
    if seat in outcome.result.named_werewolf:
        return BallotScore.NAMED_WEREWOLF
    if seat not in outcome.ballots:
        return BallotScore.NO_BALLOT
    if outcome.ballots[seat] is None:
        return BallotScore.FOR_NOBODY
    return BallotScore.NAMED_NO_WEREWOLF
