"""The game rows: their lock, their queries, and the phase machine's state read from and
written back to them. Seats, ballots and scores stay rows of their own, so the invariants
(one open game per channel, one seat per person, one ballot per seat) stay constraints.

A step holds its game's row lock from the read to the commit, so the step's own reads and
writes are plain SQL statements (SQLAlchemy Core) over the tables, not ORM objects: the
unit of work's bookkeeping would be time every other click at the table waits for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar, cast

from sqlalchemy import (
    Connection,
    Select,
    Table,
    bindparam,
    delete,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from slackapp.db import journal
from slackapp.db.models import (
    NOBODY_TARGET,
    OPEN_GAME_SQL,
    Ballot,
    Game,
    Score,
    Seat,
    seat_key,
)
from slackapp.game import machine as m
from slackapp.game.cards import Card
from slackapp.game.codec import choice_from_json, choice_to_json
from slackapp.game.effects import Scored
from slackapp.game.lines import Language
from slackapp.game.referee import outcome_to_json
from slackapp.game.settings import KEPT, Kept

T = TypeVar("T", bound=tuple[Any, ...])

GAMES = cast(Table, Game.__table__)
SEATS = cast(Table, Seat.__table__)
BALLOTS = cast(Table, Ballot.__table__)
SCORES = cast(Table, Score.__table__)

_GAME_COLUMNS = (
    GAMES.c.id,
    GAMES.c.team_id,
    GAMES.c.enterprise_id,
    GAMES.c.channel_id,
    GAMES.c.host_user_id,
    GAMES.c.seed,
    GAMES.c.phase,
    GAMES.c.center,
    GAMES.c.deadline,
    GAMES.c.night_seconds,
    GAMES.c.day_seconds,
    GAMES.c.vote_seconds,
    *(GAMES.c[setting.name] for setting in KEPT),
    GAMES.c.ended_by,
)
_SEATS_WITH_BALLOTS = (
    select(
        SEATS.c.id,
        SEATS.c.game_id,
        SEATS.c.position,
        SEATS.c.user_id,
        SEATS.c.bot_name,
        SEATS.c.display_name,
        SEATS.c.dealt,
        SEATS.c.dm_channel,
        SEATS.c.night_choice,
        SEATS.c.pending_target,
        SEATS.c.confirmed,
        SEATS.c.heard_enough,
        SEATS.c.heard_enough_at,
        SEATS.c.reachable,
        BALLOTS.c.target.label("ballot_target"),
        BALLOTS.c.clicked_at.label("ballot_clicked_at"),
    )
    .select_from(SEATS.outerjoin(BALLOTS, BALLOTS.c.seat_id == SEATS.c.id))
    .where(SEATS.c.game_id.in_(bindparam("game_ids", expanding=True)))
    .order_by(SEATS.c.game_id, SEATS.c.position)
)


@dataclass(frozen=True)
class StoredGame:
    """A game as its rows hold it: the machine's state, and what a step needs beside it."""

    state: m.GameState
    team_id: str
    enterprise_id: str | None
    """The Enterprise Grid organisation of the workspace, when Slack named one."""
    seat_ids: Mapping[str, int] = field(default_factory=dict)
    """Each seat's row, by seat key."""
    dm_channels: Mapping[str, str | None] = field(default_factory=dict)
    """Each seat's private message channel, once opened."""

    @property
    def id(self) -> int:
        return self.state.id

    @property
    def channel_id(self) -> str:
        return self.state.channel

    @property
    def language(self) -> str:
        return self.state.language.value


def lock(connection: Connection, game_id: int, skip_locked: bool = False) -> StoredGame | None:
    """The game, its row locked until the transaction ends (``FOR NO KEY UPDATE``: a step
    never changes a game's id, so the rows that refer to it are written meanwhile without
    waiting for the step).

    Two statements: the lock, then the seats with their ballots. The seats must be read by a
    statement begun after the lock was granted, or a step that waited for it would see them
    as they were before the step it waited for.

    ``skip_locked``: None at once if another transaction holds the lock, instead of waiting.
    """
    locked = _games(connection, _game_query().where(GAMES.c.id == game_id), skip_locked)
    return locked[0] if locked else None


