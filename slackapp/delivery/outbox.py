"""Writing a step's effects into the outbox, in the step's own transaction."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol, cast

from sqlalchemy import (
    Connection,
    Table,
    bindparam,
    exists,
    func,
    insert,
    select,
    tuple_,
    update,
)

from slackapp.blocks.render import render
from slackapp.blocks.said import said, said_or_text
from slackapp.blocks.words import words
from slackapp.db.models import NOTICE_SURFACE, OutboxEntry
from slackapp.game.effects import Effect, Say, Show, Tell, dm_key, settles
from slackapp.game.lines import Language

log = logging.getLogger(__name__)

SAY = "say:"
TELL = "tell:"
NOTICE = NOTICE_SURFACE

Row = dict[str, Any]
OUTBOX = cast(Table, OutboxEntry.__table__)


class Addressed(Protocol):
    """A game, as far as its messages need to know where they go."""

    @property
    def id(self) -> int: ...
    @property
    def team_id(self) -> str: ...
    @property
    def enterprise_id(self) -> str | None: ...
    @property
    def channel_id(self) -> str: ...
    @property
    def dm_channels(self) -> Mapping[str, str | None]:
        """Each seat's private message channel, once opened."""
        ...

    @property
    def language(self) -> str:
        """The words its messages are drawn in."""
        ...


_NEWEST = (
    select(func.coalesce(func.max(OUTBOX.c.version), 0))
    .where(OUTBOX.c.stream == bindparam("of_stream"), OUTBOX.c.surface == bindparam("of_surface"))
    .scalar_subquery()
)
_RETRYING = (
    OUTBOX.c.stream == bindparam("of_stream"),
    OUTBOX.c.surface == bindparam("of_surface"),
    OUTBOX.c.done_at.is_(None),
    OUTBOX.c.attempts > 0,
)
ADD = insert(OUTBOX).values(
    version=_NEWEST + 1,
    due_at=func.greatest(
        func.now(), select(func.max(OUTBOX.c.due_at)).where(*_RETRYING).scalar_subquery()
    ),
    attempts=func.coalesce(
        select(func.max(OUTBOX.c.attempts)).where(*_RETRYING).scalar_subquery(), 0
    ),
)
"""A message's next version, numbered by the database as the row goes in: steps hold their
game's lock (a notice's stream is its own), so no other step adds a version meanwhile, and no
read of the versions is needed first. Rows sent together are inserted one after another
(psycopg's ``executemany``), so a message shown twice in one step gets two versions in turn
(a test holds to it). A version written while the message waits out a failure (Slack's
``Retry-After``, a backoff) waits with it and counts its tries: only the newest version's wait
holds a message back (``delivery.plan``)."""


def say_surface() -> str:
    """A line said in the channel: a message of its own, posted once."""
    return f"{SAY}{uuid.uuid4().hex[:16]}"


def tell_surface(user: str) -> str:
    """A private word to ``user``: a message of its own, posted once."""
    return f"{TELL}{user}:{uuid.uuid4().hex[:16]}"


def notice_surface(about: str) -> str:
    """A channel's notice of a change ``about`` (what changed; empty for a notice of none): a
    message of its own, posted once, that names what it tells of."""
    return f"{NOTICE}{about}:{uuid.uuid4().hex[:16]}"


def _row(stream: int, team_id: str, enterprise_id: str | None) -> Row:
    """An entry of the stream, before what it shows and where: nothing answered or settled."""
    return {
        "stream": stream,
        "team_id": team_id,
        "enterprise_id": enterprise_id,
        "channel": None,
        "user_id": None,
        "response_url": None,
        "response_ts": None,
        "settles": False,
    }


def _numbered(row: Row) -> Row:
    """The row with what ``ADD`` numbers its version by: its own stream and surface."""
    return row | {"of_stream": row["stream"], "of_surface": row["surface"]}


