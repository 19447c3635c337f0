"""A migration a database may have run is never edited: a database it ran on would not get the
change, and every later revision would go past it. A change to the schema is a revision of its
own. Each revision's code (its docstrings and comments aside, which may be mended) is held to
the fingerprint it was released with."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

MIGRATIONS = Path(__file__).parent.parent / "migrations" / "versions"

RELEASED = {
    "0001": "6f11c53dfa565c7f",
    "0002": "194c2bfe5491bc19",
    "0003": "fc41feaaed362ede",
    "0004": "e08ba70d62e13f91",
    "0005": "cc8ae5486a36930c",
    "0006": "1f269b690e60ae8e",
    "0007": "38503db6d5a555db",
    "0008": "a0c24de61afd82c3",
    "0009": "3a61ba0d78f122cb",
    "0010": "044168e2c6577fb7",
    "0011": "1a50a1e8b9a6b8ac",
    "0012": "05de4d01169b8d0f",
    "0013": "388e706a4430f3d3",
    "0014": "51954d018a37f499",
    "0015": "ab734649715594b6",
    "0016": "4db6907c4ff0b304",
    "0017": "27ee4d02418b35d3",
    "0018": "e8f0a988d6f51468",
    "0019": "a2e42d028735a87e",
    "0020": "f8e155e4ed976151",
    "0021": "89154581e70253f7",
    "0022": "646c812288536e5c",
    "0023": "13e8ec42c56183a1",
    "0024": "8e8715f2564866fb",
}
"""Each revision's fingerprint: a new revision adds its own here, once, when it is released."""

DOCUMENTED = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def fingerprint(source: str) -> str:
    """What a revision's source does, as Python parses it, without its docstrings (comments are
    not parsed), written back out as Python (``ast.dump`` differs between versions)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, DOCUMENTED) and node.body and _is_docstring(node.body[0]):
            node.body = node.body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.unparse(tree).encode()).hexdigest()[:16]  # alike on every Python


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def test_no_released_revision_is_edited_and_each_new_one_is_recorded() -> None:
    found = {path.stem[:4]: fingerprint(path.read_text()) for path in MIGRATIONS.glob("0*.py")}
    edited = {name for name in RELEASED.keys() & found.keys() if found[name] != RELEASED[name]}
    assert not edited, f"released revisions edited: {sorted(edited)}; add a revision instead"
    assert found.keys() == RELEASED.keys(), (
        f"new revisions to record: {sorted(found.keys() - RELEASED.keys())}; "
        f"revisions gone: {sorted(RELEASED.keys() - found.keys())}"
    )


def test_a_fingerprint_sees_code_and_not_words() -> None:
    plain = '"""Add a column."""\ndef upgrade() -> None:\n    """Upgrade."""\n    add("a")\n'
    reworded = '"""Add the column."""\n# why\ndef upgrade() -> None:\n    """Up."""\n    add("a")\n'
    changed = plain.replace('add("a")', 'add("b")')
    assert fingerprint(plain) == fingerprint(reworded) != fingerprint(changed)
