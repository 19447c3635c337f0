"""One live copy of every message.

A post Slack took whose ``ts`` was lost in a crash is posted again (Slack's API has no
idempotency key), so a person may hold two identical copies of one message, both with live
buttons, while the deliverer redraws only the copy it recorded. When a click comes from the
other copy (the payload's ``container.message_ts``), that copy becomes the message: its ``ts``
is recorded, it is redrawn with the newest version, and the copy recorded until then is deleted.
So exactly one copy keeps live buttons, and the click changes the message that was clicked.

The deletion is an outbox entry of its own, ``drop:<ts>``, which the deliverer sends as
``chat.delete``; a click on a copy that is being (or was) deleted changes no record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlalchemy import Connection, Table, select, update

from slackapp.db.models import SlackMessage
from slackapp.delivery.outbox import ADD, OUTBOX, Row

DROP = "drop:"

MESSAGES = cast(Table, SlackMessage.__table__)
UNKNOWN_VERSION = 0
"""What an adopted copy is recorded to show: older than any version, so the newest is sent."""


@dataclass(frozen=True)
class Copy:
    """The copy of a game's message a click came from, as the signed payload names it."""

    surface: str
    channel: str
    ts: str
    response_url: str | None = None
    """The click's own, through which the message it was on can be redrawn."""


def drop_surface(ts: str) -> str:
    return f"{DROP}{ts}"


def dropped_ts(surface: str) -> str | None:
    """The ``ts`` of the copy an outbox entry deletes, or None for a message to show."""
    return surface.removeprefix(DROP) if surface.startswith(DROP) else None


@dataclass(frozen=True)
class Adopted:
    """What :func:`adopt` did with a clicked copy."""

    rows: int
    """How many outbox entries were added (a redraw, and the other copy's deletion)."""
    is_the_message: bool
    """The clicked copy is the game's message now, so the click's ``response_url`` redraws
    it; not for a copy being deleted or one the app does not know."""


def adopt(connection: Connection, stream: int, clicked: Copy) -> Adopted:
    """Make the clicked copy the game's message, unless it is the one recorded already.

    Called with the game row locked, in the click's own step, so the redraw comes before the
    step's own new version of the message and the deliverer shows only the newer one. The
    copy must be in the message's own conversation (the one its versions are addressed to).
    """
    recorded = connection.execute(
        select(MESSAGES.c.channel, MESSAGES.c.ts).where(
            MESSAGES.c.stream == stream, MESSAGES.c.surface == clicked.surface
        )
    ).first()
    if recorded is not None and tuple(recorded) == (clicked.channel, clicked.ts):
        return Adopted(0, True)  # the common case, one read by primary key
    newest = connection.execute(
        select(
            OUTBOX.c.team_id,
            OUTBOX.c.enterprise_id,
            OUTBOX.c.channel,
            OUTBOX.c.user_id,
            OUTBOX.c.text,
            OUTBOX.c.blocks,
            OUTBOX.c.settles,
        )
        .where(OUTBOX.c.stream == stream, OUTBOX.c.surface == clicked.surface)
        .order_by(OUTBOX.c.version.desc())
        .limit(1)
    ).first()
    if newest is None or newest.channel != clicked.channel:
        return Adopted(0, False)  # not a message of this game's that went there
    if recorded is None:
        # The copy clicked is being recorded just now (a post's landing is recorded off the
        # path of the next click), so the click's answer redraws it; if its ts was lost in a
        # crash, the message is posted again at its newest version and the URL goes unused.
        return Adopted(0, True)
    being_dropped = connection.execute(
        select(OUTBOX.c.id)
        .where(OUTBOX.c.stream == stream, OUTBOX.c.surface == drop_surface(clicked.ts))
        .limit(1)
    ).first()
    if being_dropped is not None:
        return Adopted(0, False)  # the copy clicked is going away: the recorded one stays
    connection.execute(
        update(MESSAGES)
        .where(MESSAGES.c.stream == stream, MESSAGES.c.surface == clicked.surface)
        .values(channel=clicked.channel, ts=clicked.ts, version=UNKNOWN_VERSION)
    )
    base: Row = {
        "stream": stream,
        "of_stream": stream,
        "team_id": newest.team_id,
        "enterprise_id": newest.enterprise_id,
        "settles": False,
    }
    rows: list[Row] = [
        base
        | {  # the newest version again, on the copy clicked, through the click's own answer
            "surface": clicked.surface,
            "of_surface": clicked.surface,
            "channel": newest.channel,
            "user_id": newest.user_id,
            "text": newest.text,
            "blocks": newest.blocks,
            "response_url": clicked.response_url,
            "response_ts": clicked.ts,
            "settles": newest.settles,
        }
    ]
    rows.append(
        base
        | {
            "surface": drop_surface(recorded.ts),
            "of_surface": drop_surface(recorded.ts),
            "channel": recorded.channel,
            "user_id": None,
            "text": recorded.ts,
            "blocks": None,
            "response_url": None,
            "response_ts": None,
        }
    )
    connection.execute(ADD, rows)
    return Adopted(len(rows), True)
