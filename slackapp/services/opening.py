"""A new table in two statements, committed before the ``/varulv`` that opens it is answered.

The usual ``/varulv`` finds its channel free. What its step needs is read in one statement:
the game's id (taken from its sequence, so the lobby can be rendered before anything is
written), the name kept for the host and the channel's settings. The machine opens the table,
and one statement, atomic on its own, writes the game, the host's seat, the lobby's outbox row
and the game's delivery lease. No transaction is begun or ended: each statement commits by
itself, and the first writes nothing. Should the channel have an open table after all (the
one-open-table index), the write inserts nothing and the caller falls back to the step that
finds out why, in a transaction.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, bindparam, func, literal, select, text

from slackapp.db import games, journal
from slackapp.db.channels import CHANNELS, choice_from
from slackapp.db.games import GAMES, SEATS, NewGame
from slackapp.db.models import OPEN_GAME_SQL
from slackapp.db.people import PEOPLE
from slackapp.delivery.drain import ToShow
from slackapp.delivery.outbox import OUTBOX, Row, outbox_rows
from slackapp.delivery.plan import Entry, pending_of
from slackapp.delivery.slack import WorkspaceId
from slackapp.game import machine as m
from slackapp.game.settings import SETTINGS, ChannelChoice, kept_of

_NAMES = [setting.name for setting in SETTINGS]
_SETTINGS = [CHANNELS.c[name] for name in _NAMES]
_READ = select(
    func.nextval("games_id_seq"),
    select(PEOPLE.c.name)
    .where(PEOPLE.c.team_id == bindparam("team_id"), PEOPLE.c.user_id == bindparam("user_id"))
    .scalar_subquery(),
    CHANNELS.c.team_id,
    *_SETTINGS,
).select_from(
    select(literal(1).label("one"))
    .subquery()
    .outerjoin(
        CHANNELS,
        (CHANNELS.c.team_id == bindparam("team_id"))
        & (CHANNELS.c.channel_id == bindparam("channel_id")),
    )
)
"""The game's id, the host's kept name (None: none kept) and the channel's settings (a
``team_id`` of None: the channel has none of its own)."""

_GAME_COLUMNS = [*games.NEW_GAME_COLUMNS, "opened_by_trigger"]
SEAT_COLUMNS = [column.name for column in SEATS.columns if column.name != "id"]
_ENTRY_COLUMNS = [
    "stream",
    "team_id",
    "enterprise_id",
    "surface",
    "version",
    "channel",
    "user_id",
    "text",
    "blocks",
    "attempts",
    "response_url",
    "response_ts",
    "settles",
]


_ENTRY_FIELDS = [name for name in _ENTRY_COLUMNS if name not in ("team_id", "enterprise_id")]
"""Those an ``Entry`` keeps: its workspace is its ``ToShow``'s."""


def _columns(names: list[str]) -> str:
    return ", ".join(names)


_GAME = (
    f"INSERT INTO {GAMES.name} ({_columns(_GAME_COLUMNS)})"
    f" SELECT {_columns(_GAME_COLUMNS)}"
    f" FROM json_populate_record(NULL::{GAMES.name}, CAST(:game AS json))"
    f" ON CONFLICT (team_id, channel_id) WHERE {OPEN_GAME_SQL} DO NOTHING RETURNING id"
)
_ROWS = (
    "INSERT INTO {table} ({columns}) SELECT {columns}"
    " FROM json_populate_recordset(NULL::{table}, CAST(:{rows} AS json))"
    " WHERE EXISTS (SELECT FROM game)"
)
_SEATS = _ROWS.format(table=SEATS.name, columns=_columns(SEAT_COLUMNS), rows="seats")
_ENTRIES = _ROWS.format(table=OUTBOX.name, columns=_columns(_ENTRY_COLUMNS), rows="entries")
_WRITE = f"WITH game AS ({_GAME}), seat AS ({_SEATS}), entry AS ({_ENTRIES})"
WRITE = text(_WRITE + " SELECT id FROM game")
"""The game, its seats and its outbox rows, unless the channel has an open table."""
WRITE_LEASED = text(
    _WRITE + ", lease AS (INSERT INTO delivery_leases (stream, holder, until)"
    " SELECT id, :holder, :until FROM game) SELECT id FROM game"
)
"""The same, and the game's delivery lease taken by ``holder`` until ``until``."""


