"""Reading what games have to show: their undelivered outbox rows and where each message is in
Slack, as plain values (``slackapp.delivery.plan``), in one statement for many games."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from sqlalchemy import Connection, and_, bindparam, select

from slackapp.db.models import Game, OutboxEntry, SlackMessage
from slackapp.delivery.plan import Entry, Pending, Shown, pending_of
from slackapp.delivery.slack import WorkspaceId

UNDELIVERED = (
    select(
        OutboxEntry.game_id,
        OutboxEntry.surface,
        OutboxEntry.version,
        OutboxEntry.channel,
        OutboxEntry.user_id,
        OutboxEntry.text,
        OutboxEntry.blocks,
        OutboxEntry.due_at,
        OutboxEntry.attempts,
        OutboxEntry.response_url,
        OutboxEntry.settles,
        OutboxEntry.response_ts,
        Game.team_id,
        Game.enterprise_id,
        SlackMessage.channel,
        SlackMessage.ts,
        SlackMessage.version,
    )
    .join(Game, Game.id == OutboxEntry.game_id)
    .outerjoin(
        SlackMessage,
        and_(
            SlackMessage.game_id == OutboxEntry.game_id,
            SlackMessage.surface == OutboxEntry.surface,
        ),
    )
    .where(
        OutboxEntry.done_at.is_(None), OutboxEntry.game_id.in_(bindparam("games", expanding=True))
    )
    .order_by(OutboxEntry.id)
)
"""The undelivered entries of the games, as the columns of an ``Entry`` in its order, each with
its game's workspace (and Grid organisation) and where its message is in Slack (the channel,
``ts`` and version it shows), if it was posted. Built once, here: building a statement is a
good part of the cost of running it."""


@dataclass
class ToShow:
    """One game's workspace and its undelivered messages."""

    workspace: WorkspaceId
    pending: list[Pending] = field(default_factory=list)


def read(connection: Connection, game_ids: Collection[int]) -> dict[int, ToShow]:
    """Each of the games (all of them, those with nothing to show too)."""
    teams: dict[int, WorkspaceId] = {}
    entries: dict[int, list[Entry]] = {}
    shown: dict[int, dict[str, Shown]] = {}
    for row in connection.execute(UNDELIVERED, {"games": list(game_ids)}):
        entry = Entry(*row[:12])
        team_id, enterprise_id, channel, ts, version = row[12:]
        teams[entry.game_id] = WorkspaceId(team_id, enterprise_id)
        entries.setdefault(entry.game_id, []).append(entry)
        if ts is not None:
            shown.setdefault(entry.game_id, {})[entry.surface] = Shown(channel, ts, version)
    return {
        game_id: ToShow(
            teams.get(game_id, WorkspaceId("")),
            pending_of(entries.get(game_id, []), shown.get(game_id, {})),
        )
        for game_id in game_ids
    }
