"""The games' log: one line per phase change, written once the change is committed.

Steps change a game's phase inside their transaction, noting the change in their session (as
the ORM's flush does for a ``Game`` it writes); a step that rolls back (a lost race) changed
nothing, so its line is dropped with it. With several processes on one database each phase
change is therefore logged exactly once, by the process that made it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event, inspect
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.models import Game

log = logging.getLogger("slackapp.games")

PENDING = "varulv_phase_changes"
"""Where a session keeps the changes it flushed until its transaction ends."""

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
    event.listen(sessions, "after_flush", _note)
    event.listen(sessions, "after_commit", _write)
    event.listen(sessions, "after_rollback", _forget)


def note(session: Session, changes: list[PhaseChange]) -> None:
    """Log ``changes`` once the session's transaction commits (not at all if it rolls back)."""
    if changes:
        session.info.setdefault(PENDING, []).extend(changes)


def _note(session: Session, _flush_context: Any) -> None:
    # After a flush the objects still carry their history, and new games have their ids.
    for game in [*session.new, *session.dirty]:
        if not isinstance(game, Game):
            continue
        history = inspect(game).attrs.phase.history
        if not history.added:
            continue
        previous = str(history.deleted[0]) if history.deleted else None
        change = PhaseChange(
            game.id, game.team_id, game.channel_id, previous, str(history.added[-1])
        )
        note(session, [change])


def _write(session: Session) -> None:
    for change in session.info.pop(PENDING, []):
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
