"""The day's "heard enough" majority, the vote's tally, and who wins and scores."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from slackapp.game.cards import TEAM_OF, Card, Team

NOBODY = "nobody"
"""The name a ballot for nobody is counted under in a tally."""

WIN_POINTS = 2
WEREWOLF_BALLOT_POINTS = 1


def heard_enough_needed(people: int) -> int:
    """How many people must mark "heard enough" to open the vote early: more than half.

    Bots count on neither side of the fraction, so only people are passed in.

    >>> [heard_enough_needed(n) for n in (2, 3, 4, 5)]
    [2, 2, 3, 3]
    """
    return people // 2 + 1


def vote_opens_early(people: int, marked: int) -> bool:
    """True when more than half of the ``people`` at the table have marked "heard enough"."""
    return marked >= heard_enough_needed(people)


class IllegalBallot(ValueError):
    """A ballot for oneself, or for a seat not at the table."""


def check_ballot(seats: tuple[str, ...], voter: str, target: str | None) -> None:
    """Raise IllegalBallot unless ``voter`` may name ``target`` (None is nobody)."""
    if voter not in seats:
        raise IllegalBallot(f"{voter!r} is not seated and cannot vote")
    if target is None:
        return
    if target == voter:
        raise IllegalBallot(f"{voter!r} cannot vote for themself")
    if target not in seats:
        raise IllegalBallot(f"{voter!r} votes for unknown seat {target!r}")


@dataclass(frozen=True)
class Tally:
    votes: dict[str, int]
    """Ballots per seat that received any, in seat order."""
    nobody: int
    dead: tuple[str, ...]

    def as_counts(self) -> dict[str, int]:
        """The tally as REFEREE.md prints it: seats in order, then ``nobody`` if any."""
        counts = dict(self.votes)
        if self.nobody:
            counts[NOBODY] = self.nobody
        return counts


def tally(seats: tuple[str, ...], ballots: Mapping[str, str | None]) -> Tally:
    """Count the ballots; a missing ballot counts for no one and for nothing.

    With ``top`` the most ballots any seat received: if ``top`` is 0 or the ballots for nobody
    reach ``top``, no one dies; otherwise every seat with ``top`` ballots dies.
    """
    seated = set(seats)
    received: dict[str, int] = {}
    nobody = 0
    for voter, target in ballots.items():
        if voter not in seated or target == voter or (target is not None and target not in seated):
            check_ballot(seats, voter, target)  # raises, naming the problem
        if target is None:
            nobody += 1
        else:
            received[target] = received.get(target, 0) + 1
    votes = {seat: received[seat] for seat in seats if seat in received}
    top = max(votes.values(), default=0)
    dead = () if top == 0 or nobody >= top else tuple(s for s in seats if votes.get(s) == top)
    return Tally(votes=votes, nobody=nobody, dead=dead)


class Verdict(StrEnum):
    """Why the tally killed whom it did: the fact a reveal explains when it surprises."""

    NO_VOTES = "no_votes"
    """No seat received a ballot, so no one died."""
    NOBODY_HELD = "nobody_held"
    """Nobody had at least as many ballots as the most any seat had, so no one died."""
    MOST_VOTES = "most_votes"
    """One seat had the most ballots, more than one and more than Nobody, and died."""
    ONE_VOTE = "one_vote"
    """One seat had the only ballot cast for a seat, and Nobody none: one vote was enough."""
    SINGLE_VOTES = "single_votes"
    """Several seats had one ballot each, no one more and Nobody none: all tied, so all died."""
    TIE = "tie"
    """Several seats tied on the most ballots, more than one each and more than Nobody."""


def verdict(counted: Tally) -> Verdict:
    """Which rule of the count decided ``counted``'s dead.

    >>> verdict(tally(("a", "b", "c"), {"a": "b", "b": "c", "c": "a"}))
    <Verdict.SINGLE_VOTES: 'single_votes'>
    >>> verdict(tally(("a", "b", "c"), {"a": "b", "b": None, "c": None}))
    <Verdict.NOBODY_HELD: 'nobody_held'>
    """
    top = max(counted.votes.values(), default=0)
    if top == 0:
        return Verdict.NO_VOTES
    if not counted.dead:
        return Verdict.NOBODY_HELD
    if top == 1:
        return Verdict.ONE_VOTE if len(counted.dead) == 1 else Verdict.SINGLE_VOTES
    return Verdict.TIE if len(counted.dead) > 1 else Verdict.MOST_VOTES


@dataclass(frozen=True)
class Result:
    winning_team: Team | None
    winners: tuple[str, ...]
    points: dict[str, int]
    named_werewolf: tuple[str, ...] = ()
    """The voters whose ballot named a seat holding a Werewolf at dawn: the reason for their
    extra point, kept so that nothing has to guess it from the points."""


def decide(
    seats: tuple[str, ...],
    dawn: Mapping[str, Card],
    ballots: Mapping[str, str | None],
    dead: tuple[str, ...],
) -> Result:
    """Who wins by the cards held at dawn, and every seat's points (zeros included)."""
    werewolf = Card.WEREWOLF  # looked up once, not per seat
    wolves = {seat for seat in seats if dawn[seat] is werewolf}
    winning_team: Team | None
    if wolves:
        winning_team = Team.VILLAGE if wolves.intersection(dead) else Team.WEREWOLF
        winners = tuple([seat for seat in seats if TEAM_OF[dawn[seat]] is winning_team])
    elif not dead:
        winning_team = Team.VILLAGE
        winners = tuple([seat for seat in seats if TEAM_OF[dawn[seat]] is Team.VILLAGE])
    else:
        minions = tuple(seat for seat in seats if dawn[seat] is Card.MINION)
        someone_else_died = any(seat not in minions for seat in dead)
        winners = minions if someone_else_died else ()
        winning_team = Team.WEREWOLF if winners else None

    points = {seat: WIN_POINTS if seat in winners else 0 for seat in seats}
    named = tuple(seat for seat in seats if ballots.get(seat) in wolves)
    for voter in named:
        points[voter] += WEREWOLF_BALLOT_POINTS
    return Result(winning_team=winning_team, winners=winners, points=points, named_werewolf=named)