def lock_due(connection: Connection, at: datetime, limit: int) -> list[StoredGame]:
    """Up to ``limit`` of the oldest open games whose deadline has passed at ``at``, locked;
    those another transaction holds are passed over."""
    return _games(connection, due(_game_query(), at, limit), skip_locked=True)


def read(connection: Connection, game_id: int) -> StoredGame | None:
    """The game as committed, read without a lock (to prepare a step)."""
    found = _games(connection, _game_query().where(GAMES.c.id == game_id), skip_locked=None)
    return found[0] if found else None


def due(query: Select[T], at: datetime, limit: int) -> Select[T]:
    """The oldest ``limit`` open games whose deadline has passed at ``at``."""
    return (
        query.where(GAMES.c.phase.in_([phase.value for phase in m.TIMED_PHASES]))
        .where(GAMES.c.deadline <= at)
        .order_by(GAMES.c.deadline)
        .limit(limit)
    )


@dataclass(frozen=True)
class OpenRow:
    """An open game as its row says it plainly, for ending it without the machine: nothing of
    the machine's state is decoded (its cards, choices and ballots are not read), so a game
    whose state cannot be read is read so."""

    id: int
    team_id: str
    enterprise_id: str | None
    channel_id: str
    phase: m.Phase
    language: str
    """The words its messages are drawn in (English, should the row name no language known)."""
    dm_channels: Mapping[str, str | None]
    """The seated people Varulv still reaches privately, with their private message channel."""


LOCK_WAIT = timedelta(seconds=10)
"""How long :func:`lock_open_row` waits for another transaction's lock on a game with no
deadline named: far longer than any step holds it, and short enough that a transaction stuck
holding it fails the wait rather than hanging whoever asked."""


def lock_open_row(
    connection: Connection,
    game_id: int,
    deadline: datetime | None = None,
    at: datetime | None = None,
    wait: timedelta = LOCK_WAIT,
) -> OpenRow | None:
    """The game's row locked as a step locks it, if it is open.

    With ``deadline``: only if it is still at that deadline, passed at ``at`` (or by then), and
    not held by another transaction, which is not waited for; None if it moved on, ended, or is
    held. Without: the game in any open phase, its lock waited for as a step waits, but for
    ``wait`` at most (the transaction's ``lock_timeout``), past which PostgreSQL's
    ``lock_not_available`` is raised; None if there is no such game or it has ended."""
    plain: Select[Any] = select(
        GAMES.c.id,
        GAMES.c.team_id,
        GAMES.c.enterprise_id,
        GAMES.c.channel_id,
        GAMES.c.phase,
        GAMES.c.language,
    ).where(GAMES.c.id == game_id)
    if deadline is not None:
        found = due(plain.where(GAMES.c.deadline == deadline), at or deadline, 1)
        locked = found.with_for_update(skip_locked=True, key_share=True)
    else:
        connection.execute(
            text("SELECT set_config('lock_timeout', :wait, true)"),
            {"wait": f"{max(1, math.ceil(wait.total_seconds() * 1000))}ms"},  # 0: no bound
        )
        found = plain.where(GAMES.c.phase.in_([phase.value for phase in m.OPEN_PHASES]))
        locked = found.with_for_update(key_share=True)
    row = connection.execute(locked).first()
    if row is None:
        return None
    people = connection.execute(
        select(SEATS.c.user_id, SEATS.c.dm_channel)
        .where(
            SEATS.c.game_id == game_id,
            SEATS.c.user_id.is_not(None),
            SEATS.c.dm_channel.is_not(None),
            SEATS.c.reachable,
        )
        .order_by(SEATS.c.position)
    ).all()
    known = {language.value for language in Language}
    return OpenRow(
        id=row.id,
        team_id=row.team_id,
        enterprise_id=row.enterprise_id,
        channel_id=row.channel_id,
        phase=m.Phase(row.phase),
        language=row.language if row.language in known else Language.ENGLISH.value,
        dm_channels={user: channel for user, channel in people},
    )


