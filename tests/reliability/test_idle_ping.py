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


def test_a_connection_that_sat_idle_and_answers_its_ping_is_kept(url: str) -> None:
    engine = pooled(url, idle_seconds=0)  # every connection taken from the pool counts as idle
    try:
        assert backend_of(engine) == backend_of(engine)
    finally:
        engine.dispose()


def test_a_connection_that_sat_idle_and_was_dropped_is_replaced_before_use(
    url: str, admin: Engine
) -> None:
    engine = pooled(url, idle_seconds=0)
    try:
        dropped = backend_of(engine)
        drop(admin, dropped)
        replaced = backend_of(engine)  # no error: the ping found it dead, the pool made another
        assert replaced != dropped
    finally:
        engine.dispose()


def test_a_failed_ping_replaces_every_connection_of_the_pool(url: str, admin: Engine) -> None:
    """A connection that does not answer its ping means the database went away: a pool-mate
    used a moment ago (so not pinged) is not trusted either, as with ``pool_pre_ping``."""
    now = [0.0]
    engine = create_engine(url, pool_size=2, max_overflow=0)  # first in, first out
    ping_when_idle(engine, idle_seconds=1, clock=lambda: now[0])
    try:
        idle, hot = engine.connect(), engine.connect()
        backends = {
            int(c.execute(text("SELECT pg_backend_pid()")).scalar_one()) for c in (idle, hot)
        }
        idle.close()  # back in the pool at 0 s
        now[0] = 10.0
        hot.close()  # back in the pool at 10 s
        for backend in backends:
            drop(admin, backend)
        now[0] = 10.5  # the first sat 10.5 s (pinged, dead), the second 0.5 s (not pinged)
        with engine.connect() as first, engine.connect() as second:
            for connection in (first, second):  # neither meets a dropped connection
                backend = int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())
                assert backend not in backends
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
