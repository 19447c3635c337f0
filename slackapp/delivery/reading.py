"""Reading what games have to show: their undelivered outbox rows and where each message is in
Slack, as plain values (``slackapp.delivery.plan``), in one statement for many games (two,
at most, for the games a drain holds)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Text, and_, bindparam, cast, select

from slackapp.db.models import OutboxEntry, SlackMessage
from slackapp.delivery.drain import ToShow
from slackapp.delivery.leases import STILL_HELD
from slackapp.delivery.plan import Entry, Shown, pending_of
from slackapp.delivery.slack import WorkspaceId

UNDELIVERED = (
    select(
        OutboxEntry.game_id,
        OutboxEntry.surface,
        OutboxEntry.version,
        OutboxEntry.channel,
        OutboxEntry.user_id,
        OutboxEntry.text,
        cast(OutboxEntry.blocks, Text),  # decoded only if sent: see ``Entry.blocks``
        OutboxEntry.due_at,
        OutboxEntry.attempts,
        OutboxEntry.response_url,
        OutboxEntry.settles,
        OutboxEntry.response_ts,
        OutboxEntry.team_id,
        OutboxEntry.enterprise_id,
        SlackMessage.channel,
        SlackMessage.ts,
        SlackMessage.version,
        SlackMessage.unsure_until,
    )
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
its workspace (and Grid organisation) and where its message is in Slack (the channel,
``ts`` and version it shows, and until when a call of unknown outcome may still redraw it),
if it was posted. Built once, here: building a statement is a
good part of the cost of running it."""
UNDELIVERED_HELD = UNDELIVERED.where(OutboxEntry.game_id.in_(STILL_HELD))
"""The same, of the games whose leases a holder has for a while yet: the reads of games a
drain holds (a step took them, or the drain read them before), as one statement."""


def read(connection: Connection, game_ids: Collection[int]) -> dict[int, ToShow]:
    """Each of the games (all of them, those with nothing to show too)."""
    found = _to_show(connection.execute(UNDELIVERED, {"games": list(game_ids)}))
    return {game_id: found.get(game_id) or ToShow(WorkspaceId("")) for game_id in game_ids}


def read_held(
    connection: Connection, holder: str, game_ids: Collection[int], until: datetime
) -> dict[int, ToShow]:
    """Those of the games whose leases ``holder`` has until ``until`` at least (see
    ``leases.held_until``), those with nothing undelivered too, in reads that write nothing,
    so nothing waits for the disk: one, and a second for the games the first left out (with
    nothing undelivered, or no longer held). A game left out is for a claim to find."""
    games = sorted(game_ids)
    held = {"games": games, "by": holder, "until": until}
    found = _to_show(connection.execute(UNDELIVERED_HELD, held))
    if idle := [game_id for game_id in games if game_id not in found]:
        held_idle = connection.scalars(STILL_HELD, held | {"games": idle})
        found |= {game_id: ToShow(WorkspaceId("")) for game_id in held_idle}
    return found


def _to_show(rows: Iterable[Sequence[Any]]) -> dict[int, ToShow]:
    """Rows of ``UNDELIVERED``, by game."""
    teams: dict[int, WorkspaceId] = {}
    entries: dict[int, list[Entry]] = {}
    shown: dict[int, dict[str, Shown]] = {}
    for row in rows:
        entry = Entry(*row[:12])
        team_id, enterprise_id, channel, ts, version, unsure_until = row[12:]
        teams[entry.game_id] = WorkspaceId(team_id, enterprise_id)
        entries.setdefault(entry.game_id, []).append(entry)
        if ts is not None:
            at = Shown(channel, ts, version, unsure_until)
            shown.setdefault(entry.game_id, {})[entry.surface] = at
    return {
        game_id: ToShow(team, pending_of(entries[game_id], shown.get(game_id, {})))
        for game_id, team in teams.items()
    }
