"""Erasing data: a person who asks Varulv to forget them (``/varulv forget me``), and a whole
workspace after it removed Varulv (``varulv erase-workspace``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    CursorResult,
    Executable,
    Select,
    Table,
    delete,
    func,
    or_,
    select,
    union,
    update,
)
from sqlalchemy.orm import Session, selectinload

from slackapp.db.models import (
    Base,
    ChannelHome,
    ChannelSettings,
    Game,
    OutboxEntry,
    PacingBucket,
    Person,
    Regular,
    ReinstallNeeded,
    Score,
    SeasonWrapUp,
    Seat,
    SlackMessage,
    StandingTable,
)
from slackapp.db.slack_tables import BOTS_TABLE, INSTALLATIONS_TABLE, slack_metadata
from slackapp.db.streams import delete_streams, of_notices
from slackapp.game import machine as m
from slackapp.game.effects import dm_surface, over_surface
from slackapp.game.erasure import Forgotten, StillSeated
from slackapp.game.lines import Language

ERASED = "erased"
"""Who did something (hosted, stopped, changed a setting) once that person is forgotten."""


def forget_me(
    session: Session, teams: Sequence[str], user_id: str, erased_name: Callable[[Language], str]
) -> Forgotten | StillSeated:
    """``/varulv forget me``: erase the person from what ``teams`` keep (see :func:`forget`),
    unless a game that has not ended seats them; then nothing is erased."""
    running = running_games(session, teams, user_id)
    if running:
        return StillSeated(tuple(sorted(set(running))))
    return forget(session, teams, user_id, erased_name)


def _games_seating(teams: Sequence[str], user_id: str, running: bool) -> Select[Game]:
    """The workspaces' running (or ended) games that seat the person, to be locked."""
    open_phases = [phase.value for phase in m.OPEN_PHASES]
    phase = Game.phase.in_(open_phases) if running else Game.phase.not_in(open_phases)
    return (
        select(Game)
        .join(Seat)
        .where(Game.team_id.in_(teams), phase, Seat.user_id == user_id)
        .with_for_update(of=Game, key_share=True)  # as a step locks it
    )


def running_games(session: Session, teams: Sequence[str], user_id: str) -> list[str]:
    """The channels whose running game seats the person (locked until the transaction ends)."""
    return [game.channel_id for game in session.scalars(_games_seating(teams, user_id, True))]


def forget(
    session: Session, teams: Sequence[str], user_id: str, erased_name: Callable[[Language], str]
) -> Forgotten:
    """Erase the person's scores, names and marks in the workspaces ``teams`` (their own, and
    in an organisation-wide install every one keeping a table), and make them an anonymous
    seat in every game that ended, named ``erased_name`` of the game's language; the games'
    outcomes stay as they were decided."""
    ended = session.scalars(
        _games_seating(teams, user_id, False).options(
            selectinload(Game.seats).selectinload(Seat.ballot)
        )
    ).all()
    for game in ended:
        _anonymise(session, game, user_id, erased_name(Language(game.language)))
    for column in (Game.host_user_id, Game.ended_by):  # a running lobby keeps its host
        session.execute(
            update(Game)
            .where(
                Game.team_id.in_(teams),
                Game.phase.not_in([phase.value for phase in m.OPEN_PHASES]),
                column == user_id,
            )
            .values({column.key: ERASED})
        )
    session.execute(
        update(ChannelSettings)
        .where(ChannelSettings.team_id.in_(teams), ChannelSettings.updated_by == user_id)
        .values(updated_by=ERASED)
    )
    _erase_from_notices(session, teams, user_id)
    scores = _count(
        session, delete(Score).where(Score.team_id.in_(teams), Score.user_id == user_id)
    )
    regulars = _count(
        session, delete(Regular).where(Regular.team_id.in_(teams), Regular.user_id == user_id)
    )
    name = _count(
        session, delete(Person).where(Person.team_id.in_(teams), Person.user_id == user_id)
    )
    return Forgotten(scores, len(ended), regulars, bool(name))


