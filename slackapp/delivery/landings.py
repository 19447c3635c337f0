"""Recording what Slack took: the message's ``ts``, the version it shows, its entries done.

A drain records every call that ended by the time it woke in one transaction of a few
statements sent as pipelines, together with the leases it lets go (``delivery.drain``): a
hundred landings at once cost one transaction, not a hundred. A message's newer version is
never sent before its ``ts`` is recorded. Should a group fail, each of its landings is recorded
alone, with retries, as if it had landed by itself: one bad landing never costs the others
theirs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, String, and_, bindparam, case, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.models import OutboxEntry, SlackMessage

log = logging.getLogger(__name__)

RECORD_ATTEMPTS = 5
"""Tries to record what Slack took (about six seconds in all) before giving up."""


@dataclass(frozen=True)
class Landing:
    """One message's version that Slack took, by a call that began at ``started`` (the app's
    clock); ``posted`` is (channel, ts) of a first post."""

    game_id: int
    surface: str
    version: int
    started: datetime
    posted: tuple[str, str] | None = None


_SURE_FROM_NOW_ON = case(
    (SlackMessage.unsure_until <= bindparam("started"), None), else_=SlackMessage.unsure_until
)
"""A call that began once no earlier call of unknown outcome could land any more (see
``SlackMessage.unsure_until``) makes what the message shows known again."""


# Statements for many rows at once (executemany: psycopg pipelines them into one round trip).
_POST = insert(SlackMessage).values(
    game_id=bindparam("g"),
    surface=bindparam("s"),
    channel=bindparam("c"),
    ts=bindparam("t"),
    version=bindparam("v"),
)
POST = _POST.on_conflict_do_update(
    index_elements=[SlackMessage.game_id, SlackMessage.surface],
    set_={
        "channel": _POST.excluded.channel,
        "ts": _POST.excluded.ts,
        "version": _POST.excluded.version,
        "unsure_until": _SURE_FROM_NOW_ON,
    },
)
SHOWN = (
    update(SlackMessage)
    .where(SlackMessage.game_id == bindparam("g"), SlackMessage.surface == bindparam("s"))
    .values(
        version=func.greatest(SlackMessage.version, bindparam("v")),
        unsure_until=_SURE_FROM_NOW_ON,
    )
)
UNSURE = (
    update(SlackMessage)
    .where(SlackMessage.game_id == bindparam("g"), SlackMessage.surface == bindparam("s"))
    .values(unsure_until=func.greatest(SlackMessage.unsure_until, bindparam("until")))
)
"""A call of unknown outcome may redraw the message until ``until`` (PostgreSQL's
``greatest`` passes over a null)."""
DONE = (
    update(OutboxEntry)
    .where(
        OutboxEntry.game_id == bindparam("g"),
        OutboxEntry.surface == bindparam("s"),
        OutboxEntry.version <= bindparam("v"),
        OutboxEntry.done_at.is_(None),
    )
    .values(
        done_at=func.now(),
        failure=func.coalesce(
            bindparam("f", type_=String),
            case((OutboxEntry.version < bindparam("v"), "superseded"), else_=None),
        ),
    )
)
"""Every undelivered version of a message up to ``v`` is done: with failure ``f`` when given,
else the older ones superseded (the deliverer's one rule for it)."""

_UNSURE_UNTIL = (
    select(SlackMessage.unsure_until)
    .where(SlackMessage.game_id == OutboxEntry.game_id, SlackMessage.surface == OutboxEntry.surface)
    .scalar_subquery()
)
LANDED = (
    update(OutboxEntry)
    .where(
        OutboxEntry.game_id == bindparam("g"),
        OutboxEntry.surface == bindparam("s"),
        OutboxEntry.version <= bindparam("v"),
        OutboxEntry.done_at.is_(None),
    )
    .values(
        done_at=case((_UNSURE_UNTIL.is_(None), func.now()), else_=None),
        failure=case(
            (and_(_UNSURE_UNTIL.is_(None), OutboxEntry.version < bindparam("v")), "superseded"),
            else_=None,
        ),
        due_at=func.coalesce(_UNSURE_UNTIL, OutboxEntry.due_at),
        attempts=case((_UNSURE_UNTIL.is_(None), OutboxEntry.attempts), else_=0),
    )
)
"""What a landing makes of the message's undelivered versions up to ``v``: done (the older
ones superseded), or, while an earlier call of unknown outcome may still land over it, due
again once it no longer can (its tries forgotten: this call went through)."""


def write(connection: Connection, landings: Sequence[Landing]) -> None:
    """The landings' messages and outbox entries, as statements of many rows each."""
    posts = [
        {"g": x.game_id, "s": x.surface, "v": x.version, "started": x.started, "c": c, "t": ts}
        for x in landings
        if x.posted is not None
        for c, ts in [x.posted]
    ]
    shown = [
        {"g": x.game_id, "s": x.surface, "v": x.version, "started": x.started}
        for x in landings
        if x.posted is None
    ]
    if posts:
        connection.execute(POST, posts)
    if shown:
        connection.execute(SHOWN, shown)
    connection.execute(LANDED, [{"g": x.game_id, "s": x.surface, "v": x.version} for x in landings])


def record(
    sessions: sessionmaker[Session],
    landings: Sequence[Landing],
    also: Callable[[Connection], list[int]] = lambda connection: [],
) -> list[int]:
    """Write the landings, and do ``also`` (letting leases go), in one transaction; what
    ``also`` returned. Should that fail, each landing is recorded alone, with retries, as if it
    had landed by itself (one bad landing never costs the others theirs), and then ``also``
    alone; a landing that still cannot be recorded is logged, and its post will be made
    again."""
    try:
        with sessions() as session, session.begin():
            connection = session.connection()
            if landings:
                write(connection, landings)
            return also(connection)
    except Exception:
        if not landings:
            raise
    for landing in landings:
        try:
            _record_alone(sessions, landing)
        except Exception:
            log.exception("what Slack took could not be recorded")
    with sessions() as session, session.begin():
        return also(session.connection())


def _record_alone(sessions: sessionmaker[Session], landing: Landing) -> None:
    for attempt in range(RECORD_ATTEMPTS):
        try:
            with sessions() as session, session.begin():
                write(session.connection(), [landing])
            return
        except Exception:
            if attempt == RECORD_ATTEMPTS - 1:
                raise
            time.sleep(0.2 * 2**attempt)
