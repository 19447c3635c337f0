"""People's names as Varulv shows them: looked up with users.info, kept in ``people``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import transaction
from slackapp.db.models import Person


@dataclass(frozen=True)
class Known:
    name: str
    fetched_at: datetime


def known(sessions: sessionmaker[Session], team_id: str, user_id: str) -> Known | None:
    with sessions() as session:
        person = session.get(Person, (team_id, user_id))
        return None if person is None else Known(person.name, person.fetched_at)


def remember(
    sessions: sessionmaker[Session], team_id: str, user_id: str, name: str, at: datetime
) -> None:
    with transaction(sessions) as session:
        session.execute(
            insert(Person)
            .values(team_id=team_id, user_id=user_id, name=name, fetched_at=at)
            .on_conflict_do_update(
                index_elements=[Person.team_id, Person.user_id],
                set_={"name": name, "fetched_at": at},
            )
        )
