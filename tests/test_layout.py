"""The house's rules: where each thing lives, checked so that it stays there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "slackapp"


def python_modules() -> list[Path]:
    """The app's code: the package, and its migrations (shipped inside it)."""
    return sorted([*PACKAGE.rglob("*.py"), *(ROOT / "migrations").rglob("*.py")])


def test_the_environment_is_read_only_in_config() -> None:
    reads = re.compile(r"\bos\.environ\b|\bgetenv\b|\bfrom os import\b.*\benviron\b")
    readers = [
        str(path.relative_to(ROOT))
        for path in python_modules()
        if path.name != "config.py" or path.parent != PACKAGE
        if reads.search(path.read_text())
    ]
    assert readers == []
