"""Recording what Slack took: the message's ``ts``, the version it shows, its entries done.

A drain records every call that ended by the time it woke in one statement, together with the
leases it lets go (``delivery.drain``): a hundred landings at once cost one round trip to the
database, not a hundred. A message's newer version is never sent before its ``ts`` is
recorded. Should that statement fail, each of its landings is recorded alone, with retries, as
if it had landed by itself: one bad landing never costs the others theirs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import String, bindparam, case, func, text, update
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import outside_transaction
from slackapp.db.models import OutboxEntry, SlackMessage

log = logging.getLogger(__name__)

RECORD_ATTEMPTS = 5
"""Tries to record what Slack took (about six seconds in all) before giving up."""


@dataclass(frozen=True)
class Landing:
    """One message's version that Slack took, by a call that began at ``started`` (the app's
    clock); ``posted`` is (channel, ts) of a first post."""

    stream: int
    surface: str
    version: int
    started: datetime
    posted: tuple[str, str] | None = None


UNSURE = (
    update(SlackMessage)
    .where(SlackMessage.stream == bindparam("of_stream"), SlackMessage.surface == bindparam("s"))
    .values(unsure_until=func.greatest(SlackMessage.unsure_until, bindparam("until")))
)
"""A call of unknown outcome may redraw the message until ``until`` (PostgreSQL's
``greatest`` passes over a null)."""
DONE = (
    update(OutboxEntry)
    .where(
        OutboxEntry.stream == bindparam("of_stream"),
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

RECORD = text(
    """
    WITH landed AS (
        SELECT * FROM unnest(
            CAST(:stream AS integer[]), CAST(:s AS text[]), CAST(:v AS integer[]),
            CAST(:started AS timestamptz[]), CAST(:c AS text[]), CAST(:t AS text[])
        ) AS l (stream, surface, version, started, channel, ts)
    ), posted AS (
        INSERT INTO messages AS m (stream, surface, channel, ts, version)
        SELECT stream, surface, channel, ts, version FROM landed WHERE ts IS NOT NULL
        ON CONFLICT (stream, surface) DO UPDATE SET
            channel = excluded.channel, ts = excluded.ts, version = excluded.version,
            unsure_until = CASE WHEN m.unsure_until <= (
                SELECT l.started FROM landed l
                WHERE l.stream = m.stream AND l.surface = m.surface AND l.ts IS NOT NULL
            ) THEN NULL ELSE m.unsure_until END
        RETURNING m.stream, m.surface, m.unsure_until
    ), shown AS (
        UPDATE messages AS m SET
            version = greatest(m.version, l.version),
            unsure_until = CASE WHEN m.unsure_until <= l.started THEN NULL
                                ELSE m.unsure_until END
        FROM landed l
        WHERE l.ts IS NULL AND m.stream = l.stream AND m.surface = l.surface
        RETURNING m.stream, m.surface, m.unsure_until
    ), now_shown AS (
        SELECT * FROM posted UNION ALL SELECT * FROM shown
    ), done AS (
        UPDATE outbox AS o SET
            done_at = CASE WHEN a.unsure_until IS NULL THEN now() END,
            failure = CASE WHEN a.unsure_until IS NULL AND o.version < l.version
                           THEN 'superseded' END,
            due_at = coalesce(a.unsure_until, o.due_at),
            attempts = CASE WHEN a.unsure_until IS NULL THEN o.attempts ELSE 0 END
        FROM landed l
        LEFT JOIN now_shown a ON a.stream = l.stream AND a.surface = l.surface
        WHERE o.stream = l.stream AND o.surface = l.surface AND o.version <= l.version
          AND o.done_at IS NULL AND o.stream = ANY(CAST(:stream AS integer[]))
        RETURNING o.id, o.done_at, o.due_at
    ), gone AS (
        DELETE FROM delivery_leases WHERE stream IN (
            SELECT stream FROM delivery_leases
            WHERE holder = :by AND stream = ANY(CAST(:release AS integer[]))
            ORDER BY stream FOR UPDATE
        )
    )
    SELECT DISTINCT o.stream FROM outbox o LEFT JOIN done d ON d.id = o.id
    WHERE o.stream = ANY(CAST(:release AS integer[])) AND o.done_at IS NULL
      AND d.done_at IS NULL AND coalesce(d.due_at, o.due_at) <= :now
    """
)
"""What Slack took, and the leases of ``release`` that ``by`` holds let go, as one statement:
- a first post's message gets its channel and ``ts`` (a message posted again, its new ones),
  a redraw's the version shown if newer; either way a call that began once no earlier call
  of unknown outcome could land any more makes what the message shows known again (see
  ``SlackMessage.unsure_until``);
- the message's undelivered versions up to the one that landed are done, the older ones
  superseded; or, while an earlier call of unknown outcome may still land over it, due again
  once it no longer can (its tries forgotten: this call went through);
- the leases are let go locked in the streams' order, as a step takes them;
- it answers with those of the released streams with something due once the landings are in.

The entries are looked up by their streams' ids as given (``= ANY``), which PostgreSQL finds in
the index of undelivered entries whatever it believes of the other rows: joined only to the
landings, it may read every undelivered entry first, all of a storm's.

Every part of a statement sees the rows as they were when it began, so the entries still due
are read from the outbox as it was and what ``done`` made of them. An entry another process's
step committed while the statement ran is not among them: its stream, let go, is found by the
next sweep of any process."""


def record(
    sessions: sessionmaker[Session],
    landings: Sequence[Landing],
    holder: str = "",
    release: Sequence[int] = (),
    now: datetime | None = None,
) -> list[int]:
    """Write the landings and let go of ``holder``'s leases of the streams ``release``, in one
    statement; those released streams with something due as they went (to claim again). Should
    that fail, each landing is recorded alone, with retries, as if it had landed by itself (one
    bad landing never costs the others theirs), and then the leases are let go alone; a
    landing that still cannot be recorded is logged, and its post will be made again."""
    try:
        with outside_transaction(sessions) as session:
            return list(
                session.connection().scalars(RECORD, _bound(landings, holder, release, now))
            )
    except Exception:
        if not landings:
            raise
    for landing in landings:
        try:
            _record_alone(sessions, landing)
        except Exception:
            log.exception("what Slack took could not be recorded")
    with outside_transaction(sessions) as session:
        return list(session.connection().scalars(RECORD, _bound([], holder, release, now)))


def _bound(
    landings: Sequence[Landing], holder: str, release: Sequence[int], now: datetime | None
) -> dict[str, object]:
    return {
        "stream": [x.stream for x in landings],
        "s": [x.surface for x in landings],
        "v": [x.version for x in landings],
        "started": [x.started for x in landings],
        "c": [None if x.posted is None else x.posted[0] for x in landings],
        "t": [None if x.posted is None else x.posted[1] for x in landings],
        "by": holder,
        "release": sorted(release),
        "now": now or datetime.now().astimezone(),
    }


def _record_alone(sessions: sessionmaker[Session], landing: Landing) -> None:
    for attempt in range(RECORD_ATTEMPTS):
        try:
            with outside_transaction(sessions) as session:
                session.connection().execute(RECORD, _bound([landing], "", (), None))
            return
        except Exception:
            if attempt == RECORD_ATTEMPTS - 1:
                raise
            time.sleep(0.2 * 2**attempt)
