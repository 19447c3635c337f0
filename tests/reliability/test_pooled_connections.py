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

from slackapp.cli import maintenance_engine
from slackapp.config import DATABASE_CONNECTIONS, Settings
from slackapp.db.engine import make_engine, outside_transaction, transaction
from slackapp.db.installations import installation_store
from slackapp.db.migrate import upgrade
from slackapp.db.models import Game
from tests.databases import fresh_database

PREPARED = text("SELECT count(*) FROM pg_prepared_statements")
LOBBIES_PREPARED = text(
    "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%FROM games%'"
    " AND statement NOT LIKE '%pg_prepared_statements%'"
)
"""The statements of :func:`lobbies` the connection has prepared (this one left out)."""
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


def the_apps(settings: Settings) -> Engine:
    return make_engine(settings.database_url or "", 1, settings.prepared_statements)


@pytest.mark.parametrize("engine_of", [the_apps, maintenance_engine])
@pytest.mark.parametrize("prepared_statements", ["on", "off"])
def test_a_connection_prepares_a_statement_on_its_second_run_unless_told_not_to(
    postgres: str,
    monkeypatch: pytest.MonkeyPatch,
    engine_of: Callable[[Settings], Engine],
    prepared_statements: str,
) -> None:
    """The app's connections and a one-off command's (``varulv prune``, behind the same
    pooler) alike: prepared from the second run, or never with the setting off."""
    monkeypatch.setenv("DATABASE_URL", fresh_database(postgres, "again"))
    monkeypatch.setenv("VARULV_PREPARED_STATEMENTS", prepared_statements)
    engine = engine_of(Settings.from_env())
    try:
        upgrade(engine)
        sessions = sessionmaker(engine)

        def run_and_count() -> int:
            with outside_transaction(sessions) as session:
                session.scalars(lobbies()).all()
                return int(session.execute(LOBBIES_PREPARED).scalar_one())

        assert run_and_count() == 0, "not prepared on its first run"
        assert run_and_count() == (1 if prepared_statements == "on" else 0)
    finally:
        engine.dispose()


def test_a_connection_to_a_server_gone_without_a_word_fails_within_a_minute(postgres: str) -> None:
    """TCP keepalives and a user timeout on every connection, unless the URL sets its own: a
    sweep or a step never hangs for hours on a server that vanished."""
    url = fresh_database(postgres, "keepalives")

    def parameters(engine: Engine) -> dict[str, str]:
        with engine.connect() as connection:
            dbapi = connection.connection.dbapi_connection
            assert dbapi is not None
            found: dict[str, str] = dbapi.info.get_parameters()
        engine.dispose()
        return found

    found = parameters(make_engine(url))
    assert found["keepalives"] == "1"
    assert found["keepalives_idle"] == "30"
    assert found["tcp_user_timeout"] == "30000"
    given = "&" if "?" in url else "?"
    kept = parameters(make_engine(f"{url}{given}keepalives_idle=5"))
    assert kept["keepalives_idle"] == "5", "the URL's own setting wins"
