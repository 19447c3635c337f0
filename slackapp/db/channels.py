"""``/varulv settings``: a channel's settings (``slackapp.game.settings``), each in its column
of the same name, read and written alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, cast

from sqlalchemy import Connection, Table, bindparam, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import outside_transaction
from slackapp.db.models import ChannelHome, ChannelSettings
from slackapp.game.machine import Lengths
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


def home_of(
    sessions: sessionmaker[Session], enterprise_id: str, channel_id: str, asking_team: str
) -> str:
    """The workspace that keeps the channel's table where Varulv is installed on the whole
    organisation: the one recorded, else the asker's, recorded now. Of two first askers at
    once, one is recorded and both are given it, so a shared channel never has two tables."""
    where = {"enterprise": enterprise_id, "channel": channel_id}
    with outside_transaction(sessions) as session:
        connection = session.connection()
        home = connection.scalar(_HOME, where)
        if home is None:
            first = {"enterprise_id": enterprise_id, "channel_id": channel_id}
            connection.execute(
                insert(HOMES).values(**first, team_id=asking_team).on_conflict_do_nothing()
            )
            home = connection.scalar(_HOME, where)
    return str(home)


def homes_in(sessions: sessionmaker[Session], enterprise_id: str) -> list[str]:
    """Every workspace of the organisation that keeps a channel's table."""
    found = select(HOMES.c.team_id).where(HOMES.c.enterprise_id == enterprise_id).distinct()
    with outside_transaction(sessions) as session:
        return list(session.scalars(found))


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
