"""Listeners translate payloads and call the steps: none opens a transaction, reaches the
database or posts to a channel itself (every message goes through the outbox)."""

from __future__ import annotations

import ast
from pathlib import Path

LISTENERS = Path(__file__).resolve().parent.parent / "slackapp" / "listeners"

ALLOWED_SQLALCHEMY = ("sqlalchemy.exc",)
"""A failed step's error may be caught and answered; nothing else of SQLAlchemy belongs here."""
FORBIDDEN_MODULES = ("slackapp.db.engine", "slackapp.delivery.outbox", "psycopg")
FORBIDDEN_NAMES = frozenset({"transaction", "Session", "sessionmaker", "enqueue"})
FORBIDDEN_ATTRIBUTES = frozenset({"sessions", "begin", "connection", "execute", "scalars"})
"""``steps.sessions`` handed to a database function opens a transaction all the same."""


def offences(source: str) -> list[str]:
    """What in a listener module's source reaches the database or posts to a channel."""
    found = []
    for node in ast.walk(ast.parse(source)):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
            found += [
                f"line {node.lineno}: imports {alias.name}"
                for alias in node.names
                if alias.name in FORBIDDEN_NAMES
            ]
        for module in modules:
            sqlalchemy = module.split(".")[0] == "sqlalchemy" and module not in ALLOWED_SQLALCHEMY
            if sqlalchemy or module.startswith(FORBIDDEN_MODULES):
                found.append(f"imports {module}")
        if isinstance(node, ast.Attribute):
            if node.attr in FORBIDDEN_ATTRIBUTES:
                found.append(f"line {node.lineno}: uses .{node.attr}")
            if node.attr.startswith("chat_") or node.attr.startswith("chat."):
                found.append(f"line {node.lineno}: calls Slack's {node.attr}")
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            found.append(f"line {node.lineno}: uses {node.id}")
        if isinstance(node, ast.Constant) and node.value in ("chat.postMessage", "chat.update"):
            found.append(f"line {node.lineno}: calls Slack's {node.value}")
    return found


def test_no_listener_opens_a_transaction_or_posts_to_a_channel() -> None:
    modules = sorted(LISTENERS.glob("*.py"))
    assert len(modules) >= 5
    found = {path.name: offences(path.read_text()) for path in modules}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_check_finds_what_listeners_used_to_do() -> None:
    """Posting a settings notice with the client, and storing with a transaction of its own."""
    source = """
from sqlalchemy import select
from slackapp.db.engine import transaction

def announce(client, steps, channel):
    client.chat_postMessage(channel=channel, text="changed")
    with transaction(steps.sessions) as session:
        session.execute(select(1))
    client.api_call("chat.postMessage", json={})
"""
    found = offences(source)
    for expected in (
        "imports sqlalchemy",
        "imports slackapp.db.engine",
        "imports transaction",
        "chat_postMessage",
        "uses transaction",
        "uses .sessions",
        "uses .execute",
        "calls Slack's chat.postMessage",
    ):
        assert any(expected in line for line in found), expected
    assert offences("from sqlalchemy.exc import SQLAlchemyError\n") == []
