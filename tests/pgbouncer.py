"""PgBouncer in transaction mode in front of a PostgreSQL server (Debian's ``pgbouncer``), for
the tests and the benchmarks that run the app behind it."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import make_url

from slackapp.db.engine import sqlalchemy_url
from slackapp.serving import free_port
from tests import processes
from tests.waiting import until


def pgbouncer_program() -> str | None:
    """PgBouncer's program, if installed (Debian keeps it outside a user's PATH)."""
    found = shutil.which("pgbouncer")
    return found or ("/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None)


def pgbouncer_config(server_url: str, port: int, pool: int, folder: Path) -> Path:
    """Transaction pooling of every database on the server behind 127.0.0.1:``port``, ``pool``
    server connections a database, trusting the server's own user (the local PostgreSQL
    trusts local connections)."""
    server = make_url(sqlalchemy_url(server_url))
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
default_pool_size = {pool}
max_client_conn = 2000
ignore_startup_parameters = extra_float_digits,options
"""
    )
    return config


@contextlib.contextmanager
def pgbouncer(program: str, server_url: str, pool: int) -> Iterator[int]:
    """PgBouncer running in front of the server; its port on 127.0.0.1."""
    folder = Path(tempfile.mkdtemp(prefix="varulv-pgbouncer-"))
    folder.chmod(0o755)
    port = free_port()
    config = pgbouncer_config(server_url, port, pool, folder)
    # PgBouncer will not run as root: as root, it runs as the user the server runs as, who
    # may reach the server's socket (and its log is written here, by this process).
    host = make_url(sqlalchemy_url(server_url)).query.get("host")
    owner = Path(str(host)).owner() if isinstance(host, str) else "nobody"
    as_user = ["-u", owner] if os.geteuid() == 0 else []
    with (folder / "pgbouncer.log").open("wb") as log:
        process = processes.start(
            [program, *as_user, str(config)], stdout=log, stderr=subprocess.STDOUT
        )
    try:
        until(lambda: _listening(port), "PgBouncer to listen")
        yield port
    finally:
        processes.end(process)
        shutil.rmtree(folder, ignore_errors=True)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
        return True
    except OSError:
        return False


def pooled_url(direct_url: str, port: int) -> str:
    """The database of ``direct_url`` through PgBouncer on ``port``."""
    direct = make_url(sqlalchemy_url(direct_url))
    return f"postgresql://{direct.username}@127.0.0.1:{port}/{direct.database}"