@dataclass(frozen=True)
class Opening:
    """What a new table needs to know before it is written."""

    game_id: int
    kept_name: str | None
    choice: ChannelChoice


def read(
    connection: Connection, team_id: str, channel_id: str, user_id: str, defaults: m.Lengths
) -> Opening:
    """The new game's id, the host's kept name and the channel's choice, in one statement."""
    found = connection.execute(
        _READ, {"team_id": team_id, "channel_id": channel_id, "user_id": user_id}
    ).one()
    game_id, kept_name, has_settings, *values = found
    row = None if has_settings is None else dict(zip(_NAMES, values, strict=True))
    return Opening(int(game_id), kept_name, choice_from(row, defaults))


@dataclass(frozen=True)
class Opened:
    game: NewGame
    step: m.Step
    entries: list[dict[str, Any]]
    """Its outbox rows, as written."""

    def to_show(self, now: datetime) -> ToShow:
        """What the new game shows, as the deliverer would read it back at ``now``."""
        entries = [
            Entry(**{name: row[name] for name in _ENTRY_FIELDS}, due_at=now) for row in self.entries
        ]
        workspace = WorkspaceId(self.game.team_id, self.game.enterprise_id)
        return ToShow(workspace, pending_of(entries, {}))


def open_new(
    connection: Connection,
    opening: Opening,
    team_id: str,
    channel_id: str,
    host: str,
    handle: str,
    enterprise_id: str | None,
    trigger: str | None,
    lease: tuple[str, datetime] | None,
) -> Opened | None:
    """The table opened and written in one statement, with its delivery lease when ``lease``
    (holder, until) is given; None if the channel has an open table after all."""
    chosen = opening.choice
    game = NewGame(
        id=opening.game_id,
        team_id=team_id,
        enterprise_id=enterprise_id,
        channel_id=channel_id,
        host_user_id=host,
        seed=secrets.randbits(62),
        night_seconds=chosen.night_seconds,
        day_seconds=chosen.day_seconds,
        vote_seconds=chosen.vote_seconds,
        kept=kept_of(chosen),
    )
    step = m.open_table(
        game.id,
        channel_id,
        host,
        handle if opening.kept_name is None else opening.kept_name,
        game.seed,
        m.Lengths(game.night_seconds, game.day_seconds, game.vote_seconds),
        game.kept,
    )
    fields, seats = games.opening_rows(game, step.state)
    row = {**game.columns(), **fields, "opened_by_trigger": trigger}
    entries = _entries(outbox_rows(game, step.effects))
    values: dict[str, Any] = {
        "game": _json(row),
        "seats": _json(seats),
        "entries": _json(entries),
    }
    statement = WRITE
    if lease is not None:
        statement = WRITE_LEASED
        values |= {"holder": lease[0], "until": lease[1]}
    if connection.execute(statement, values).scalar_one_or_none() is None:
        return None
    journal.log_changes(
        [journal.PhaseChange(game.id, team_id, channel_id, None, step.state.phase.value)]
    )
    return Opened(game, step, entries)


def _entries(rows: list[Row]) -> list[dict[str, Any]]:
    """A new game's outbox rows, each message's versions numbered from 1."""
    versions: dict[str, int] = {}
    numbered = []
    for row in rows:
        versions[row["surface"]] = versions.get(row["surface"], 0) + 1
        entry = {name: row.get(name) for name in _ENTRY_COLUMNS}
        numbered.append(entry | {"version": versions[row["surface"]], "attempts": 0})
    return numbered


def _json(value: Any) -> str:
    return json.dumps(value, default=_plain)


def _plain(value: Any) -> str:
    if isinstance(value, datetime | Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not stored as JSON here")
