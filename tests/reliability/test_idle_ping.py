"""A pooled connection is pinged before use only when it sat idle (slackapp.db.engine): one the
database dropped while it sat is replaced without the request noticing, and one used a moment
ago goes straight to its statement, with no ping's round trip on the way to a person's screen."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import OperationalError

from slackapp.db.engine import ping_when_idle
from tests.databases import fresh_database
from tests.waiting import until


@pytest.fixture
def url(postgres: str) -> str:
    return fresh_database(postgres, "idle-ping")


def pooled(url: str, idle_seconds: float) -> Engine:
    engine = create_engine(url, pool_size=1, max_overflow=0)
    ping_when_idle(engine, idle_seconds)
    return engine


@pytest.fixture
def admin(url: str) -> Iterator[Engine]:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    yield engine
    engine.dispose()


def backend_of(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())


def drop(admin: Engine, backend: int) -> None:
    """The database ends the connection, as a restart or a failover does."""
    with admin.connect() as connection:
        connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": backend})
        alive = text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid")
        until(
            lambda: connection.execute(alive, {"pid": backend}).scalar_one() == 0,
            "the dropped backend to be gone",
        )


def test_a_connection_that_sat_idle_and_was_dropped_is_replaced_before_use(
    url: str, admin: Engine
) -> None:
    engine = pooled(url, idle_seconds=0)  # every connection taken from the pool counts as idle
    try:
        dropped = backend_of(engine)
        drop(admin, dropped)
        replaced = backend_of(engine)  # no error: the ping found it dead, the pool made another
        assert replaced != dropped
    finally:
        engine.dispose()


def test_a_connection_used_a_moment_ago_is_not_pinged(url: str, admin: Engine) -> None:
    engine = pooled(url, idle_seconds=3600)
    try:
        dropped = backend_of(engine)
        drop(admin, dropped)
        # Not pinged, so the statement itself meets the dropped connection.
        with pytest.raises(OperationalError), engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        # SQLAlchemy's disconnect handling then replaces the pool's connections.
        assert backend_of(engine) != dropped
    finally:
        engine.dispose()
