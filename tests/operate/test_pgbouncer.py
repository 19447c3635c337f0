"""Behind PgBouncer in transaction mode (Debian's ``pgbouncer``): with
``VARULV_PREPARED_STATEMENTS=off`` a game is played through it to the reveal, the schema
migrated through it too, and PostgreSQL sees the pooler's few connections, not the app's."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text

from slackapp.db.engine import sqlalchemy_url
from slackapp.fakeslack import UNLIMITED, FakeSlack
from slackapp.serving import free_port
from tests import processes
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, start_app
from tests.e2e.driver import Table
from tests.operate.conftest import PEOPLE, fresh_database
from tests.waiting import until

ALVA, BENGT, CARIN, _ = PEOPLE
POOL = 4
"""Server connections PgBouncer keeps for the app's database."""


def pgbouncer_config(server_url: str, port: int, folder: Path) -> Path:
    """Transaction pooling of every database on the server behind 127.0.0.1:``port``, trusting
    the server's own user (the run's PostgreSQL trusts local connections)."""
    server = make_url(server_url)
    host = server.query.get("host") or server.host or "127.0.0.1"
    where = f"host={host}" + (f" port={server.port}" if server.port else "")
    (folder / "users.txt").write_text(f'"{server.username}" ""\n')
    config = folder / "pgbouncer.ini"
    config.write_text(
        f"""[databases]
* = {where} user={server.username}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {folder / "users.txt"}
pool_mode = transaction
default_pool_size = {POOL}
max_client_conn = 500
ignore_startup_parameters = extra_float_digits,options
"""
    )
    return config


@pytest.fixture
def pgbouncer(postgres: str, tmp_path: Path) -> Iterator[tuple[str, int]]:
    """(the run's PostgreSQL's URL, PgBouncer's port in front of it)."""
    program = shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None
    )
    if program is None:
        pytest.skip("no pgbouncer found: install Debian's pgbouncer package")
    tmp_path.chmod(0o755)
    port = free_port()
    config = pgbouncer_config(postgres, port, tmp_path)
    # PgBouncer will not run as root: as root, it runs as the user the server runs as, who
    # may reach the server's socket (and its log is written here, by this process).
    host = make_url(postgres).query.get("host")
    owner = Path(str(host)).owner() if host else "nobody"
    as_user = ["-u", owner] if os.geteuid() == 0 else []
    with (tmp_path / "pgbouncer.log").open("wb") as log:
        process = processes.start(
            [program, *as_user, str(config)], stdout=log, stderr=subprocess.STDOUT
        )
    try:
        until(lambda: _listening(port), "PgBouncer to listen")
        yield postgres, port
    finally:
        processes.end(process)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
        return True
    except OSError:
        return False


def test_a_game_through_pgbouncer_in_transaction_mode(pgbouncer: tuple[str, int]) -> None:
    server_url, port = pgbouncer
    direct = fresh_database(server_url, "pgbouncer")
    name = make_url(sqlalchemy_url(direct)).database
    user = make_url(sqlalchemy_url(direct)).username
    pooled = f"postgresql://{user}@127.0.0.1:{port}/{name}"
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN], limits=UNLIMITED) as fake:
        env = {"VARULV_PREPARED_STATEMENTS": "off", "VARULV_DATABASE_CONNECTIONS": "30"}
        app = start_app(fake, pooled, env=env)
        db = create_engine(sqlalchemy_url(direct))
        try:
            for user_id, person in PEOPLE.items():
                fake.add_user(user_id, person)
            table = Table(fake, app, db)
            table.seat_people(ALVA, [BENGT, CARIN], bots=True)
            table.start(ALVA)
            table.play_night([ALVA, BENGT, CARIN])
            table.heard_enough([ALVA, BENGT])
            table.wait_for_phase("vote")
            table.vote({ALVA: "bengt", BENGT: "carin", CARIN: "Nobody"})
            table.wait_for_phase("over")
            table.reveal()
            table.stored_outcome_matches_referee()
            with db.connect() as connection:
                backends = connection.scalar(
                    text(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = :name"
                        " AND application_name <> 'psql' AND pid <> pg_backend_pid()"
                    ),
                    {"name": name},
                )
            assert backends is not None and backends <= POOL, "the pooler's, not the app's 30"
            errors = [line for line in app.log.read_text().splitlines() if '"ERROR"' in line]
            assert errors == [], errors
        finally:
            app.stop()
            db.dispose()
