"""Reading what streams have to show: their undelivered outbox rows and where each message is in
Slack, as plain values (``slackapp.delivery.plan``), in one statement for many streams (two,
at most, for the streams a drain holds)."""

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
        OutboxEntry.stream,
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
            SlackMessage.stream == OutboxEntry.stream,
            SlackMessage.surface == OutboxEntry.surface,
        ),
    )
    .where(
        OutboxEntry.done_at.is_(None), OutboxEntry.stream.in_(bindparam("streams", expanding=True))
    )
    .order_by(OutboxEntry.id)
)
"""The undelivered entries of the streams, as the columns of an ``Entry`` in its order, each with
its workspace (and Grid organisation) and where its message is in Slack (the channel,
``ts`` and version it shows, and until when a call of unknown outcome may still redraw it),
if it was posted. Built once, here: building a statement is a
good part of the cost of running it."""
UNDELIVERED_HELD = UNDELIVERED.where(OutboxEntry.stream.in_(STILL_HELD))
"""The same, of the streams whose leases a holder has for a while yet: the reads of streams a
drain holds (a step took them, or the drain read them before), as one statement."""


def read(connection: Connection, streams: Collection[int]) -> dict[int, ToShow]:
    """Each of the streams (all of them, those with nothing to show too)."""
    found = _to_show(connection.execute(UNDELIVERED, {"streams": list(streams)}))
    return {stream: found.get(stream) or ToShow(WorkspaceId("")) for stream in streams}


def read_held(
    connection: Connection, holder: str, streams: Collection[int], until: datetime
) -> dict[int, ToShow]:
    """Those of the streams whose leases ``holder`` has until ``until`` at least (see
    ``leases.held_until``), those with nothing undelivered too, in reads that write nothing,
    so nothing waits for the disk: one, and a second for the streams the first left out (with
    nothing undelivered, or no longer held). A stream left out is for a claim to find."""
    ordered = sorted(streams)
    held = {"streams": ordered, "by": holder, "until": until}
    found = _to_show(connection.execute(UNDELIVERED_HELD, held))
    if idle := [stream for stream in ordered if stream not in found]:
        held_idle = connection.scalars(STILL_HELD, held | {"streams": idle})
        found |= {stream: ToShow(WorkspaceId("")) for stream in held_idle}
    return found


def _to_show(rows: Iterable[Sequence[Any]]) -> dict[int, ToShow]:
    """Rows of ``UNDELIVERED``, by stream."""
    teams: dict[int, WorkspaceId] = {}
    entries: dict[int, list[Entry]] = {}
    shown: dict[int, dict[str, Shown]] = {}
    for row in rows:
        entry = Entry(*row[:12])
        team_id, enterprise_id, channel, ts, version, unsure_until = row[12:]
        teams[entry.stream] = WorkspaceId(team_id, enterprise_id)
        entries.setdefault(entry.stream, []).append(entry)
        if ts is not None:
            at = Shown(channel, ts, version, unsure_until)
            shown.setdefault(entry.stream, {})[entry.surface] = at
    return {
        stream: ToShow(team, pending_of(entries[stream], shown.get(stream, {})))
        for stream, team in teams.items()
    }
