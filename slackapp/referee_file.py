"""The referee as one file that runs with Python alone: ``python3 varulv_referee.pyz <
game.json``.

A zip application (the standard library's ``zipapp`` format: a zip with ``__main__.py``,
behind a ``#!`` line) holding :mod:`slackapp.game` and :mod:`slackapp.referee_main` exactly as
the app runs them, and an empty ``slackapp/__init__.py``: nothing of the app that would pull
in Slack, the database or any package beyond the standard library. Built byte for byte the
same from the same source (every entry dated alike, in name order), so anyone can rebuild it
from the published source and compare. The release builds it (``python -m
slackapp.referee_file dist/varulv_referee.pyz``) and the app serves it at
``/varulv_referee.pyz``.
"""

from __future__ import annotations

import io
import sys
import zipfile
from functools import cache
from pathlib import Path

import slackapp

REFEREE_FILE = "varulv_referee.pyz"
REFEREE_PATH = f"/{REFEREE_FILE}"
"""Where the app serves it."""
SHEBANG = b"#!/usr/bin/env python3\n"
MAIN = b"""import sys

from slackapp.referee_main import main

sys.exit(main())
"""
DATED = (1980, 1, 1, 0, 0, 0)
"""Every entry's date: the file depends on the source alone."""
SOURCE = Path(slackapp.__file__).parent


def sources() -> dict[str, bytes]:
    """Each file of the archive by its name in it: the rules and the referee's command as the
    app runs them."""
    files = {"__main__.py": MAIN, "slackapp/__init__.py": b""}
    files["slackapp/referee_main.py"] = (SOURCE / "referee_main.py").read_bytes()
    for module in sorted((SOURCE / "game").glob("*.py")):
        files[f"slackapp/game/{module.name}"] = module.read_bytes()
    return files


@cache
def referee_archive() -> bytes:
    """The referee file's bytes."""
    buffer = io.BytesIO()
    buffer.write(SHEBANG)  # as zipapp writes it: the zip's offsets count it
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(sources().items()):
            entry = zipfile.ZipInfo(name, DATED)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, data)
    return buffer.getvalue()


def write(target: Path) -> Path:
    """Write the referee file at ``target``, runnable by itself."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(referee_archive())
    target.chmod(0o755)
    return target


if __name__ == "__main__":
    print(write(Path(sys.argv[1] if len(sys.argv) > 1 else f"dist/{REFEREE_FILE}")))
