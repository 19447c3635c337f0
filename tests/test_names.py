"""The kept name a step reads (``Names.name_for``) spares the look-up after it: a person whose
kept name is fresh is not asked of Slack again, nor read again, when they sit down."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk import WebClient
from sqlalchemy import Engine, insert

from slackapp.db.engine import make_engine, make_sessions
from slackapp.db.people import PEOPLE
from slackapp.names import NAME_REFRESH, Names
from tests.databases import migrated_database

NOW = datetime(2026, 12, 4, 9, tzinfo=UTC)
TEAM = "T0NAMES"
NOWHERE = WebClient(token="xoxb-none", base_url="http://127.0.0.1:9/")
"""Nothing answers there: a look-up that starts fails at once, and is only counted."""


@pytest.fixture
def engine(postgres: str) -> Iterator[Engine]:
    engine = make_engine(migrated_database(postgres, "names"))
    yield engine
    engine.dispose()


def names_with(engine: Engine, user: str, fetched_at: datetime) -> Names:
    with engine.begin() as connection:
        connection.execute(
            insert(PEOPLE).values(team_id=TEAM, user_id=user, name="Kept", fetched_at=fetched_at)
        )
    return Names(make_sessions(engine), lambda *_: None, lambda: NOW)


def seat(engine: Engine, names: Names, user: str) -> str:
    """A step seats the person under the name it reads, then the listener says they sat down."""
    with engine.connect() as connection:
        name = names.name_for(connection, TEAM, user, "handle")
    names.sat_down(NOWHERE, TEAM, user, "handle")
    return name


def test_a_fresh_kept_name_is_neither_asked_nor_read_again(engine: Engine) -> None:
    names = names_with(engine, "U0FRESH", NOW - NAME_REFRESH + timedelta(minutes=1))
    assert seat(engine, names, "U0FRESH") == "Kept"
    assert names.lookups is None, "no look-up started"


def test_a_stale_kept_name_is_asked_again(engine: Engine) -> None:
    names = names_with(engine, "U0STALE", NOW - NAME_REFRESH)
    try:
        assert seat(engine, names, "U0STALE") == "Kept", "sat down under it meanwhile"
        assert names.lookups is not None, "a look-up started"
    finally:
        names.stop()
