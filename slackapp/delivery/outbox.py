"""Writing a step's effects into the outbox, in the step's own transaction."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from slackapp.blocks.render import render
from slackapp.db.models import Game, OutboxEntry
from slackapp.game import machine as m

log = logging.getLogger(__name__)


def say_surface(number: int) -> str:
    return f"say:{number}"


def tell_surface(user: str, number: int) -> str:
    return f"tell:{user}:{number}"


def enqueue(session: Session, game: Game, effects: Iterable[m.Effect]) -> int:
    """Add each Show, Say and Tell as the next version of its message; how many were added.

    Called with the game row locked, so versions of one game's messages never race.
    """
    shown = [effect for effect in effects if isinstance(effect, m.Show | m.Say | m.Tell)]
    if not shown:
        return 0
    latest = dict(
        session.execute(
            select(OutboxEntry.surface, func.max(OutboxEntry.version))
            .where(OutboxEntry.game_id == game.id)
            .group_by(OutboxEntry.surface)
        ).all()
    )
    said = sum(1 for surface in latest if surface.startswith("say:"))
    told = sum(1 for surface in latest if surface.startswith("tell:"))
    dm_channels = {seat.key: seat.dm_channel for seat in game.seats}
    added = 0
    for effect in shown:
        entry = OutboxEntry(game_id=game.id, attempts=0)
        match effect:
            case m.Show(surface, view):
                screen = render(view)
                key = m.dm_key(surface)
                channel = game.channel_id if key is None else dm_channels.get(key)
                if channel is None:
                    log.warning("no private message channel for a seat: not shown")
                    continue
                entry.surface, entry.channel = surface, channel
                entry.text, entry.blocks = screen.text, screen.as_dicts()
            case m.Say(text):
                said += 1
                entry.surface, entry.channel, entry.text = say_surface(said), game.channel_id, text
            case m.Tell(user, text):
                told += 1
                entry.surface, entry.user_id, entry.text = tell_surface(user, told), user, text
        entry.version = latest.get(entry.surface, 0) + 1
        latest[entry.surface] = entry.version
        session.add(entry)
        added += 1
    return added
