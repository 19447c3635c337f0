"""The whole test run keeps its temporary files (app logs, PostgreSQL folders, ``tmp_path``) in
one folder of its own, removed when the run ends, after every process a test started is ended."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests import processes

_folder: Path | None = None
_before: tuple[str | None, str | None] = (None, None)


def pytest_configure(config: pytest.Config) -> None:
    global _folder, _before
    _before = (os.environ.get("TMPDIR"), tempfile.tempdir)
    _folder = Path(tempfile.mkdtemp(prefix="varulv-tests-"))
    _folder.chmod(0o755)  # the embedded PostgreSQL runs as a user of its own when we are root
    os.environ["TMPDIR"] = str(_folder)  # for the processes the tests start, too
    tempfile.tempdir = str(_folder)
    # The stand-in for Slack has no Tier 3 limit, and a test run plays hundreds of games in one
    # workspace: its apps pace chat.update far less than Slack's 50 a minute.
    os.environ.setdefault("VARULV_UPDATES_PER_MINUTE", "100000")


def pytest_unconfigure(config: pytest.Config) -> None:
    processes.end_all()
    if _folder is not None:
        shutil.rmtree(_folder, ignore_errors=True)
    environ, tempfile.tempdir = _before
    if environ is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = environ
