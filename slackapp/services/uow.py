"""The unit of work: one step of a game as one short transaction.

A step locks the game's row, applies the phase machine to its state and the event, stores the
new state and the effects to show (the outbox), takes the game's delivery lease when it has
something to show, and commits. No Web API call is made while the lock is held; the deliverer
shows the effects once the commit is done, and the person who acted gets the machine's answer.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from sqlalchemy import Connection
from sqlalchemy.orm import Session, sessionmaker

from slackapp import metrics
from slackapp.blocks.said import said
from slackapp.blocks.words import words
from slackapp.db import games, people
from slackapp.db.channels import choice_in
from slackapp.db.engine import transaction
from slackapp.db.games import NewGame, StoredGame
from slackapp.delivery.copies import Copy, adopt
from slackapp.delivery.deliverer import Taken
from slackapp.delivery.drain import ToShow
from slackapp.delivery.outbox import Row, answering, outbox_rows, write
from slackapp.game import faults
from slackapp.game import machine as m
from slackapp.game.effects import Scored
from slackapp.game.lines import Line, Message
from slackapp.game.settings import Kept, kept_of

DEADLINE_BATCH = 50
"""Due games stepped in one transaction: one commit for many, each lock held only that long."""


def utc_now() -> datetime:
    return datetime.now(UTC)


class Kick(Protocol):
    def kick(self, game_id: int) -> None: ...


Take = Callable[[Connection, list[int]], Taken]
"""In a step's transaction: take the games' delivery leases."""


@runtime_checkable
class HandsOver(Kick, Protocol):
    """A deliverer in this process: a step hands it what it committed, with no transaction
    between the commit and the first call to Slack (slackapp.delivery.deliverer)."""

    def take(self, connection: Connection, game_ids: list[int]) -> Taken: ...
    def new_lease(self, game_id: int) -> tuple[str, datetime]: ...
    def not_opened(self, game_id: int) -> None: ...
    def hand_over(self, taken: Taken, shown: Mapping[int, ToShow] | None = None) -> None: ...


@dataclass(frozen=True)
class Committed:
    game_id: int
    answer: str | None
    """The machine's answer, in the game's words."""
    deadline: datetime | None
    """The game's deadline, when this step set a new one."""
    shown: int
    """How many effects went into the outbox."""
    reason: Message | None = None
    """What the answer says, as data: nothing decides by comparing its words."""
    taken: Taken | None = None
    """The game's delivery lease, when the step's transaction took it."""
    deadline_gone: bool = False
    """The step took the game's deadline away (the game ended): its timer has nothing to do."""


class Belonging(Protocol):
    """A game, as far as which workspace it belongs to."""

    @property
    def team_id(self) -> str: ...
    @property
    def enterprise_id(self) -> str | None: ...


@dataclass(frozen=True)
class Workspace:
    """Where Slack signed a request from."""

    team_id: str
    enterprise_id: str | None = None
    """The Enterprise Grid organisation, when the workspace belongs to one."""
    org_wide: bool = False
    """Varulv is installed on the whole organisation (Slack's ``is_enterprise_install``)."""
    channel_id: str = ""
    """The channel the request came from: a game that no longer exists is answered in its
    language."""

    def owns(self, game: Belonging) -> bool:
        """Whether a request from here may act on ``game``: one from the game's own workspace
        (of the same organisation, when both name one), or, where Varulv is installed on the
        whole organisation, from any workspace of that organisation, since one installation
        serves them all and a channel may be shared between them. A person from another
        organisation in a Slack Connect channel may watch, but not play."""
        if game.enterprise_id and self.enterprise_id and game.enterprise_id != self.enterprise_id:
            return False
        if game.team_id == self.team_id:
            return True
        same_org = bool(game.enterprise_id) and game.enterprise_id == self.enterprise_id
        return self.org_wide and same_org


NameFor = Callable[[Connection, str, str, str], str]
"""The name a person sits down under, read in the step's transaction: (connection, team,
user, the handle their request carried)."""
Permit = Callable[[Session, StoredGame], str | None]
"""Whether an event may be applied to a game, decided on its locked row: None, or the
refusal to answer with."""


def kept_name(connection: Connection, team_id: str, user_id: str, handle: str) -> str:
    """The name kept for a person, however old (*Start* asks Slack again once it is stale, see
    slackapp.names), else the handle their request carried: sitting down asks Slack nothing."""
    known = people.known_in(connection, team_id, user_id)
    return handle if known is None else known.name


