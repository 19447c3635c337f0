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


def layout_rooms() -> dict[str, str]:
    """docs/layout.md's rooms of the app: each top-level bullet's first name, and its text."""
    layout = (ROOT / "docs" / "layout.md").read_text()
    section = layout.split("\n## The app, room by room\n", 1)[1].split("\n## ", 1)[0]
    rooms: dict[str, str] = {}
    for bullet in re.split(r"\n(?=- )", section):
        named = re.match(r"- `([^`]+)`", bullet.strip())
        if named:
            rooms[named.group(1)] = bullet
    return rooms


def test_the_layout_names_every_room_of_the_app() -> None:
    rooms = layout_rooms()
    missing = []
    for path in sorted(PACKAGE.iterdir()):
        if path.name.startswith(("_", ".")) or path.suffix not in (".py", ""):
            continue
        room = f"slackapp/{path.name}" + ("/" if path.is_dir() else "")
        if room not in rooms:
            missing.append(room)
            continue
        if path.is_dir():  # each module, and any folder it keeps, named in the package's bullet
            inside = [*path.glob("*.py"), *(p for p in path.iterdir() if p.is_dir())]
            names = [part.name + ("/" if part.is_dir() else "") for part in sorted(inside)]
            missing += [
                f"{room}{name}"
                for name in names
                if name not in ("__init__.py", "__pycache__/") and f"`{name}`" not in rooms[room]
            ]
    assert missing == []
