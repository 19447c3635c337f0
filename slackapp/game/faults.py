"""A game whose deadline cannot be stepped: when it is given up, and what ending it shows.

A step that raises every time it is tried (a fault in the code, a row it cannot read) would
leave its game's deadline passed for ever: its board frozen, its channel unable to open
another table, and readiness failing for every process. Such a game is ended without the
machine (which may be what raises), from what its row says plainly: its phase, its channel,
and who sits at it. A step that fails for a moment (a deadlock, a connection lost) and then
goes through never ends a game: the game is given up only once its step has failed every time
it was tried for :data:`FAULT_GRACE`. A game nothing can step or stop otherwise (a lobby,
which has no deadline; a game whose clicks fail every time) is ended the same way by an
operator's ``varulv end-game``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from slackapp.game.effects import ClosedView, Effect, Say, Show, dm_surface
from slackapp.game.lines import Line, Message
from slackapp.game.machine import Phase, board_of, ended_phase

FAULT_GRACE = timedelta(seconds=60)
"""How long a game's deadline step must have failed, every time it was tried and never going
through, before the game is given up. Shorter than ``/readyz``'s default 120 s
(``VARULV_READY_BEHIND_SECONDS``), so one such game never makes the processes not ready."""


@dataclass(frozen=True)
class Failing:
    """A game's step at one deadline, failing every time it was tried: since when, and last
    when."""

    deadline: datetime
    since: datetime
    last: datetime

    def gives_up(self) -> bool:
        """Whether the game is given up: its step has failed every time for ``FAULT_GRACE``."""
        return self.last - self.since >= FAULT_GRACE

    def forgotten(self, now: datetime) -> bool:
        """Whether it was not tried again for ``FAULT_GRACE`` by ``now``: it went through
        elsewhere, or is no longer due, so a later failure counts from then."""
        return now - self.last >= FAULT_GRACE


def failed(before: Failing | None, deadline: datetime, at: datetime) -> Failing:
    """A game's step at ``deadline`` failed at ``at``, after failing as ``before`` said (None:
    it had not failed, or went through since). A failure at another deadline counts from
    nothing: the game moved on meanwhile (another process, or a click, stepped it)."""
    if before is None or before.deadline != deadline or before.forgotten(at):
        return Failing(deadline, at, at)
    return Failing(deadline, before.since, at)


@dataclass(frozen=True)
class GivenUp:
    """A game given up: the phase it ends in, and what it shows."""

    phase: Phase
    effects: tuple[Effect, ...]


def give_up(phase: Phase, channel: str, people: Iterable[str]) -> GivenUp:
    """End an open game in ``phase`` for a fault: its board says so in place of what it showed,
    as does the night message of each of ``people`` (the seated people Varulv reaches
    privately, naming the game's ``channel``) once the cards are dealt, and the channel is told
    in a line of its own that it is free for a new game. Nothing said names a card or a
    choice."""
    effects: list[Effect] = [Show(board_of(phase), ClosedView(Line(Message.FAULT_ENDED)))]
    if phase != Phase.LOBBY:
        told = ClosedView(Line(Message.FAULT_ENDED_IN, channel=channel))
        effects += [Show(dm_surface(key), told) for key in people]
    effects.append(Say(Line(Message.FAULT_CHANNEL_FREE)))
    return GivenUp(ended_phase(phase), tuple(effects))