def outbox_rows(game: Addressed, effects: Iterable[Effect]) -> list[Row]:
    """Each Show, Say and Tell as the next version of its message, rendered."""
    rows: list[Row] = []
    said_in = words(Language(game.language))
    for effect in effects:
        row = _row(game.id, game.team_id, game.enterprise_id)
        match effect:
            case Show(surface, view):
                key = dm_key(surface)
                channel = game.channel_id if key is None else game.dm_channels.get(key)
                if channel is None:
                    log.warning("no private message channel for a seat: not shown")
                    continue
                screen = render(view, said_in)
                row |= {"surface": surface, "channel": channel, "text": screen.text}
                row["settles"] = settles(view)
                row["blocks"] = screen.as_dicts()
            case Say(text):
                line = said_or_text(text, said_in)
                row |= {"surface": say_surface(), "channel": game.channel_id, "text": line}
                row["blocks"] = None
            case Tell(user, text):
                told = said(text, said_in)
                row |= {"surface": tell_surface(user), "user_id": user, "text": told}
                row["blocks"] = None
            case _:
                continue
        rows.append(_numbered(row))
    return rows


def answering(rows: list[Row], surface: str, response_url: str | None, ts: str) -> None:
    """The versions of the clicked message ``surface`` answer the click on its copy ``ts``:
    they carry its ``response_url`` (see ``OutboxEntry.response_url``)."""
    if response_url:
        for row in rows:
            if row["surface"] == surface:
                row["response_url"], row["response_ts"] = response_url, ts


CLICK_KEPT = timedelta(minutes=25)
"""How long after a click its ``response_url`` is lent to its message's last word: Slack takes
one five times within thirty minutes."""
_RECENT_CLICKS = (
    select(OUTBOX.c.stream, OUTBOX.c.surface, OUTBOX.c.response_url, OUTBOX.c.response_ts)
    .where(
        tuple_(OUTBOX.c.stream, OUTBOX.c.surface).in_(bindparam("messages", expanding=True)),
        OUTBOX.c.response_url.is_not(None),
    )
    .group_by(OUTBOX.c.stream, OUTBOX.c.surface, OUTBOX.c.response_url, OUTBOX.c.response_ts)
    .having(func.min(OUTBOX.c.created_at) > func.now() - CLICK_KEPT)
    .order_by(func.max(OUTBOX.c.version))
)
"""The messages' clicks still young enough to answer through (their age from the version that
first carried them, not one that borrowed them), oldest first: a few each."""


def lend_last_clicks(connection: Connection, rows: list[Row]) -> None:
    """A message's last word (``settles``: dawn on the night board, a night message at dawn)
    that answers no click of its own is redrawn through the message's newest recent click,
    so it spends nothing of the workspace's ``chat.update`` budget, which every table shares;
    should Slack refuse that URL, or the copy clicked no longer be the message's, the
    deliverer updates instead."""
    lenders = {(row["stream"], row["surface"]) for row in rows if row["settles"]}
    lenders -= {(row["stream"], row["surface"]) for row in rows if row["response_url"]}
    if not lenders:
        return
    found = connection.execute(_RECENT_CLICKS, {"messages": sorted(lenders)})
    clicks = {(stream, surface): (url, ts) for stream, surface, url, ts in found}  # newest
    for row in rows:
        click = clicks.get((row["stream"], row["surface"]))
        if click and row["settles"] and not row["response_url"]:
            row["response_url"], row["response_ts"] = click


def write(connection: Connection, rows: list[Row]) -> None:
    """The rows, of any number of streams, sent together."""
    if rows:
        lend_last_clicks(connection, rows)
        connection.execute(ADD, rows)


def enqueue(connection: Connection, game: Addressed, effects: Iterable[Effect]) -> int:
    """Add each Show, Say and Tell as the next version of its message; how many were added.

    Called with the game row locked, so versions of one game's messages never race.
    """
    rows = outbox_rows(game, effects)
    write(connection, rows)
    return len(rows)


NEW_STREAM = select(func.nextval("games_id_seq"))
"""A notice's stream: drawn from the games' sequence, so it is never a game's."""


def notice(
    connection: Connection,
    team_id: str,
    enterprise_id: str | None,
    channel_id: str,
    text: str,
    about: str = "",
    by: str | None = None,
) -> int:
    """Say ``text`` in the channel, as a stream of its own that no game carries: sent, retried
    and paced like every other message. Its stream, to kick once committed. ``about``: what
    changed, and ``by``: who changed it, who is told privately should the channel refuse the
    notice (``refused_notice``). Its row is named ``notice:…`` whatever it tells of, so that
    the prune and forget me find it (``db.streams.of_notices``)."""
    stream = int(connection.execute(NEW_STREAM).scalar_one())
    row = _row(stream, team_id, enterprise_id)
    surface = notice_surface(about)
    row |= {"surface": surface, "channel": channel_id, "user_id": by, "text": text, "blocks": None}
    connection.execute(ADD, [_numbered(row)])
    return stream