def _erase_from_notices(session: Session, teams: Sequence[str], user_id: str) -> None:
    """A channel's notice names who changed its settings or schedule, in its words and as the
    one to tell should the channel refuse it; the word they were told then is theirs alone."""
    notice = of_notices(teams)
    mention = f"<@{user_id}>"
    session.execute(
        update(OutboxEntry)
        .where(
            OutboxEntry.team_id.in_(teams),
            OutboxEntry.text.contains(mention, autoescape=True),
            notice,
        )
        .values(text=func.replace(OutboxEntry.text, mention, ERASED))
    )
    mine = (OutboxEntry.team_id.in_(teams), OutboxEntry.user_id == user_id, notice)
    session.execute(
        update(OutboxEntry).where(*mine, OutboxEntry.channel.is_not(None)).values(user_id=None)
    )
    told = select(OutboxEntry.stream).where(*mine, OutboxEntry.channel.is_(None))
    session.execute(
        delete(SlackMessage).where(
            SlackMessage.stream.in_(told),
            SlackMessage.surface.startswith(f"tell:{user_id}:", autoescape=True),
        )
    )
    session.execute(delete(OutboxEntry).where(*mine, OutboxEntry.channel.is_(None)))


def _anonymise(session: Session, game: Game, user_id: str, erased_name: str) -> None:
    """In one ended game: the person's seat key becomes ``erased-<seat number>`` wherever the
    game names it (seats, night choices, ballots, outcome, what was shown), and their name
    ``erased_name``."""
    seat = next(seat for seat in game.seats if seat.user_id == user_id)
    key = m.erased_key(seat.position)
    name = seat.display_name

    def swap(value: Any) -> Any:  # the seat's key, wherever the game's JSON names it
        return _walk(value, lambda s: key if s == user_id else s, keys=True)

    for each in game.seats:
        each.night_choice = swap(each.night_choice)
        if each.pending_target == user_id:
            each.pending_target = key
        if each.ballot is not None:
            each.ballot.voter_key = swap(each.ballot.voter_key)
            each.ballot.target = swap(each.ballot.target)
    seat.user_id, seat.display_name, seat.dm_channel = key, erased_name, None
    game.outcome = swap(game.outcome)
    named = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)") if name else None

    def shown(text: str) -> str:  # what was shown: mentions, button values, labels
        text = text.replace(f"<@{user_id}>", erased_name).replace(user_id, key)
        return named.sub(erased_name, text) if named else text

    private = (dm_surface(user_id), over_surface(user_id))
    entries = session.scalars(select(OutboxEntry).where(OutboxEntry.stream == game.id))
    for entry in entries:
        entry.text = shown(entry.text)
        if entry.blocks is not None:
            entry.blocks = _walk(entry.blocks, shown)
        if entry.user_id == user_id:
            entry.user_id = key
        if entry.surface.startswith(f"tell:{user_id}:") or entry.surface in private:
            entry.surface = entry.surface.replace(user_id, key, 1)
            entry.channel = None
            entry.user_id = key
    session.execute(
        delete(SlackMessage).where(
            SlackMessage.stream == game.id, SlackMessage.surface.in_(private)
        )
    )


def _count(session: Session, statement: Executable) -> int:
    """How many rows an UPDATE or DELETE changed."""
    result = session.execute(statement)
    return int(cast(CursorResult[Any], result).rowcount)


def _walk(value: Any, change: Callable[[str], str], keys: bool = False) -> Any:
    """``value`` (JSON) with ``change`` applied to every string in it (and to its objects'
    keys, with ``keys``)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_walk(item, change, keys) for item in value]
    if isinstance(value, dict):
        return {(change(k) if keys else k): _walk(item, change, keys) for k, item in value.items()}
    return value


# --- a whole workspace ------------------------------------------------------------------------

TEAM_TABLES: tuple[type[Base], ...] = (
    Score,
    ChannelHome,
    ChannelSettings,
    Person,
    Regular,
    SeasonWrapUp,
    StandingTable,
    ReinstallNeeded,
)
"""Every table of ours keyed by the workspace; a game's seats and ballots go with it (their
foreign keys cascade), its outbox stream and the workspace's notices by ``delete_streams``."""


