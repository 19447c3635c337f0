"""People's names as Varulv writes them out where Slack renders no mention: looked up with
users.info (see slackapp.names) and kept in ``people``."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import Connection, Table, bindparam, select
from sqlalchemy.dialects.postgresql import insert

from slackapp.db.models import Person


@dataclass(frozen=True)
class Known:
    name: str
    fetched_at: datetime


PEOPLE = cast(Table, Person.__table__)
_KNOWN = select(PEOPLE.c.name, PEOPLE.c.fetched_at).where(
    PEOPLE.c.team_id == bindparam("team_id"), PEOPLE.c.user_id == bindparam("user_id")
)
"""A plain statement: every join and every ``/varulv`` asks, and the ORM's identity map would
be most of the cost."""


def known_in(connection: Connection, team_id: str, user_id: str) -> Known | None:
    """The kept name, read in a transaction already open (a step's own)."""
    found = connection.execute(_KNOWN, {"team_id": team_id, "user_id": user_id}).first()
    return None if found is None else Known(found.name, found.fetched_at)


_KNOWN_OF = select(PEOPLE.c.user_id, PEOPLE.c.name, PEOPLE.c.fetched_at).where(
    PEOPLE.c.team_id == bindparam("team_id"),
    PEOPLE.c.user_id.in_(bindparam("user_ids", expanding=True)),
)


def known_of(connection: Connection, team_id: str, user_ids: Collection[str]) -> dict[str, Known]:
    """The kept names of ``user_ids`` (those Varulv keeps one for), in one statement."""
    found = connection.execute(_KNOWN_OF, {"team_id": team_id, "user_ids": list(user_ids)})
    return {row.user_id: Known(row.name, row.fetched_at) for row in found}


_KEEP = insert(PEOPLE)
_KEEP = _KEEP.on_conflict_do_update(
    index_elements=[PEOPLE.c.team_id, PEOPLE.c.user_id],
    set_={"name": _KEEP.excluded.name, "fetched_at": _KEEP.excluded.fetched_at},
)


def keep(
    connection: Connection, team_id: str, names: Mapping[str, str], learned_at: datetime
) -> None:
    """People's names as Slack gave them at ``learned_at``, kept (or kept anew) in one
    statement."""
    if not names:
        return
    rows = [
        {"team_id": team_id, "user_id": user_id, "name": name, "fetched_at": learned_at}
        for user_id, name in sorted(names.items())  # one order: two at once never deadlock
    ]
    connection.execute(_KEEP.values(rows))