class Refused(NamedTuple):
    """A channel's notice Slack refused, as far as telling its author goes."""

    team_id: str
    enterprise_id: str | None
    channel: str
    about: str
    by: str


def refused_notice(connection: Connection, stream: int) -> Refused | None:
    """The notice of ``stream``, whose author is to be told privately that the channel refused
    it; None for a game's stream, a notice that names no author (or no longer: they asked
    Varulv to forget them), or one whose author was told already."""
    told = exists().where(
        OUTBOX.c.stream == stream, OUTBOX.c.surface.startswith(TELL, autoescape=True)
    )
    found = connection.execute(
        select(
            OUTBOX.c.team_id,
            OUTBOX.c.enterprise_id,
            OUTBOX.c.channel,
            OUTBOX.c.surface,
            OUTBOX.c.user_id,
        )
        .where(
            OUTBOX.c.stream == stream,
            OUTBOX.c.surface.startswith(NOTICE, autoescape=True),
            OUTBOX.c.channel.is_not(None),
            OUTBOX.c.user_id.is_not(None),
            ~told,
        )
        .limit(1)
    ).first()
    if found is None:
        return None
    team_id, enterprise_id, channel, surface, by = found
    about = surface.removeprefix(NOTICE).rsplit(":", 1)[0]
    return Refused(team_id, enterprise_id, channel, about, by)


def tell_privately(
    connection: Connection,
    stream: int,
    team_id: str,
    enterprise_id: str | None,
    user_id: str,
    text: str,
) -> None:
    """A private word to ``user_id`` in the stream (a notice's: its author), in its DM."""
    row = _row(stream, team_id, enterprise_id)
    row |= {"surface": tell_surface(user_id), "user_id": user_id, "text": text, "blocks": None}
    connection.execute(ADD, [_numbered(row)])


# -- what the deliverer writes as it sends ---------------------------------------------------

_UNDELIVERED_OF_STREAM = (OUTBOX.c.stream == bindparam("of_stream"), OUTBOX.c.done_at.is_(None))
RETRY = (
    update(OUTBOX)
    .where(
        *_UNDELIVERED_OF_STREAM,
        OUTBOX.c.surface == bindparam("s"),
        OUTBOX.c.version <= bindparam("v"),
    )
    .values(attempts=bindparam("attempts"), due_at=bindparam("due"))
)
"""A message's undelivered versions up to ``v`` wait until ``due``, after ``attempts`` tries."""
GIVE_UP_CHANNEL = (
    update(OUTBOX)
    .where(*_UNDELIVERED_OF_STREAM, OUTBOX.c.channel.is_not_distinct_from(bindparam("c")))
    .values(done_at=func.now(), failure=bindparam("f"))
)
"""Every undelivered message of the stream to the channel ``c`` is given up with failure ``f``."""
GIVE_UP_STREAM = (
    update(OUTBOX).where(*_UNDELIVERED_OF_STREAM).values(done_at=func.now(), failure=bindparam("f"))
)
"""Every undelivered message of the stream is given up with failure ``f``."""


def retry_later(
    connection: Connection, stream: int, surface: str, version: int, attempts: int, due: datetime
) -> None:
    connection.execute(
        RETRY, {"of_stream": stream, "s": surface, "v": version, "attempts": attempts, "due": due}
    )


def give_up(
    connection: Connection,
    stream: int,
    code: str,
    *,
    channel: str | None = None,
    whole_stream: bool = False,
) -> None:
    """Every undelivered message of the stream to ``channel`` (or all of them, ``whole_stream``)
    is given up with failure ``code``."""
    if whole_stream:
        connection.execute(GIVE_UP_STREAM, {"of_stream": stream, "f": code})
    else:
        connection.execute(GIVE_UP_CHANNEL, {"of_stream": stream, "c": channel, "f": code})
