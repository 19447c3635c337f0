"""Recording what Slack took: the message's ``ts``, the version it shows, its entries done.

Calls that land together are recorded together, in one transaction of a few statements sent
as pipelines (group commit): the first call to land writes at once, and those landing while it
writes go in the next transaction, written by one of them. So a landing alone waits for
nothing, and a hundred at once cost a few transactions, not a hundred of five round trips each.
A call returns only once its landing is committed, so a message's newer version is never sent
before its ``ts`` is recorded. Should a group fail, each of its landings is recorded alone, with
retries, as if it had landed by itself: one bad landing never costs the others theirs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, String, and_, bindparam, case, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.models import OutboxEntry, SlackMessage

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


class _Waiting:
    def __init__(self, landing: Landing) -> None:
        self.landing = landing
        self.written = False
        self.alone = False
        """Its group failed: its own thread records it by itself."""


class Landings:
    """Group commit of what Slack took; safe to share between threads."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions
        self._changed = threading.Condition()
        self._landed: list[_Waiting] = []
        self._writing = False

    def record(self, landing: Landing) -> None:
        """Return once the landing is committed; raise if it cannot be (the database gone)."""
        waiting = _Waiting(landing)
        with self._changed:
            self._landed.append(waiting)
            while self._writing and not (waiting.written or waiting.alone):
                self._changed.wait()
            if waiting.written:
                return
            if not waiting.alone:  # nobody writes: this thread writes all that landed
                self._writing = True
                group, self._landed = self._landed, []
        if waiting.alone:
            self._record_alone(landing)
            return
        written = False
        try:
            self._write_once([each.landing for each in group])
            written = True
        except Exception:
            pass  # each is recorded alone, with retries
        finally:
            with self._changed:
                self._writing = False
                for each in group:
                    each.written, each.alone = written, not written
                self._changed.notify_all()
        if not written:
            self._record_alone(landing)

    def _write_once(self, landings: Sequence[Landing]) -> None:
        with self.sessions() as session, session.begin():
            write(session.connection(), landings)

    def _record_alone(self, landing: Landing) -> None:
        for attempt in range(RECORD_ATTEMPTS):
            try:
                self._write_once([landing])
                return
            except Exception:
                if attempt == RECORD_ATTEMPTS - 1:
                    raise
                time.sleep(0.2 * 2**attempt)