def new_game(
    session: Session,
    team_id: str,
    channel_id: str,
    host: str,
    lengths: m.Lengths,
    kept: Kept,
    enterprise_id: str | None = None,
    opened_by_trigger: str | None = None,
) -> NewGame | None:
    """A new game row in its lobby, with the settings it ``kept``, inserted for its id, or
    None if the channel has an open game (the one-open-game-per-channel index). Whatever is
    known of it goes into that one insert, since setting it afterwards costs an update; a
    plain statement, since the ORM's unit of work was a sixth of a ``/varulv`` step's time."""
    return games.insert_new(
        session.connection(),
        {
            "team_id": team_id,
            "enterprise_id": enterprise_id,
            "channel_id": channel_id,
            "host_user_id": host,
            "opened_by_trigger": opened_by_trigger,
            "phase": m.Phase.LOBBY.value,
            "seed": secrets.randbits(62),
            "night_seconds": lengths.night_seconds,
            "day_seconds": lengths.day_seconds,
            "vote_seconds": lengths.vote_seconds,
        },
        kept,
    )


def commit_step(
    sessions: sessionmaker[Session],
    game_id: int,
    event: m.Event,
    now: Callable[[], datetime] = utc_now,
    *,
    skip_locked: bool = False,
    dm_channels: dict[str, str] | None = None,
    asking: Workspace | None = None,
    clicked: Copy | None = None,
    take: Take | None = None,
    name_for: NameFor = kept_name,
    permit: Permit | None = None,
) -> Committed | None:
    """Apply ``event`` to the game in one transaction; None if there is no such game (or,
    with ``skip_locked``, another transaction holds it). ``dm_channels``: the people's private
    message channels, kept for the deliverer when the event starts the night. ``asking``: the
    workspace of the signed request, refused (nothing changes) unless it owns the game.
    ``clicked``: the copy of the game's message the click came from, made the message if it
    is a second copy the app did not record (see slackapp.delivery.copies).
    ``take``: given, a step with something to show takes its game's delivery lease too.
    ``name_for``: the name a person who joins sits down under. ``permit``: decides, with the
    game's row locked, whether the event may be applied at all (a refusal is the answer)."""
    with metrics.stepping(type(event).__name__), transaction(sessions) as session:
        connection = session.connection()
        game = games.lock(connection, game_id, skip_locked=skip_locked)
        if game is None:
            return None
        if asking is not None and not asking.owns(game):
            return Committed(
                game.id, in_words(game.state, Line(Message.ANOTHER_WORKSPACE)), None, 0
            )
        refused = None if permit is None else permit(session, game)
        if refused is not None:
            return Committed(game.id, refused, None, 0)
        adopted = None if clicked is None else adopt(connection, game.id, clicked)
        if isinstance(event, m.Join):  # the name kept for them, if Varulv has met them
            event = replace(event, name=name_for(connection, game.team_id, event.user, event.name))
        changes = games.Changes()
        before, done, game = _decide(changes, game, event, now(), dm_channels)
        changes.write(session)
        rows = outbox_rows(game, done.effects)
        if clicked is not None and adopted is not None and adopted.is_the_message:
            # the clicked message is redrawn through the click's answer
            answering(rows, clicked.surface, clicked.response_url, clicked.ts)
        write(connection, rows)
        shown = (0 if adopted is None else adopted.rows) + len(rows)
        taken = take(connection, [game.id]) if take is not None and shown else None
        return _committed(game.id, before, done, shown, taken)


def commit_due(
    sessions: sessionmaker[Session],
    now: Callable[[], datetime] = utc_now,
    limit: int = DEADLINE_BATCH,
    take: Take | None = None,
) -> tuple[list[Committed], Taken | None]:
    """Up to ``limit`` games whose deadline has passed, each stepped by the machine, in one
    transaction. A game another transaction holds is skipped: that step catches up with the
    clock itself, and a later batch finds the game if it is still due. ``take``: given, the
    delivery leases of the games with something to show are taken in it too."""
    with metrics.stepping("Deadline") as counted, transaction(sessions) as session:
        connection = session.connection()
        at = now()
        due = games.lock_due(connection, at, limit)
        counted(len(due))
        metrics.deadlines_late([game.state.deadline for game in due], at)
        changes = games.Changes()  # every game's changes of a kind in one statement
        stepped = [_decide(changes, game, m.Deadline(), at) for game in due]
        changes.write(session)
        done = []
        rows: list[Row] = []
        for before, after, game in stepped:
            shown = outbox_rows(game, after.effects)
            rows += shown
            done.append(_committed(game.id, before, after, len(shown)))
        write(connection, rows)  # every game's messages in one statement
        showing = [each.game_id for each in done if each.shown]
        taken = take(connection, showing) if take is not None and showing else None
        return done, taken


