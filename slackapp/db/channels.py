"""``/varulv settings``: a channel's settings (``slackapp.game.settings``), each in its column
of the same name, read and written alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, cast

from sqlalchemy import Connection, Table, bindparam, func, literal, select, text, union, union_all
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import outside_transaction
from slackapp.db.models import (
    OPEN_GAME_SQL,
    ChannelHome,
    ChannelSettings,
    Game,
    Seat,
    StandingTable,
)
from slackapp.game.machine import Lengths
from slackapp.game.places import holds_tables
from slackapp.game.settings import SETTINGS, ChannelChoice, choice_of, default_choice

CHANNELS = cast(Table, ChannelSettings.__table__)
_CHOICE = select(*(CHANNELS.c[setting.name] for setting in SETTINGS)).where(
    CHANNELS.c.team_id == bindparam("team_id"), CHANNELS.c.channel_id == bindparam("channel")
)
"""A plain statement: every ``/varulv``, its help and every new table read it, and the ORM's
identity map was most of what that read cost."""


HOMES = cast(Table, ChannelHome.__table__)
_HOME = select(HOMES.c.team_id).where(
    HOMES.c.enterprise_id == bindparam("enterprise"), HOMES.c.channel_id == bindparam("channel")
)
_ORGANISATION_TEAMS = union(
    select(HOMES.c.team_id).where(HOMES.c.enterprise_id == bindparam("enterprise")),
    select(StandingTable.team_id).where(StandingTable.enterprise_id == bindparam("enterprise")),
)
_KEEPERS = union_all(
    select(StandingTable.team_id, literal(0).label("rank")).where(
        StandingTable.enterprise_id == bindparam("enterprise"),
        StandingTable.channel_id == bindparam("channel"),
    ),
    select(Game.team_id, literal(1)).where(  # the open games' index: a handful of rows
        text(OPEN_GAME_SQL),
        Game.enterprise_id == bindparam("enterprise"),
        Game.channel_id == bindparam("channel"),
    ),
    select(CHANNELS.c.team_id, literal(2)).where(
        CHANNELS.c.channel_id == bindparam("channel"),
        CHANNELS.c.team_id.in_(_ORGANISATION_TEAMS.scalar_subquery()),
    ),
).subquery()
_CLAIM_HOME = (
    insert(HOMES)
    .from_select(
        ["enterprise_id", "channel_id", "team_id"],
        select(
            bindparam("enterprise"),
            bindparam("channel"),
            func.coalesce(
                select(_KEEPERS.c.team_id).order_by(_KEEPERS.c.rank).limit(1).scalar_subquery(),
                bindparam("asking"),
            ),
        ),
    )
    .on_conflict_do_nothing()
)
"""The channel's home, recorded once: a workspace of the organisation that already keeps
something of the channel's table (its standing table, its open game, its settings), else the
asker's."""


def home_of(
    sessions: sessionmaker[Session], enterprise_id: str, channel_id: str, asking_team: str
) -> str:
    """The workspace that keeps the channel's table where Varulv is installed on the whole
    organisation: the one recorded; else one that keeps part of it already (a table kept
    before the organisation's channels had homes); else the asker's, recorded now. Of two
    first askers at once, one is recorded and both are given it, so a shared channel never has
    two tables."""
    where = {"enterprise": enterprise_id, "channel": channel_id}
    with outside_transaction(sessions) as session:
        connection = session.connection()
        home = connection.scalar(_HOME, where)
        if home is None:
            connection.execute(_CLAIM_HOME, {**where, "asking": asking_team})
            home = connection.scalar(_HOME, where)
    return str(home)


def table_team(
    sessions: sessionmaker[Session],
    team_id: str,
    channel_id: str,
    enterprise_id: str | None,
    org_wide: bool,
) -> str:
    """The workspace whose table a request in a channel is about: the asker's own, or, where
    Varulv is installed on the whole organisation, the channel's home (``home_of``). A direct
    message holds no table, so it is given no home: a click on a person's private message
    with Varulv whose game is gone would otherwise record one naming that conversation."""
    if not (org_wide and enterprise_id and channel_id) or not holds_tables(channel_id, ""):
        return team_id
    return home_of(sessions, enterprise_id, channel_id, team_id)


def teams_of_organisation(
    sessions: sessionmaker[Session], enterprise_id: str, user_id: str
) -> list[str]:
    """The workspaces of the organisation that keep a channel's table, or a game that seats
    the person (one kept before the organisation's channels had homes)."""
    seated = (
        select(Game.team_id)
        .join(Seat, Seat.game_id == Game.id)
        .where(Seat.user_id == user_id, Game.enterprise_id == enterprise_id)
    )
    teams = union(_ORGANISATION_TEAMS, seated)
    with outside_transaction(sessions) as session:
        return sorted(
            session.scalars(select(teams.subquery().c.team_id), {"enterprise": enterprise_id})
        )


def choice_in(session: Session, team_id: str, channel_id: str, defaults: Lengths) -> ChannelChoice:
    """The channel's choice, read on the session's connection (in its transaction, if any)."""
    return _choice(session.connection(), team_id, channel_id, defaults)


def _choice(
    connection: Connection, team_id: str, channel_id: str, defaults: Lengths
) -> ChannelChoice:
    found = {"team_id": team_id, "channel": channel_id}
    return choice_from(connection.execute(_CHOICE, found).mappings().first(), defaults)


def choice_from(row: Mapping[Any, Any] | None, defaults: Lengths) -> ChannelChoice:
    """The channel's choice from its settings row (each setting under its name), or the
    defaults with the operator's lengths when it has none."""
    if row is None:
        return default_choice(asdict(defaults))
    return choice_of({setting.name: setting.read(row[setting.name]) for setting in SETTINGS})


def lock_channel(session: Session, team_id: str, channel_id: str) -> None:
    """Hold the channel's lock until the transaction ends: every change to who may do what in
    a channel (its settings, openness, standing table) and every stop decides under it, on
    facts read after it was granted, so none is decided on facts another is changing."""
    key = func.hashtextextended(f"varulv channel {team_id} {channel_id}", 0)
    session.execute(select(func.pg_advisory_xact_lock(key)))


def open_to_everyone(session: Session, team_id: str, channel_id: str) -> bool:
    """Whether an admin opened the channel's table to everyone (no row: not open)."""
    row = session.get(ChannelSettings, (team_id, channel_id))
    return row is not None and row.open_to_everyone


def channel_choice(
    sessions: sessionmaker[Session], team_id: str, channel_id: str, defaults: Lengths
) -> ChannelChoice:
    """The channel's choice, read in one statement outside any transaction."""
    with outside_transaction(sessions) as session:
        return _choice(session.connection(), team_id, channel_id, defaults)


def write_choice(
    session: Session, team_id: str, channel_id: str, user_id: str, choice: ChannelChoice
) -> None:
    """Store the channel's settings in the session's transaction (the caller holds the
    channel's lock and has decided the permission on what it read under it); the next game to
    open there uses them. A setting the choice leaves None stays as it was."""
    values: dict[str, object] = {
        setting.name: setting.stored(choice.value(setting))
        for setting in SETTINGS
        if choice.value(setting) is not None
    }
    values["updated_by"] = user_id
    session.execute(
        insert(ChannelSettings)
        .values(team_id=team_id, channel_id=channel_id, **values)
        .on_conflict_do_update(
            index_elements=[ChannelSettings.team_id, ChannelSettings.channel_id],
            # ON CONFLICT skips the column's onupdate, so the time is set here.
            set_={**values, "updated_at": func.now()},
        )
    )
