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
    "0001": "61950cd19e31a54e",
    "0002": "62a2f9330e3cea2e",
    "0003": "c0ff9c8a71e9d285",
    "0004": "76849094d7a3221a",
    "0005": "f239290fb5b73cc4",
    "0006": "8b6121343681f2c5",
    "0007": "9a6acb2702a68c12",
    "0008": "469e0a56b131465f",
    "0009": "aa42a098a71abef0",
    "0010": "9578be5791947294",
    "0011": "cbdc6400ea205dcb",
    "0012": "08aaaee5efd47748",
    "0013": "a62c50f219044d11",
    "0014": "a536bcc908fd67b1",
    "0015": "004bd185501d43a5",
    "0016": "0ba699aadf4704fb",
    "0017": "a88c339ede879cf4",
    "0018": "9e462e9566437897",
    "0019": "5c294275ff806067",
    "0020": "765e3bb672a439ea",
    "0021": "4befb62809cd0559",
}
"""Each revision's fingerprint: a new revision adds its own here, once, when it is released."""

DOCUMENTED = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def fingerprint(source: str) -> str:
    """What a revision's source does, as Python parses it, without its docstrings (comments are
    not parsed)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, DOCUMENTED) and node.body and _is_docstring(node.body[0]):
            node.body = node.body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()[:16]


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
