"""Writing a step's effects into the outbox, in the step's own transaction."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, cast

from sqlalchemy import Connection, Table, func, insert, select

from slackapp.blocks.render import render
from slackapp.db.models import OutboxEntry
from slackapp.game import machine as m

log = logging.getLogger(__name__)

SAY = "say:"
TELL = "tell:"

Row = dict[str, Any]
OUTBOX = cast(Table, OutboxEntry.__table__)


class Addressed(Protocol):
    """A game, as far as its messages need to know where they go."""

    @property
    def id(self) -> int: ...
    @property
    def channel_id(self) -> str: ...
    @property
    def dm_channels(self) -> Mapping[str, str | None]:
        """Each seat's private message channel, once opened."""
        ...


def say_surface(number: int) -> str:
    return f"{SAY}{number}"


def tell_surface(user: str, number: int) -> str:
    return f"{TELL}{user}:{number}"


def latest_versions(connection: Connection, game_ids: Sequence[int]) -> dict[int, dict[str, int]]:
    """Each game's messages and the newest version of each, in one query."""
    latest: dict[int, dict[str, int]] = defaultdict(dict)
    if game_ids:
        for game_id, surface, version in connection.execute(
            select(OUTBOX.c.game_id, OUTBOX.c.surface, func.max(OUTBOX.c.version))
            .where(OUTBOX.c.game_id.in_(game_ids))
            .group_by(OUTBOX.c.game_id, OUTBOX.c.surface)
        ):
            latest[game_id][surface] = version
    return latest


def outbox_rows(game: Addressed, effects: Iterable[m.Effect], latest: dict[str, int]) -> list[Row]:
    """Each Show, Say and Tell as the next version of its message, rendered; ``latest`` (the
    game's messages and their newest versions) is brought up to date with them."""
    said = sum(1 for surface in latest if surface.startswith(SAY))
    told = sum(1 for surface in latest if surface.startswith(TELL))
    rows: list[Row] = []
    for effect in effects:
        row: Row = {"game_id": game.id, "attempts": 0, "channel": None, "user_id": None}
        match effect:
            case m.Show(surface, view):
                key = m.dm_key(surface)
                channel = game.channel_id if key is None else game.dm_channels.get(key)
                if channel is None:
                    log.warning("no private message channel for a seat: not shown")
                    continue
                screen = render(view)
                row |= {"surface": surface, "channel": channel, "text": screen.text}
                row["blocks"] = screen.as_dicts()
            case m.Say(text):
                said += 1
                row |= {"surface": say_surface(said), "channel": game.channel_id, "text": text}
                row["blocks"] = None
            case m.Tell(user, text):
                told += 1
                row |= {"surface": tell_surface(user, told), "user_id": user, "text": text}
                row["blocks"] = None
            case _:
                continue
        row["version"] = latest.get(row["surface"], 0) + 1
        latest[row["surface"]] = row["version"]
        rows.append(row)
    return rows


def write(connection: Connection, rows: list[Row]) -> None:
    """The rows in one statement (of any number of games)."""
    if rows:
        connection.execute(insert(OUTBOX), rows)


def enqueue(connection: Connection, game: Addressed, effects: Iterable[m.Effect]) -> int:
    """Add each Show, Say and Tell as the next version of its message; how many were added.

    Called with the game row locked, so versions of one game's messages never race.
    """
    effects = [e for e in effects if isinstance(e, m.Show | m.Say | m.Tell)]
    if not effects:
        return 0
    rows = outbox_rows(game, effects, latest_versions(connection, [game.id])[game.id])
    write(connection, rows)
    return len(rows)
