"""Deleting outbox streams. No foreign key ties the outbox to a game, so that a channel's
notice needs none (``OutboxEntry``): a game's stream (its entries, its messages as Slack has
them, its lease) is deleted with the game by the code that deletes the game, and a notice's
once it is as old as an ended game that is pruned."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CompoundSelect, CursorResult, Select, delete, exists, func, select
from sqlalchemy.orm import Session

from slackapp.db.models import DeliveryLease, Game, OutboxEntry, SlackMessage

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


def notices_before(cutoff: datetime) -> Select[Any]:
    """The streams of notices (no game's) whose last entry was written before ``cutoff``."""
    return (
        select(OutboxEntry.stream)
        .where(~exists().where(Game.id == OutboxEntry.stream))
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