def end_for_fault(session: Session, game: OpenRow, phase: m.Phase) -> None:
    """End the game locked by :func:`lock_open_row` in ``phase``, with no deadline; the phase
    change is logged once the session's transaction commits."""
    session.connection().execute(
        update(GAMES).where(GAMES.c.id == game.id).values(phase=phase.value, deadline=None)
    )
    change = journal.PhaseChange(
        game.id, game.team_id, game.channel_id, game.phase.value, phase.value
    )
    journal.note(session, [change])


@dataclass(frozen=True)
class Whereabouts:
    """Where a game is, and its phase, read without a lock."""

    team_id: str
    channel_id: str
    phase: m.Phase


def whereabouts(connection: Connection, game_id: int) -> Whereabouts | None:
    """Where the game is and its phase, as committed; None if there is no such game."""
    row = connection.execute(
        select(GAMES.c.team_id, GAMES.c.channel_id, GAMES.c.phase).where(GAMES.c.id == game_id)
    ).first()
    return None if row is None else Whereabouts(row.team_id, row.channel_id, m.Phase(row.phase))


def _game_query() -> Select[Any]:
    return select(*_GAME_COLUMNS)


def _games(
    connection: Connection, query: Select[Any], skip_locked: bool | None
) -> list[StoredGame]:
    """The games ``query`` finds, locked unless ``skip_locked`` is None, with their seats."""
    if skip_locked is not None:
        query = query.with_for_update(skip_locked=skip_locked, key_share=True)
    rows = connection.execute(query).all()
    if not rows:
        return []
    seats: dict[int, list[Any]] = {row.id: [] for row in rows}
    for seat in connection.execute(_SEATS_WITH_BALLOTS, {"game_ids": list(seats)}):
        seats[seat.game_id].append(seat)
    return [
        StoredGame(
            state=_game_state(
                row, [_seat_state(s, s.ballot_target, s.ballot_clicked_at) for s in seats[row.id]]
            ),
            team_id=row.team_id,
            enterprise_id=row.enterprise_id,
            seat_ids={_key(seat): seat.id for seat in seats[row.id]},
            dm_channels={_key(seat): seat.dm_channel for seat in seats[row.id]},
        )
        for row in rows
    ]


@dataclass(frozen=True)
class NewGame:
    """A game row just inserted, as the step that opened it knows it: what the machine's opening
    state and the outbox need, with no ORM object to track and flush."""

    id: int
    team_id: str
    enterprise_id: str | None
    channel_id: str
    host_user_id: str
    seed: int
    night_seconds: int
    day_seconds: int
    vote_seconds: int
    kept: Kept
    """The channel's settings the game keeps, each written to its column of the same name."""
    phase: str = m.Phase.LOBBY.value
    center: list[str] | None = None
    deadline: datetime | None = None
    ended_by: str | None = None

    @property
    def dm_channels(self) -> dict[str, str | None]:
        """No seat has a private message channel yet."""
        return {}

    @property
    def language(self) -> str:
        """The words its messages are drawn in."""
        return self.kept.language.value

    def columns(self) -> dict[str, Any]:
        """The row's columns, as a statement writes them."""
        plain = {name: getattr(self, name) for name in _NEW_GAME_FIELDS}
        return plain | kept_columns(self.kept)


_NEW_GAME_FIELDS = [f.name for f in fields(NewGame) if f.name != "kept"]
NEW_GAME_COLUMNS = (*_NEW_GAME_FIELDS, *(setting.name for setting in KEPT))
"""The columns of a new game's row, as :meth:`NewGame.columns` names them."""


