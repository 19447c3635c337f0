"""Writing a step's effects into the outbox, in the step's own transaction."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from typing import Any

from sqlalchemy import ColumnElement, String, cast, func, insert, literal, null, select
from sqlalchemy.orm import Session

from slackapp.blocks.render import render
from slackapp.db.models import Game, OutboxEntry
from slackapp.game import machine as m

log = logging.getLogger(__name__)

SAY = "say:"
TELL = "tell:"


def say_surface(number: int) -> str:
    return f"{SAY}{number}"


def tell_surface(user: str, number: int) -> str:
    return f"{TELL}{user}:{number}"


def _latest_version(game_id: int, surface: str) -> ColumnElement[int]:
    return (
        select(func.coalesce(func.max(OutboxEntry.version), 0))
        .where(OutboxEntry.game_id == game_id, OutboxEntry.surface == surface)
        .scalar_subquery()
    )


def _lines_so_far(game_id: int, prefix: str) -> ColumnElement[int]:
    """How many one-off messages (lines, private words) the game already has."""
    return (
        select(func.count(func.distinct(OutboxEntry.surface)))
        .where(OutboxEntry.game_id == game_id, OutboxEntry.surface.startswith(prefix))
        .scalar_subquery()
    )


def _numbered(prefix: str, number: ColumnElement[int]) -> ColumnElement[str]:
    return literal(prefix, String) + cast(number, String)


def enqueue(session: Session, game: Game, effects: Iterable[m.Effect]) -> int:
    """Add each Show, Say and Tell as the next version of its message; how many were added.

    Called with the game row locked, so versions of one game's messages never race. Everything
    is rendered first and written in one statement: each row's version (and a line's number)
    is worked out by the database in that statement, so the lock waits on one round trip.
    """
    dm_channels = {seat.key: seat.dm_channel for seat in game.seats}
    repeats: Counter[str] = Counter()
    said = told = 0
    rows: list[dict[str, Any]] = []
    for effect in effects:
        row: dict[str, Any] = {
            "game_id": game.id,
            "attempts": 0,
            "channel": None,
            "user_id": None,
            "blocks": null(),
        }
        match effect:
            case m.Show(surface, view):
                key = m.dm_key(surface)
                channel = game.channel_id if key is None else dm_channels.get(key)
                if channel is None:
                    log.warning("no private message channel for a seat: not shown")
                    continue
                screen = render(view)
                repeats[surface] += 1
                row |= {
                    "surface": surface,
                    "version": _latest_version(game.id, surface) + repeats[surface],
                    "channel": channel,
                    "text": screen.text,
                    "blocks": screen.as_dicts(),
                }
            case m.Say(text):
                said += 1
                row |= {
                    "surface": _numbered(SAY, _lines_so_far(game.id, SAY) + said),
                    "version": 1,
                    "channel": game.channel_id,
                    "text": text,
                }
            case m.Tell(user, text):
                told += 1
                row |= {
                    "surface": _numbered(f"{TELL}{user}:", _lines_so_far(game.id, TELL) + told),
                    "version": 1,
                    "user_id": user,
                    "text": text,
                }
            case _:
                continue
        rows.append(row)
    if rows:
        session.execute(insert(OutboxEntry).values(rows))
    return len(rows)
