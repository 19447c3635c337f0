"""The inbox's statements: each compiled once, each one round trip (see ``slackapp.inbox``)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, select, text, update
from sqlalchemy.dialects.postgresql import insert

from slackapp.db.models import InboxEntry

RECORD = (
    insert(InboxEntry)
    .values(
        request_key=bindparam("key"),
        body=bindparam("body", type_=InboxEntry.body.type),
        headers=bindparam("headers", type_=InboxEntry.headers.type),
        holder=bindparam("holder"),
        until=bindparam("until"),
    )
    .on_conflict_do_nothing(index_elements=[InboxEntry.request_key])
    .returning(InboxEntry.id)
)
"""A request, held by the process that took it; no row when Slack delivered it before."""

MARK_DONE = text(
    """
    WITH tx AS MATERIALIZED (SELECT txid_current_if_assigned() IS NOT NULL AS wrote),
    marked AS (
        UPDATE inbox SET done_at = now(), body = NULL, headers = NULL
        FROM tx
        WHERE inbox.id = :id AND inbox.done_at IS NULL AND tx.wrote
        RETURNING inbox.id
    )
    SELECT tx.wrote, EXISTS (SELECT 1 FROM marked) FROM tx
    """
)
"""In a transaction about to commit: mark the request done if the transaction wrote
anything (a read's commit is not the step). Whether it wrote, and whether it marked."""

FINISH = (
    update(InboxEntry)
    .where(InboxEntry.id == bindparam("row"), InboxEntry.done_at.is_(None))
    .values(done_at=func.now(), body=None, headers=None)
)
"""A request whose work committed nothing (a read, a refusal, an answer), done."""

RENEW = (
    update(InboxEntry)
    .where(
        InboxEntry.id.in_(bindparam("rows", expanding=True)),
        InboxEntry.holder == bindparam("by"),  # "holder" is the column's own name: not a SET
        InboxEntry.done_at.is_(None),
    )
    .values(until=bindparam("until"))
)

PENDING_HOLDERS = (
    select(InboxEntry.holder, func.min(InboxEntry.until))
    .where(InboxEntry.done_at.is_(None), InboxEntry.holder != bindparam("holder"))
    .group_by(InboxEntry.holder)
)
"""Other processes holding requests not yet done, and the soonest their claims lapse."""

_CLAIMABLE = (
    select(InboxEntry.id)
    .where(
        InboxEntry.done_at.is_(None),
        (InboxEntry.until < bindparam("now"))
        | InboxEntry.holder.in_(bindparam("dead", expanding=True)),
        InboxEntry.id.not_in(bindparam("mine", expanding=True)),
    )
    .order_by(InboxEntry.id)
    .limit(bindparam("limit"))
    .with_for_update(skip_locked=True)
    .scalar_subquery()
)
CLAIM = (
    update(InboxEntry)
    .where(InboxEntry.id.in_(_CLAIMABLE))
    .values(holder=bindparam("holder"), until=bindparam("until"))
    .returning(InboxEntry.id, InboxEntry.body, InboxEntry.headers)
)
"""Take requests whose holder died or whose claim lapsed, oldest first."""

PRUNE = delete(InboxEntry).where(InboxEntry.done_at < bindparam("before"))


def record(
    connection: Connection,
    key: str | None,
    body: dict[str, Any],
    headers: dict[str, str],
    holder: str,
    until: datetime,
) -> int | None:
    """The new request's row, or None when a request with this key is recorded already."""
    found = connection.execute(
        RECORD,
        {"key": key, "body": body, "headers": headers, "holder": holder, "until": until},
    ).scalar_one_or_none()
    return None if found is None else int(found)


def mark_done(connection: Connection, row: int) -> tuple[bool, bool]:
    """(whether the transaction wrote anything, whether it marked the request done)."""
    wrote, marked = connection.execute(MARK_DONE, {"id": row}).one()
    return bool(wrote), bool(marked)


def finish(connection: Connection, row: int) -> None:
    connection.execute(FINISH, {"row": row})


def renew(connection: Connection, holder: str, rows: Collection[int], until: datetime) -> None:
    if rows:
        connection.execute(RENEW, {"rows": sorted(rows), "by": holder, "until": until})


def pending_holders(connection: Connection, holder: str) -> list[tuple[str, datetime]]:
    rows = connection.execute(PENDING_HOLDERS, {"holder": holder})
    return [(each, until) for each, until in rows]


def claim(
    connection: Connection,
    holder: str,
    now: datetime,
    dead: Collection[str],
    mine: Collection[int],
    until: datetime,
    limit: int,
) -> list[tuple[int, dict[str, Any], dict[str, str]]]:
    """Requests taken over: (row, body, headers), oldest first."""
    taken = connection.execute(
        CLAIM,
        {
            "holder": holder,
            "now": now,
            "dead": sorted(dead),
            "mine": sorted(mine),
            "until": until,
            "limit": limit,
        },
    ).all()
    return sorted((row, body or {}, headers or {}) for row, body, headers in taken)


def prune(connection: Connection, before: datetime) -> int:
    return int(connection.execute(PRUNE, {"before": before}).rowcount)