def kept_columns(kept: Kept) -> dict[str, Any]:
    """The settings a game keeps as its ``games`` columns hold them."""
    return {setting.name: setting.stored(kept.value(setting)) for setting in KEPT}


def kept_in(game: Any) -> Kept:
    """The settings a game keeps, from its row (a ``Game``, a row of its columns, or a
    ``NewGame``)."""
    if isinstance(game, NewGame):
        return game.kept
    return Kept(**{setting.name: setting.read(getattr(game, setting.name)) for setting in KEPT})


_NEW_GAME = (
    insert(GAMES)
    .on_conflict_do_nothing(
        index_elements=[GAMES.c.team_id, GAMES.c.channel_id], index_where=text(OPEN_GAME_SQL)
    )
    .returning(GAMES.c.id)
)
"""Built once: building and compiling the statement anew was most of what an insert cost."""


def insert_new(connection: Connection, game: dict[str, Any], kept: Kept) -> NewGame | None:
    """Insert a game row in its lobby with ``game``'s columns and the settings it ``kept``;
    the row as inserted, or None if the channel has an open game (the one-open-game-per-channel
    index: a table opening in another transaction is waited for). One statement, so the usual
    ``/varulv`` does not first ask whether the channel is free."""
    game_id = connection.execute(_NEW_GAME, game | kept_columns(kept)).scalar_one_or_none()
    if game_id is None:
        return None
    plain = {name: value for name, value in game.items() if name != "opened_by_trigger"}
    return NewGame(id=game_id, kept=kept, **plain)


def rehost(connection: Connection, game_id: int, host: str) -> None:
    connection.execute(update(GAMES).where(GAMES.c.id == game_id).values(host_user_id=host))


def store_new(session: Session, game: Game | NewGame, opened: m.GameState) -> None:
    """Write the machine's opening state over a game row that was just inserted; the table's
    opening is logged once it commits."""
    opening = journal.PhaseChange(game.id, game.team_id, game.channel_id, None, opened.phase.value)
    changes = Changes(phases=[opening])
    changes.step(StoredGame(_game_state(game, ()), game.team_id, game.enterprise_id), opened)
    changes.write(session)


def opening_rows(game: NewGame, opened: m.GameState) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The machine's opening state as a new game row's fields and its seats' rows, for a
    table written in one statement (``slackapp.services.opening``)."""
    changes = Changes()
    changes.step(StoredGame(_game_state(game, ()), game.team_id, game.enterprise_id), opened)
    return _game_fields(opened), changes.seats_new


def open_in(session: Session, team_id: str, channel_id: str) -> Game | None:
    """The channel's open game, if any."""
    return session.scalars(
        select(Game).where(
            Game.team_id == team_id,
            Game.channel_id == channel_id,
            Game.phase.in_([phase.value for phase in m.OPEN_PHASES]),
        )
    ).one_or_none()


def state_of(game: Game) -> m.GameState:
    """The machine's state of a game, read from its ORM objects."""
    return _game_state(
        game,
        [
            _seat_state(
                seat,
                None if seat.ballot is None else seat.ballot.target,
                None if seat.ballot is None else seat.ballot.clicked_at,
            )
            for seat in game.seats
        ],
    )


def _key(seat: Any) -> str:
    return seat_key(seat.user_id, seat.bot_name)


def _game_state(game: Any, seats: Sequence[m.SeatState]) -> m.GameState:
    """A game row (a ``Game``, or a row of its columns) and its seats as the machine's state."""
    center = None
    if game.center is not None:
        left, right = (Card(card) for card in game.center)
        center = (left, right)
    return m.GameState(
        id=game.id,
        channel=game.channel_id,
        host=game.host_user_id,
        seed=game.seed,
        lengths=m.Lengths(game.night_seconds, game.day_seconds, game.vote_seconds),
        kept=kept_in(game),
        phase=m.Phase(game.phase),
        seats=tuple(seats),
        center=center,
        deadline=game.deadline,
        ended_by=game.ended_by,
    )


