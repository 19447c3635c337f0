"""The app's imports run one way: no module imports one that imports it back, however far round,
and no room (a package of ``slackapp``, or one of its top-level modules) leans on a room that
leans on it. So every room has a floor, each uses only those below it, and a change low in the
house cannot be caught in a loop with one above it. ``game/`` leans on nothing of the app."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "slackapp"

Graph = Mapping[str, Iterable[str]]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    """The package a relative import in ``path`` starts from: its own, or (for a package's
    ``__init__.py``) the package itself."""
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported(path: Path, known: set[str], package: str) -> set[str]:
    """The app's modules that ``path`` imports anywhere: at the top, inside a function, or for
    its types only (a circle through type hints is a circle a reader walks all the same), by
    its full name or relative to ``package``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = from_where(node, package)
            named = {f"{base}.{alias.name}" for alias in node.names}
            found |= named & known
            if named - known:  # a name the module defines, not a module of the package
                found.add(base)
    return {name for name in found if name in known}


def from_where(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from … import`` reads: ``from ..db import games`` in ``slackapp.services``
    reads ``slackapp.db``."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    start = parts[: len(parts) - node.level + 1]
    return ".".join([*start, node.module] if node.module else start)


def module_imports() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    known = set(paths)
    return {name: imported(path, known, package_of(path)) - {name} for name, path in paths.items()}


def room_of(module: str) -> str:
    """``slackapp.db.games`` is in ``db``; ``slackapp.app`` is a room of its own."""
    return module.split(".")[1] if module.count(".") else module


def room_imports(modules: Graph) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for module, names in modules.items():
        room = room_of(module)
        others = {room_of(name) for name in names if name.count(".")}
        rooms.setdefault(room, set()).update(others - {room})
    return rooms


def circle(graph: Graph) -> list[str] | None:
    """One circle of ``graph`` (its nodes in order, the first again at the end), or None."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str] | None:
        if node in on_path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        path.append(node)
        on_path.add(node)
        for after in sorted(graph.get(node, ())):
            found = visit(after)
            if found is not None:
                return found
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start)
        if found is not None:
            return found
    return None


def test_no_module_of_the_app_imports_itself_round_a_circle() -> None:
    modules = module_imports()
    assert len(modules) > 100
    assert circle(modules) is None


def test_every_room_leans_only_on_rooms_below_it() -> None:
    rooms = room_imports(module_imports())
    assert {"game", "blocks", "db", "delivery", "services", "listeners"} <= set(rooms)
    assert circle(rooms) is None


def test_the_rules_lean_on_nothing_else_of_the_app() -> None:
    rooms = room_imports(module_imports())
    assert rooms["game"] == set()
    assert "game" in rooms["blocks"]


def test_a_circle_is_found_however_far_round() -> None:
    assert circle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert circle({"a": ["b", "c"], "b": ["c"], "c": []}) is None
    assert circle({"a": ["a"]}) == ["a", "a"]


def test_imports_are_read_wherever_they_stand(tmp_path: Path) -> None:
    source = tmp_path / "example.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import slackapp.blocks.lobby as lobby_screen\n"
        "from slackapp.db import games\n"
        "from slackapp.game import Card\n"
        "if TYPE_CHECKING:\n"
        "    from slackapp.game.machine import GameState\n"
        "def later():\n"
        "    from slackapp.delivery.outbox import notice\n"
        "from . import channel\n"
        "from ..names import Names\n"
        "from .. import permits\n"
    )
    imports = {
        "slackapp.blocks.lobby",
        "slackapp.db.games",  # the module named, not its package
        "slackapp.game",  # a name its package defines
        "slackapp.game.machine",
        "slackapp.delivery.outbox",
        "slackapp.services.channel",  # relative to its package
        "slackapp.names",
        "slackapp.permits",
    }
    known = {*imports, "slackapp", "slackapp.db", "slackapp.game.cards", "slackapp.services"}
    assert imported(source, known, "slackapp.services") == imports
    rooms = room_imports({"slackapp.services.game": imports})
    assert rooms == {"services": {"blocks", "db", "game", "delivery", "names", "permits"}}
