"""One drain of a batch of games, as data: a frozen state and an event in, the next state and
the actions out, as ``game/machine.py`` is for a game. No threads, no clock, no database: the
deliverer (``delivery/deliverer.py``) carries the actions out and turns what happens into the
next event.

A drain reads its games' undelivered messages, asks ``plan.next_sends`` what each needs, sends
every ready message of every game side by side (every game's posts before any redraw, so that
what people wait to appear is not queued behind what is only being brought up to date), and:
- never sends a message while it is in flight already: a newer version of it is *held back*,
  and its game read again as soon as that call lands;
- reads a game again whenever a step gives it something new (``Kicked``);
- lets a game go only with nothing of it in flight: at once when a read finds nothing to send,
  or ``RELEASE_WITHIN_SECONDS`` after its last call landed, together with the others landing
  by then (one transaction for them all); a game that got something due as it was let go is
  read again;
- is over when nothing is left to read, send or let go.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from slackapp.delivery import plan
from slackapp.delivery.slack import WorkspaceId

RELEASE_WITHIN_SECONDS = 0.05
"""A game whose last call landed is let go within this long, with the others landing then:
one transaction for them all, and no message waits for it."""

Message = tuple[int, str]
"""A game's message: (game id, surface)."""


@dataclass(frozen=True)
class ToShow:
    """One game's workspace and its undelivered messages."""

    workspace: WorkspaceId
    pending: list[plan.Pending] = field(default_factory=list)


# -- events ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Read:
    """What ``ReadGames`` found: each game read (those with nothing to show too); ``now`` the
    app's clock and ``at`` the monotonic clock at the read."""

    found: Mapping[int, ToShow]
    now: datetime
    at: float


@dataclass(frozen=True)
class Landed:
    """A call of the message has ended (taken and recorded, put off, or failed and handled)."""

    message: Message
    at: float


@dataclass(frozen=True)
class Kicked:
    """Steps gave these games something new: read them again."""

    games: frozenset[int]
    at: float


@dataclass(frozen=True)
class LetGo:
    """``Release`` is done; of its games, those with something due as they went."""

    still_due: frozenset[int]
    at: float


@dataclass(frozen=True)
class Tick:
    """The time ``Drain.wake_at`` named has come."""

    at: float


Event = Read | Landed | Kicked | LetGo | Tick


# -- actions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadGames:
    """Read the games: ``held`` those whose leases a step took for this drain (read without
    claiming them, while the lease is still this process's), ``claimed`` the rest (claimed and
    read in one transaction). A game another process holds is left out of the ``Read``."""

    held: tuple[int, ...]
    claimed: tuple[int, ...]


@dataclass(frozen=True)
class Send:
    """Carry out one post or update of a game's message; ``Landed`` when it has ended."""

    game_id: int
    workspace: WorkspaceId
    send: plan.Send

    @property
    def message(self) -> Message:
        return self.game_id, self.send.pending.surface


@dataclass(frozen=True)
class MarkShown:
    """Slack shows this version or a newer one already: the versions up to it are done."""

    game_id: int
    surface: str
    version: int


@dataclass(frozen=True)
class Release:
    """Let the games' leases go, in one transaction; ``LetGo`` when done."""

    games: tuple[int, ...]


Action = ReadGames | Send | MarkShown | Release


# -- the state ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Drain:
    """Where one drain of ``games`` stands."""

    games: frozenset[int]
    to_read: frozenset[int] = frozenset()
    leased: frozenset[int] = frozenset()
    """Of ``to_read``, those whose leases a step took: read without claiming them."""
    in_flight: frozenset[Message] = frozenset()
    held_back: frozenset[int] = frozenset()
    """Games with a newer version of a message that was in flight when read."""
    to_release: frozenset[int] = frozenset()
    release_by: float | None = None
    """When ``to_release`` is let go (the monotonic clock), unless nothing is in flight first."""
    waiting_for: type[Read] | type[LetGo] | None = None
    """A read or a release under way: no other begins until it is done."""

    @property
    def over(self) -> bool:
        """Nothing left to read, send or let go."""
        return not (self.to_read or self.to_release or self.in_flight or self.waiting_for)

    @property
    def wake_at(self) -> float | None:
        """When a ``Tick`` is due (None: only a landing or a kick moves the drain on)."""
        return self.release_by if self.to_release and self.waiting_for is None else None

    def games_in_flight(self) -> frozenset[int]:
        return frozenset(game_id for game_id, _ in self.in_flight)