def _seat_state(
    seat: Any, ballot_target: str | None, ballot_clicked_at: Decimal | None
) -> m.SeatState:
    """A seat row (a ``Seat``, or a row of its columns) and its ballot as the machine's seat."""
    ballot = None
    if ballot_target is not None:
        target = None if ballot_target == NOBODY_TARGET else ballot_target
        ballot = m.Ballot(target, ballot_clicked_at)
    return m.SeatState(
        key=_key(seat),
        name=seat.display_name,
        is_bot=seat.user_id is None,
        position=seat.position,
        dealt=None if seat.dealt is None else Card(seat.dealt),
        choice=None if seat.night_choice is None else choice_from_json(seat.night_choice),
        pending=seat.pending_target,
        confirmed=seat.confirmed,
        heard_enough=seat.heard_enough,
        heard_enough_at=seat.heard_enough_at,
        ballot=ballot,
        reachable=seat.reachable,
    )


# -- writing a step back -----------------------------------------------------------------------


# Each sets the columns its parameters name (the same for every row of one statement).
_SEAT_CHANGED = update(SEATS).where(SEATS.c.id == bindparam("seat_id"))
_GAME_CHANGED = update(GAMES).where(GAMES.c.id == bindparam("game_id"))
_BALLOT_CAST = insert(BALLOTS)
_BALLOT_CAST = _BALLOT_CAST.on_conflict_do_update(
    index_elements=[BALLOTS.c.seat_id],
    set_={"target": _BALLOT_CAST.excluded.target, "clicked_at": _BALLOT_CAST.excluded.clicked_at},
)
_SCORES_ADDED = insert(SCORES)
_SCORES_ADDED = _SCORES_ADDED.on_conflict_do_update(
    index_elements=[SCORES.c.team_id, SCORES.c.channel_id, SCORES.c.user_id],
    set_={
        "games": SCORES.c.games + _SCORES_ADDED.excluded.games,
        "wins": SCORES.c.wins + _SCORES_ADDED.excluded.wins,
        "points": SCORES.c.points + _SCORES_ADDED.excluded.points,
    },
)