@dataclass(frozen=True)
class EndedForFault:
    """A game :func:`commit_give_up` ended."""

    game_id: int
    team_id: str
    channel_id: str
    phase: m.Phase
    """The phase it was in."""
    shown: int
    taken: Taken | None = None


def commit_give_up(
    sessions: sessionmaker[Session],
    game_id: int,
    deadline: datetime | None,
    at: datetime | None = None,
    take: Take | None = None,
    lock_wait: timedelta = games.LOCK_WAIT,
) -> EndedForFault | None:
    """End the game for a fault, without the machine (which may be what fails): one
    transaction that locks its row as a step does, writes the phase
    :func:`slackapp.game.faults.give_up` decides with no deadline left, and puts what it shows
    in the outbox. ``take``: as for :func:`commit_step`.

    With ``deadline``, the deadline whose step kept failing, passed at ``at``: None if the game
    moved on from it, or another transaction holds it (not waited for). With None (``varulv
    end-game``): the game in whatever open phase it is, its lock waited for up to
    ``lock_wait`` (past which PostgreSQL's ``lock_not_available`` is raised); None if there is
    no such game or it has ended."""
    with transaction(sessions) as session:
        connection = session.connection()
        game = games.lock_open_row(connection, game_id, deadline, at, lock_wait)
        if game is None:
            return None
        ended = faults.give_up(game.phase, game.channel_id, game.dm_channels)
        games.end_for_fault(session, game, ended.phase)
        rows = outbox_rows(game, ended.effects)
        write(connection, rows)
        taken = take(connection, [game.id]) if take is not None and rows else None
        return EndedForFault(game.id, game.team_id, game.channel_id, game.phase, len(rows), taken)


def _decide(
    changes: games.Changes,
    game: StoredGame,
    event: m.Event,
    at: datetime,
    dm_channels: dict[str, str] | None = None,
) -> tuple[m.GameState, m.Step, StoredGame]:
    """The machine's step for the game, its new state and scores added to ``changes``; the
    state before, and the game as it stands after the step."""
    before = game.state
    done = m.step(before, event, at)
    if done.state != before:
        night_began = before.phase == m.Phase.LOBBY and done.state.phase == m.Phase.NIGHT
        game = changes.step(game, done.state, dm_channels if night_began else None)
    for effect in done.effects:
        if isinstance(effect, Scored):
            changes.decide(game, effect, at)
    return before, done, game


def _committed(
    game_id: int, before: m.GameState, done: m.Step, shown: int, taken: Taken | None = None
) -> Committed:
    changed = done.state.deadline if done.state.deadline != before.deadline else None
    gone = before.deadline is not None and done.state.deadline is None
    line = done.answer
    if line is None:
        return Committed(game_id, None, changed, shown, taken=taken, deadline_gone=gone)
    answer = said(line, words(done.state.language))
    return Committed(game_id, answer, changed, shown, line.message, taken, gone)


def in_words(state: m.GameState, line: Line) -> str:
    """What the machine says of a game, in the game's words."""
    return said(line, words(state.language))


def new_table(
    session: Session,
    team_id: str,
    channel_id: str,
    defaults: m.Lengths,
    host: str,
    host_name: str,
    seat_host: bool = True,
    enterprise_id: str | None = None,
    opened_by_trigger: str | None = None,
) -> tuple[NewGame, m.Step] | None:
    """A table in the channel with its settings, stored, or None if the channel has one open
    (the one-open-game index); the caller enqueues the step's effects."""
    chosen = choice_in(session, team_id, channel_id, defaults)
    lengths = m.Lengths(chosen.night_seconds, chosen.day_seconds, chosen.vote_seconds)
    kept = kept_of(chosen)
    game = new_game(
        session, team_id, channel_id, host, lengths, kept, enterprise_id, opened_by_trigger
    )
    if game is None:
        return None
    opened = m.open_table(
        game.id,
        channel_id,
        host,
        host_name,
        game.seed,
        m.Lengths(game.night_seconds, game.day_seconds, game.vote_seconds),
        game.kept,
        seat_host=seat_host,
    )
    games.store_new(session, game, opened.state)
    return game, opened