def begin(
    games: frozenset[int], leased: frozenset[int] = frozenset()
) -> tuple[Drain, list[Action]]:
    """A drain of ``games``, ``leased`` those whose leases a step has just taken."""
    return _next(Drain(games, to_read=games, leased=leased & games), [])


def advance(drain: Drain, event: Event) -> tuple[Drain, list[Action]]:
    """The drain after ``event``, and what to do now."""
    actions: list[Action] = []
    match event:
        case Read(found, now, at):
            drain, actions = _read(drain, found, now, at)
        case Landed(message, at):
            game_id = message[0]
            drain = replace(drain, in_flight=drain.in_flight - {message})
            if game_id in drain.held_back:  # its newer version may go now
                drain = replace(
                    drain, held_back=drain.held_back - {game_id}, to_read=drain.to_read | {game_id}
                )
            elif game_id not in drain.games_in_flight():
                if not drain.to_release:  # those landing soon after are let go with it
                    drain = replace(drain, release_by=at + RELEASE_WITHIN_SECONDS)
                drain = replace(drain, to_release=drain.to_release | {game_id})
            drain = _release_if_due(drain, at, actions)
        case Kicked(games, at):
            drain = replace(drain, to_read=drain.to_read | (games & drain.games))
            drain = _release_if_due(drain, at, actions)
        case LetGo(still_due, at):
            drain = replace(drain, waiting_for=None, to_read=drain.to_read | still_due)
            drain = _release_if_due(drain, at, actions)
        case Tick(at):
            drain = _release_if_due(drain, at, actions)
    return _next(drain, actions)


def _read(
    drain: Drain, found: Mapping[int, ToShow], now: datetime, at: float
) -> tuple[Drain, list[Action]]:
    shown: list[Action] = []
    posts: list[Action] = []
    updates: list[Action] = []
    held_back = set(drain.held_back)
    in_flight = set(drain.in_flight)
    for game_id, to_show in found.items():
        sending = {surface for game, surface in drain.in_flight if game == game_id}
        for decision in plan.next_sends(to_show.pending, sending, now):
            match decision:
                case plan.InFlight():
                    held_back.add(game_id)
                case plan.AlreadyShown(surface, version):
                    shown.append(MarkShown(game_id, surface, version))
                case plan.Post() | plan.Update():
                    send = Send(game_id, to_show.workspace, decision)
                    (posts if isinstance(decision, plan.Post) else updates).append(send)
                    in_flight.add(send.message)
    drain = replace(
        drain,
        waiting_for=None,
        leased=frozenset(),
        held_back=frozenset(held_back),
        in_flight=frozenset(in_flight),
    )
    idle = set(found) - drain.games_in_flight()
    if idle:  # read, and nothing to send: let go at once
        drain = replace(drain, to_release=drain.to_release | idle, release_by=at)
    actions = [*shown, *posts, *updates]
    return _release_if_due(drain, at, actions), actions


def _release_if_due(drain: Drain, at: float, actions: list[Action]) -> Drain:
    """Let go of the games waiting for it, once nothing is in flight or their time has come;
    never one with a message in flight (it needs its lease still)."""
    if drain.waiting_for is not None or not drain.to_release:
        return drain
    if drain.in_flight and (drain.release_by is None or at < drain.release_by):
        return drain
    going = drain.to_release - drain.games_in_flight()
    drain = replace(drain, to_release=frozenset(), release_by=None)
    if going:
        actions.append(Release(tuple(sorted(going))))
        drain = replace(drain, waiting_for=LetGo)
    return drain


def _next(drain: Drain, actions: list[Action]) -> tuple[Drain, list[Action]]:
    """With nothing under way, the games to read are read now."""
    if drain.waiting_for is None and drain.to_read:
        held = drain.to_read & drain.leased
        actions.append(ReadGames(tuple(sorted(held)), tuple(sorted(drain.to_read - held))))
        drain = replace(drain, to_read=frozenset(), waiting_for=Read)
    return drain, actions
