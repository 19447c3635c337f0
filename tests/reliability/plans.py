"""How PostgreSQL plans what the app sends: the statements an action sends, captured as they
go, and each one's plan (``EXPLAIN``, never run), for tests that hold a read to an index."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.orm import Session


def sent_while(
    engine: Engine, act: Callable[[Session], object], mentioning: str
) -> list[tuple[str, Any]]:
    """The statements mentioning ``mentioning`` that ``act(session)`` sends, with their
    parameters; what it wrote is rolled back."""
    sent: list[tuple[str, Any]] = []

    def keep(*args: Any) -> None:
        statement, parameters = args[2], args[3]
        if mentioning in statement:
            sent.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", keep)
    try:
        with Session(engine) as session:
            act(session)
    finally:
        event.remove(engine, "before_cursor_execute", keep)
    assert sent, f"no statement mentioning {mentioning!r} was sent"
    return sent


def plan_of(engine: Engine, statement: str, parameters: Any) -> dict[str, Any]:
    """The plan PostgreSQL makes for the statement with these parameters."""
    with engine.connect() as connection:
        found = connection.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {statement}", parameters)
        plan: dict[str, Any] = found.scalar_one()[0]["Plan"]
        return plan


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of the plan, outermost first."""
    yield plan
    for inner in plan.get("Plans", []):
        yield from nodes(inner)
