"""Deleting outbox streams. No foreign key ties the outbox to a game, so that a channel's
notice needs none (``OutboxEntry``): a game's stream (its entries, its messages as Slack has
them, its lease) is deleted with the game by the code that deletes the game, and a notice's
once it is as old as an ended game that is pruned."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    CompoundSelect,
    CursorResult,
    Integer,
    Select,
    any_,
    delete,
    exists,
    func,
    select,
    text,
)
from sqlalchemy.orm import Session, aliased

from slackapp.db.models import NOTICE_ROW_SQL, DeliveryLease, Game, OutboxEntry, SlackMessage

STREAM_TABLES = (SlackMessage, DeliveryLease, OutboxEntry)
"""Every table keyed by stream, the outbox last: the streams may be chosen by its rows."""


def delete_streams(
    session: Session, streams: Select[Any] | CompoundSelect[Any] | list[int]
) -> dict[str, int]:
    """Delete every row of the streams; how many from each table."""
    deleted = {}
    for model in STREAM_TABLES:
        result = session.execute(delete(model).where(model.stream.in_(streams)))
        deleted[model.__tablename__] = int(cast(CursorResult[Any], result).rowcount)
    return deleted


def of_notices(teams: Sequence[str] | None = None) -> ColumnElement[bool]:
    """Whether an outbox entry is of one of the workspaces' notices (of every workspace's:
    None). Their streams are found by each notice's own row in ``ix_outbox_notices`` (a
    notice's stream has one; a game's has none, as a notice's stream is drawn from the games'
    sequence), reading neither the games nor their entries, and handed to the statement as one
    array: PostgreSQL then reads those streams' entries by stream. As a subquery it joins, it
    would cost each notice's stream as a game's many entries, and read the whole outbox
    instead wherever the workspaces keep a few thousand notices."""
    notice = aliased(OutboxEntry)
    found = select(func.array_agg(notice.stream)).where(text(NOTICE_ROW_SQL))
    if teams is not None:
        found = found.where(notice.team_id.in_(teams))
    return OutboxEntry.stream == any_(found.scalar_subquery().cast(ARRAY(Integer)))


def notices_before(cutoff: datetime) -> Select[Any]:
    """The streams of notices (no game's) whose last entry was written before ``cutoff``."""
    return (
        select(OutboxEntry.stream)
        .where(of_notices())
        .group_by(OutboxEntry.stream)
        .having(func.max(OutboxEntry.created_at) < cutoff)
    )


def channel_of(session: Session, stream: int) -> tuple[str, str] | None:
    """The workspace and channel a notice's stream is said in (None: not a notice's)."""
    found = session.execute(
        select(OutboxEntry.team_id, OutboxEntry.channel)
        .where(OutboxEntry.stream == stream, OutboxEntry.channel.is_not(None))
        .limit(1)
    ).first()
    return None if found is None or found.channel is None else (found.team_id, found.channel)


STRAY_LEASE_AGE = timedelta(days=1)
"""A lease lapsed this long ago is nobody's: its stream, if still due, is claimed anew."""


def delete_strays(session: Session, now: datetime) -> None:
    """What a landing or a claim wrote for a stream deleted meanwhile, which no foreign key
    refuses: what Slack shows of a stream with neither a game nor an entry, and leases that
    lapsed long ago."""
    session.execute(
        delete(SlackMessage).where(
            ~exists().where(Game.id == SlackMessage.stream),
            ~exists().where(OutboxEntry.stream == SlackMessage.stream),
        )
    )
    session.execute(delete(DeliveryLease).where(DeliveryLease.until < now - STRAY_LEASE_AGE))
