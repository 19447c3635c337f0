"""People's names as Varulv shows them: looked up with users.info (or told by Slack's
``user_change`` event) off the click path, and kept in ``people``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import Connection, Table, bindparam, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import transaction
from slackapp.db.models import Person


@dataclass(frozen=True)
class Known:
    name: str
    fetched_at: datetime


PEOPLE = cast(Table, Person.__table__)
_KNOWN = select(PEOPLE.c.name, PEOPLE.c.fetched_at).where(
    PEOPLE.c.team_id == bindparam("team_id"), PEOPLE.c.user_id == bindparam("user_id")
)
_REMEMBERED = insert(PEOPLE)
_REMEMBERED = _REMEMBERED.on_conflict_do_update(
    index_elements=[PEOPLE.c.team_id, PEOPLE.c.user_id],
    set_={"name": _REMEMBERED.excluded.name, "fetched_at": _REMEMBERED.excluded.fetched_at},
)
"""Plain statements: every join and every ``/varulv`` asks, and the ORM's identity map and
flush would be most of the cost."""


def known_in(connection: Connection, team_id: str, user_id: str) -> Known | None:
    """The kept name, read in a transaction already open (a step's own)."""
    found = connection.execute(_KNOWN, {"team_id": team_id, "user_id": user_id}).first()
    return None if found is None else Known(found.name, found.fetched_at)


def remember_in(
    connection: Connection, team_id: str, user_id: str, name: str, at: datetime
) -> None:
    """Keep ``name`` as the person's, learned from Slack ``at``, in a transaction already open."""
    connection.execute(
        _REMEMBERED, {"team_id": team_id, "user_id": user_id, "name": name, "fetched_at": at}
    )


_CHANGED = (
    update(PEOPLE)
    .where(
        PEOPLE.c.team_id == bindparam("t"),
        PEOPLE.c.user_id == bindparam("u"),
        PEOPLE.c.name != bindparam("name"),
    )
    .values(name=bindparam("name"), fetched_at=bindparam("at"))
)


def changed(
    sessions: sessionmaker[Session], team_id: str, user_id: str, name: str, at: datetime
) -> bool:
    """A kept name, changed to ``name``; False when Varulv keeps none for the person (it keeps
    the names only of people who played) or it was that already."""
    with transaction(sessions) as session:
        result = session.connection().execute(
            _CHANGED, {"t": team_id, "u": user_id, "name": name, "at": at}
        )
        return bool(result.rowcount)