class Installed(Enum):
    """Why a workspace counts as still having Varulv (many-workspace mode)."""

    WORKSPACE = "workspace"
    """The installation store holds the workspace's own installation."""
    ORGANISATION = "organisation"
    """It holds an org-wide installation of the Enterprise Grid organisation that the
    workspace's games or standing tables were kept under."""
    CANNOT_TELL = "cannot tell"
    """It holds an org-wide installation, and nothing kept names the workspace's organisation
    (its games pruned, or none played): it may be one of its workspaces."""


def installed(session: Session, team_id: str) -> Installed | None:
    """Whether the installation store still holds the workspace, and how; None: it does not."""
    organisations = union(
        select(Game.enterprise_id).where(Game.team_id == team_id),
        select(StandingTable.enterprise_id).where(StandingTable.team_id == team_id),
        select(ChannelHome.enterprise_id).where(ChannelHome.team_id == team_id),
    ).subquery()
    known = select(organisations.c.enterprise_id).where(organisations.c.enterprise_id.is_not(None))
    tables = _installation_tables()
    if any(_count_where(session, table, table.c.team_id == team_id) for table in tables):
        return Installed.WORKSPACE
    org_wide = [table.c.is_enterprise_install.is_(True) for table in tables]
    if any(
        _count_where(session, table, wide & table.c.enterprise_id.in_(known))
        for table, wide in zip(tables, org_wide, strict=True)
    ):
        return Installed.ORGANISATION
    if session.scalar(select(func.count()).select_from(known.subquery())):
        return None  # its organisation is known, and has no installation
    if any(
        _count_where(session, table, wide) for table, wide in zip(tables, org_wide, strict=True)
    ):
        return Installed.CANNOT_TELL
    return None


def _count_where(session: Session, table: Table, where: ColumnElement[bool]) -> int:
    return session.scalar(select(func.count()).select_from(table).where(where)) or 0


def erase_workspace(session: Session, team_id: str) -> dict[str, int]:
    """Delete every row about the workspace; how many from each table."""
    erased: dict[str, int] = {}
    erased[PacingBucket.__tablename__] = _count(session, _buckets_of(session, team_id))
    for model in TEAM_TABLES:
        table = model.__table__
        assert isinstance(table, Table)
        erased[table.name] = _count(session, delete(table).where(table.c.team_id == team_id))
    games = select(Game.id).where(Game.team_id == team_id)
    # Locked first, as a step locks a game: a step under way commits its outbox rows before
    # they are deleted with the games' streams, and none begins until the games are gone.
    session.execute(games.order_by(Game.id).with_for_update(key_share=True))
    notices = select(OutboxEntry.stream).where(OutboxEntry.team_id == team_id)
    erased |= delete_streams(session, union(games, notices))
    erased[Game.__tablename__] = _count(session, delete(Game).where(Game.team_id == team_id))
    for table in _installation_tables():
        erased[table.name] = _count(session, delete(table).where(table.c.team_id == team_id))
    return erased


def _buckets_of(session: Session, team_id: str) -> Executable:
    """The rate limits' buckets keyed by the workspace or by one of its channels (their keys
    end ``:<id>``); a bucket deleted only lets a burst go again."""
    channels = session.scalars(
        union(
            select(Game.channel_id).where(Game.team_id == team_id),
            select(ChannelSettings.channel_id).where(ChannelSettings.team_id == team_id),
            select(StandingTable.channel_id).where(StandingTable.team_id == team_id),
        )
    ).all()
    return delete(PacingBucket).where(
        or_(
            PacingBucket.key.endswith(f":{team_id}", autoescape=True),
            *(PacingBucket.key.endswith(f":{channel}", autoescape=True) for channel in channels),
        )
    )


def _installation_tables() -> list[Table]:
    tables = slack_metadata().tables
    return [tables[INSTALLATIONS_TABLE], tables[BOTS_TABLE]]
