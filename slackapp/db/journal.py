"""The games' log: one line per phase change, written once the change is committed.

Steps change a game's phase inside their transaction (``slackapp.db.games``, which writes
every phase, a new table's included) and note the change in their session; a step that rolls
back (a lost race) changed nothing, so its line is dropped with it. With several processes on
one database each phase change is therefore logged exactly once, by the process that made it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

log = logging.getLogger("slackapp.games")

PENDING = "varulv_phase_changes"
"""Where a session keeps the changes noted until its transaction ends."""

WHAT_HAPPENED = {
    "lobby": "table opened",
    "night": "night began",
    "day": "day began",
    "vote": "vote opened",
    "over": "game revealed",
    "cancelled": "table cancelled",
    "stopped": "game stopped",
}


@dataclass(frozen=True)
class PhaseChange:
    game_id: int
    team_id: str
    channel_id: str
    previous: str | None
    phase: str


def keep_journal(sessions: sessionmaker[Session]) -> None:
    """Log the phase changes of every session ``sessions`` makes."""
    event.listen(sessions, "after_commit", _write)
    event.listen(sessions, "after_rollback", _forget)


def note(session: Session, changes: list[PhaseChange]) -> None:
    """Log ``changes`` once the session's transaction commits (not at all if it rolls back)."""
    if changes:
        session.info.setdefault(PENDING, []).extend(changes)


def _write(session: Session) -> None:
    log_changes(session.info.pop(PENDING, []))


def log_changes(changes: list[PhaseChange]) -> None:
    """Log ``changes``, committed already."""
    for change in changes:
        log.info(
            WHAT_HAPPENED.get(change.phase, f"phase {change.phase}"),
            extra={
                "team_id": change.team_id,
                "channel_id": change.channel_id,
                "game_id": change.game_id,
                "phase": change.phase,
                "previous_phase": change.previous,
            },
        )


def _forget(session: Session) -> None:
    session.info.pop(PENDING, None)
