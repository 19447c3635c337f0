"""Deleting outbox streams. No foreign key ties the outbox to a game, so that a channel's
notice needs none (``OutboxEntry``): a game's stream (its entries, its messages as Slack has
them, its lease) is deleted with the game by the code that deletes the game, and a notice's
once it is as old as an ended game that is pruned."""

from __future__ import annotations

from datetime import datetime
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
