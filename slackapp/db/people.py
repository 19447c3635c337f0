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
from slackapp.db.games import GAMES, SEATS
from slackapp.db.models import Person
from slackapp.game.machine import Phase


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


_LOBBIES_SEATING = (
    select(GAMES.c.id)
    .join(SEATS, SEATS.c.game_id == GAMES.c.id)
    .where(
        GAMES.c.team_id == bindparam("team_id"),
        GAMES.c.phase == Phase.LOBBY.value,
        SEATS.c.user_id == bindparam("user_id"),
        SEATS.c.display_name != bindparam("name"),
    )
)
_KEPT = insert(PEOPLE).values(
    team_id=bindparam("team_id"),
    user_id=bindparam("user_id"),
    name=bindparam("name"),
    fetched_at=bindparam("fetched_at"),
)
_KEPT = _KEPT.on_conflict_do_update(
    index_elements=[PEOPLE.c.team_id, PEOPLE.c.user_id],
    set_={"name": _KEPT.excluded.name, "fetched_at": _KEPT.excluded.fetched_at},
)
_KEPT_AND_LOBBIES = _LOBBIES_SEATING.add_cte(_KEPT.cte("kept"))
"""Built once, and one statement with no transaction around it: a newcomer's name look-up
runs it, and building it each time, then a transaction of two statements, were most of the
look-up's cost in a burst of ``/varulv``."""


def lobbies_to_rename(
    connection: Connection, team_id: str, user_id: str, name: str, learned_at: datetime | None
) -> list[int]:
    """The workspace's lobbies where the person sits under another name than ``name``; with
    ``learned_at``, ``name`` is kept as theirs (learned from Slack then) in the same statement."""
    values = {"team_id": team_id, "user_id": user_id, "name": name}
    if learned_at is None:
        return list(connection.execute(_LOBBIES_SEATING, values).scalars())
    found = connection.execute(_KEPT_AND_LOBBIES, values | {"fetched_at": learned_at})
    return list(found.scalars())


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
