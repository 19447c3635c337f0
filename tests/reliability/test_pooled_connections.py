"""Pooled connections last (slackapp.db.engine): those a burst opened are kept for the next one,
and each keeps the statements psycopg prepared for it. psycopg forgets them all at a ROLLBACK,
so a read that ended in one (once or twice a second: the delivery sweep, the readiness probe,
Bolt's installation lookup) had every step parse its statements anew. The app's connections
prepare a statement the second time they run it (``PREPARE_AFTER``), psycopg's own the sixth."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import Engine, Select, create_engine, select, text
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import QueuePool

from slackapp.config import DATABASE_CONNECTIONS, Settings
from slackapp.db.engine import PREPARE_AFTER, make_engine, outside_transaction, transaction
from slackapp.db.installations import installation_store
from slackapp.db.migrate import upgrade
from slackapp.db.models import Game
from tests.databases import fresh_database

PREPARED = text("SELECT count(*) FROM pg_prepared_statements")
LOBBIES_PREPARED = text(
    "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%FROM games%'"
)
OFTEN_ENOUGH = 6
"""More than psycopg's ``prepare_threshold`` (5)."""


@pytest.fixture
def engine(postgres: str) -> Iterator[Engine]:
    engine = create_engine(fresh_database(postgres, "prepared"), pool_size=1, max_overflow=0)
    upgrade(engine)
    yield engine
    engine.dispose()


def lobbies() -> Select[int]:
    return select(Game.id).where(Game.phase == "lobby")


def prepared_after(engine: Engine, read: Callable[[sessionmaker[Session]], object]) -> int:
    """The statements the pool's one connection has prepared, after steps that prepare one
    and then ``read``."""
    sessions = sessionmaker(engine)
    for _ in range(OFTEN_ENOUGH):
        with transaction(sessions) as session:
            session.scalars(lobbies()).all()
    read(sessions)
    with transaction(sessions) as session:
        return int(session.execute(PREPARED).scalar_one())


def test_a_read_outside_a_transaction_keeps_the_connections_prepared_statements(
    engine: Engine,
) -> None:
    def read(sessions: sessionmaker[Session]) -> None:
        with outside_transaction(sessions) as session:
            session.scalars(lobbies()).all()

    assert prepared_after(engine, read) >= 1


def test_a_read_that_ends_in_a_rollback_loses_them(engine: Engine) -> None:
    """What the test above guards against: the same read in a session that rolls back."""

    def read(sessions: sessionmaker[Session]) -> None:
        with sessions() as session:
            session.scalars(lobbies()).all()

    assert prepared_after(engine, read) == 0


def test_bolts_installation_lookup_keeps_them(engine: Engine) -> None:
    store = installation_store(engine, "client-id")

    def read(_: sessionmaker[Session]) -> None:
        assert store.find_bot(enterprise_id=None, team_id="T-nobody") is None

    assert prepared_after(engine, read) >= 1


def test_the_connections_a_burst_opened_are_kept_for_the_next(postgres: str) -> None:
    engine = make_engine(fresh_database(postgres, "kept"))
    try:

        def backends_of_a_burst() -> set[int]:
            connections = [engine.connect() for _ in range(DATABASE_CONNECTIONS)]
            try:
                pid = text("SELECT pg_backend_pid()")
                return {int(each.execute(pid).scalar_one()) for each in connections}
            finally:
                for each in connections:
                    each.close()

        first = backends_of_a_burst()
        assert len(first) == DATABASE_CONNECTIONS
        assert backends_of_a_burst() == first, "no backend started anew"
    finally:
        engine.dispose()


def test_a_process_opens_as_many_connections_as_it_is_told(
    postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VARULV_DATABASE_CONNECTIONS", "3")
    settings = Settings.from_env()
    engine = make_engine(fresh_database(postgres, "told"), settings.database_connections)
    try:
        pool = engine.pool
        assert isinstance(pool, QueuePool)
        assert pool.size() == 3
    finally:
        engine.dispose()


@pytest.mark.parametrize("prepared_statements", [True, False])
def test_the_apps_connections_prepare_a_statement_once_it_runs_again(
    postgres: str, prepared_statements: bool
) -> None:
    engine = make_engine(fresh_database(postgres, "again"), 1, prepared_statements)
    try:
        sessions = sessionmaker(engine)
        upgrade(engine)
        for _ in range(PREPARE_AFTER + 1):
            with outside_transaction(sessions) as session:
                session.scalars(lobbies()).all()
        with outside_transaction(sessions) as session:
            prepared = session.execute(LOBBIES_PREPARED).scalar_one()
        assert prepared == (1 if prepared_statements else 0)
    finally:
        engine.dispose()