@dataclass
class Changes:
    """What steps changed in their games' rows, gathered so that each kind of change goes out
    as one statement for every game of a batch; only what changed is written."""

    games: list[dict[str, Any]] = field(default_factory=list)
    seats_gone: list[int] = field(default_factory=list)
    seats_new: list[dict[str, Any]] = field(default_factory=list)
    seats_changed: list[dict[str, Any]] = field(default_factory=list)
    ballots_gone: list[int] = field(default_factory=list)
    ballots_cast: list[tuple[int, int, m.SeatState]] = field(default_factory=list)
    """(seat row, game, seat) whose ballot is new or changed: a seat already at the table (the
    machine takes ballots only in the vote, and seats nobody new then)."""
    decided: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)
    phases: list[journal.PhaseChange] = field(default_factory=list)

    def step(
        self,
        game: StoredGame,
        after: m.GameState,
        dm_channels: Mapping[str, str] | None = None,
    ) -> StoredGame:
        """Write ``after`` over ``game``'s rows, with the seats' newly opened ``dm_channels``;
        the game as it then stands (a new seat's row id is not known yet)."""
        before = game.state
        if _game_fields(before) != _game_fields(after):
            self.games.append({"game_id": game.id, **_game_fields(after)})
        if before.phase != after.phase:
            self.phases.append(
                journal.PhaseChange(
                    game.id, game.team_id, game.channel_id, before.phase.value, after.phase.value
                )
            )
        opened = {**game.dm_channels, **(dm_channels or {})}
        wanted = {seat.key for seat in after.seats}
        self.seats_gone += [game.seat_ids[s.key] for s in before.seats if s.key not in wanted]
        was = {seat.key: seat for seat in before.seats}
        for seat in after.seats:
            old = was.get(seat.key)
            if old is None:
                self.seats_new.append(
                    {
                        "game_id": game.id,
                        "user_id": None if seat.is_bot else seat.key,
                        "bot_name": seat.key if seat.is_bot else None,
                        **_seat_fields(seat, opened.get(seat.key)),
                    }
                )
            elif replace(old, ballot=None) != replace(seat, ballot=None) or (
                opened.get(seat.key) != game.dm_channels.get(seat.key)
            ):
                fields = _seat_fields(seat, opened.get(seat.key))
                self.seats_changed.append({"seat_id": game.seat_ids[seat.key], **fields})
            if old is not None and old.ballot is not None and seat.ballot is None:
                self.ballots_gone.append(game.seat_ids[seat.key])
            elif seat.ballot is not None and (old is None or old.ballot != seat.ballot):
                self.ballots_cast.append((game.seat_ids[seat.key], game.id, seat))
        return replace(game, state=after, dm_channels=opened)

    def decide(self, game: StoredGame, scored: Scored, at: datetime) -> None:
        """Keep the decided game's outcome, and add it to each person's record in the channel
        (bots keep no record)."""
        self.decided.append(
            {"game_id": game.id, "outcome": outcome_to_json(scored.outcome), "finished_at": at}
        )
        people = {seat.key for seat in game.state.seats if not seat.is_bot}
        self.scores += [
            {
                "team_id": game.team_id,
                "channel_id": game.channel_id,
                "user_id": award.key,
                "games": 1,
                "wins": int(award.won),
                "points": award.points,
            }
            for award in scored.awards
            if award.key in people
        ]

    def write(self, session: Session) -> None:
        """Every change gathered, a statement for each kind, in the session's transaction;
        the phase changes are logged once it commits."""
        journal.note(session, self.phases)
        connection = session.connection()
        if self.games:
            connection.execute(_GAME_CHANGED, self.games)
        if self.seats_gone:  # a freed position may be taken again by a new seat
            connection.execute(delete(SEATS).where(SEATS.c.id.in_(self.seats_gone)))
        if self.seats_new:
            connection.execute(insert(SEATS), self.seats_new)
        if self.seats_changed:
            connection.execute(_SEAT_CHANGED, self.seats_changed)
        if self.ballots_gone:
            connection.execute(delete(BALLOTS).where(BALLOTS.c.seat_id.in_(self.ballots_gone)))
        if self.ballots_cast:
            connection.execute(
                _BALLOT_CAST,
                [
                    {
                        "seat_id": seat_id,
                        "game_id": game_id,
                        "voter_key": seat.key,
                        "target": _target(seat.ballot),
                        "clicked_at": None if seat.ballot is None else seat.ballot.clicked_at,
                    }
                    for seat_id, game_id, seat in self.ballots_cast
                ],
            )
        if self.decided:
            connection.execute(_GAME_CHANGED, self.decided)
        if self.scores:  # one statement for every table, under the locks
            connection.execute(_SCORES_ADDED, self.scores)


def _target(ballot: m.Ballot | None) -> str:
    return NOBODY_TARGET if ballot is None or ballot.target is None else ballot.target


def _game_fields(state: m.GameState) -> dict[str, Any]:
    return {
        "phase": state.phase.value,
        "deadline": state.deadline,
        "center": None if state.center is None else [card.value for card in state.center],
        "ended_by": state.ended_by,
    }


def _seat_fields(seat: m.SeatState, dm_channel: str | None) -> dict[str, Any]:
    return {
        "position": seat.position,
        "display_name": seat.name,  # a bot takes another name when a namesake sits down
        "dealt": None if seat.dealt is None else seat.dealt.value,
        "dm_channel": dm_channel,
        "night_choice": None if seat.choice is None else choice_to_json(seat.choice),
        "pending_target": seat.pending,
        "confirmed": seat.confirmed,
        "heard_enough": seat.heard_enough,
        "heard_enough_at": seat.heard_enough_at,
        "reachable": seat.reachable,
    }
