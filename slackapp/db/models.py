"""The tables. Invariants the game relies on are constraints here, not only checks in code."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from slackapp.game.cards import MAX_SEATS
from slackapp.game.lines import Language
from slackapp.game.machine import OPEN_PHASES, TIMED_PHASES, Phase
from slackapp.game.schedule import LOBBY_MINUTES_BOUNDS
from slackapp.game.settings import LENGTHS, SETTINGS, Kind, Setting

__all__ = ["OPEN_PHASES", "TIMED_PHASES", "Phase"]

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def _quoted(values: Iterable[StrEnum]) -> str:
    return ", ".join(f"'{value.value}'" for value in values)


OPEN_GAME_SQL = f"phase IN ({_quoted(OPEN_PHASES)})"
"""A game still open: at most one such a channel (``uq_games_one_open_per_channel``)."""


class Game(Base):
    __tablename__ = "games"
    __table_args__ = (
        CheckConstraint(
            f"phase IN ({_quoted(Phase)})",
            name="phase_known",
        ),
        CheckConstraint(
            f"deadline IS NOT NULL OR phase NOT IN ({_quoted(TIMED_PHASES)})",
            name="timed_phase_has_deadline",
        ),
        # One open game per channel: a second /varulv cannot race a first into existence.
        Index(
            "uq_games_one_open_per_channel",
            "team_id",
            "channel_id",
            unique=True,
            postgresql_where=text(OPEN_GAME_SQL),
        ),
        Index("ix_games_open_deadline", "deadline", postgresql_where=text(OPEN_GAME_SQL)),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team_id: Mapped[str] = mapped_column(String(32))
    enterprise_id: Mapped[str | None] = mapped_column(String(32), default=None)
    """The Enterprise Grid organisation of the workspace, when Slack named one."""
    channel_id: Mapped[str] = mapped_column(String(32))
    host_user_id: Mapped[str] = mapped_column(String(32))
    opened_by_trigger: Mapped[str | None] = mapped_column(String(255), default=None)
    """The ``trigger_id`` of the ``/varulv`` that opened it: Slack's retry of that same
    command carries the same one, and finds its own table rather than "a game is open"."""
    phase: Mapped[str] = mapped_column(String(16), default=Phase.LOBBY)
    seed: Mapped[int] = mapped_column(BigInteger)
    center: Mapped[list[str] | None] = mapped_column(JSON, default=None)
    deadline: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    night_seconds: Mapped[int] = mapped_column(Integer)
    day_seconds: Mapped[int] = mapped_column(Integer)
    vote_seconds: Mapped[int] = mapped_column(Integer)
    bots_allowed: Mapped[bool] = mapped_column(Boolean, default=True)
    language: Mapped[str] = mapped_column(String(8), server_default=Language.ENGLISH.value)
    """The words of the game's screens: its channel's language when it opened."""
    outcome: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    """When the game was decided: the instant its season counts it at."""
    ended_by: Mapped[str | None] = mapped_column(String(32), default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    seats: Mapped[list[Seat]] = relationship(
        back_populates="game", order_by="Seat.position", cascade="all, delete-orphan"
    )

    @property
    def dm_channels(self) -> dict[str, str | None]:
        """Each seat's private message channel, once opened."""
        return {seat.key: seat.dm_channel for seat in self.seats}


REVEALED_GAME_SQL = f"phase = '{Phase.OVER.value}'"
"""A revealed game, as ``ix_games_revealed_by_channel`` is built on: a read says it literally
(``REVEALED``), so the index serves it however PostgreSQL caches the statement's plan (a
generic plan, made without the parameters' values, cannot use it for a bound one)."""
REVEALED = text(REVEALED_GAME_SQL)

# A channel's revealed games, newest first: `/varulv last`, the season's records that
# `/varulv score`, the Home tab and the wrap-ups read, and a season's last game find the few
# they need here rather than reading every game the deployment keeps.
Index(
    "ix_games_revealed_by_channel",
    Game.team_id,
    Game.channel_id,
    Game.finished_at.desc().nulls_last(),
    Game.id.desc(),
    postgresql_where=text(REVEALED_GAME_SQL),
)


def seat_key(user_id: str | None, bot_name: str | None) -> str:
    """A seat's name in the engine: the user id of a person, ``bot1``… for a bot."""
    return user_id or bot_name or ""


class Seat(Base):
    __tablename__ = "seats"
    __table_args__ = (
        UniqueConstraint("game_id", "position"),
        # One seat per person per game (bots have no user id, and NULLs are distinct).
        UniqueConstraint("game_id", "user_id"),
        UniqueConstraint("game_id", "bot_name"),
        CheckConstraint("(user_id IS NULL) <> (bot_name IS NULL)", name="person_or_bot"),
        CheckConstraint(f"position >= 0 AND position < {MAX_SEATS}", name="position_in_table"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    """Found by the unique key it begins (``game_id``, ``position``)."""
    position: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[str | None] = mapped_column(String(32), default=None, index=True)
    """Indexed: the App Home and "forget me" find a person's seats."""
    bot_name: Mapped[str | None] = mapped_column(String(32), default=None)
    """A bot's seat key, ``bot1``…; lower case, so it never equals a Slack user id."""
    display_name: Mapped[str] = mapped_column(String(80))
    dealt: Mapped[str | None] = mapped_column(String(16), default=None)
    dm_channel: Mapped[str | None] = mapped_column(String(32), default=None)
    night_choice: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    pending_target: Mapped[str | None] = mapped_column(String(32), default=None)
    """The Troublemaker's first pick while it chooses the second."""
    confirmed: Mapped[bool] = mapped_column(Boolean, default=False)
    heard_enough: Mapped[bool] = mapped_column(Boolean, default=False)
    heard_enough_at: Mapped[Decimal | None] = mapped_column(Numeric(17, 6), default=None)
    """Slack's ``action_ts`` of the *Heard enough* click the mark last came from."""
    reachable: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    """False once a private message to this person failed for good."""

    game: Mapped[Game] = relationship(back_populates="seats")
    ballot: Mapped[Ballot | None] = relationship(
        back_populates="seat", cascade="all, delete-orphan"
    )

    @property
    def key(self) -> str:
        return seat_key(self.user_id, self.bot_name)

    @property
    def is_bot(self) -> bool:
        return self.user_id is None


NOBODY_TARGET = "nobody"


class Ballot(Base):
    """One sealed ballot per seat (the primary key), replaced in place when changed."""

    __tablename__ = "ballots"
    __table_args__ = (CheckConstraint("target <> voter_key", name="not_for_oneself"),)

    seat_id: Mapped[int] = mapped_column(
        ForeignKey("seats.id", ondelete="CASCADE"), primary_key=True
    )
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), index=True)
    voter_key: Mapped[str] = mapped_column(String(32))
    target: Mapped[str] = mapped_column(String(32))
    """A seat key, or ``nobody``."""
    cast_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    clicked_at: Mapped[Decimal | None] = mapped_column(Numeric(17, 6), default=None)
    """Slack's ``action_ts`` of the click that cast it: two quick clicks keep the later one."""

    seat: Mapped[Seat] = relationship(back_populates="ballot")


class Score(Base):
    """Points kept per person per channel across games."""

    __tablename__ = "scores"

    team_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    channel_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    points: Mapped[int] = mapped_column(Integer, default=0)


class Person(Base):
    """A person's name as Varulv writes it out (their profile's display name), from users.info
    at *Start*, kept so that Slack is asked again only once the name is a day old. Names are
    public."""

    __tablename__ = "people"

    team_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    fetched_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


NOTICE_SURFACE = "notice:"
"""How a channel's notice's own message is named (``delivery.outbox.notice_surface``): its
stream has one such row, and no game's stream ever does."""
NOTICE_ROW_SQL = f"surface LIKE '{NOTICE_SURFACE}%'"
"""An outbox row of a channel's notice, as ``ix_outbox_notices`` is built on: a query must say
it literally, as here, for PostgreSQL to use that index however it caches the plan (a generic
plan, made without the parameters' values, cannot use it for a bound one)."""


class OutboxEntry(Base):
    """What one Slack message must show, committed with the step that decided it.

    Entries come in **streams**, each delivered in order under one lease: a game's messages
    (the stream is the game's id) or a channel's notice, which needs no game (its stream is an
    id of its own from the games' sequence, so it is never a game's). A message is a stream's
    ``surface`` (a game's lobby, day board, vote board, reveal, a person's night message
    ``dm:<key>`` and result ``over:<key>``, a line ``say:<token>``, a private word
    ``tell:<user>:<token>``); each step's picture of it is the next ``version``. The deliverer
    sends the newest undelivered version of each message after the commit, and marks every
    version up to it done. A game's entries are deleted with it (``db.retention``,
    ``db.erasure``): no foreign key holds them, so a notice needs no game, and an entry
    written costs no check of one.
    """

    __tablename__ = "outbox"
    __table_args__ = (
        UniqueConstraint("stream", "surface", "version"),
        CheckConstraint("version >= 1", name="version_positive"),
        CheckConstraint("channel IS NOT NULL OR user_id IS NOT NULL", name="has_address"),
        # By stream first: a step's or a drain's look-up reads its own streams' entries, never
        # every undelivered one (PostgreSQL chose an index by due_at for those too whenever its
        # statistics said few were undelivered, as they do until a storm). The sweep, the
        # readiness check and /metrics, which ask by due_at, read every undelivered entry.
        Index(
            "ix_outbox_undelivered",
            "stream",
            "surface",
            "version",
            postgresql_include=["due_at"],
            postgresql_where=text("done_at IS NULL"),
        ),
        # A workspace's notices, found without reading its games' entries: forget me looks
        # for the person in them, the daily prune for the old ones. Only a notice's own row
        # (one a stream) is indexed, so a game's entries cost it nothing.
        Index(
            "ix_outbox_notices",
            "team_id",
            "stream",
            postgresql_where=text(NOTICE_ROW_SQL),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    stream: Mapped[int] = mapped_column(Integer)
    """Found by the unique key it begins (``stream``, ``surface``, ``version``)."""
    team_id: Mapped[str] = mapped_column(String(32))
    """The workspace it is sent in: its installation's token is found by this and
    ``enterprise_id``, with no read of the game."""
    enterprise_id: Mapped[str | None] = mapped_column(String(32), default=None)
    surface: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    channel: Mapped[str | None] = mapped_column(String(32), default=None)
    """Where it goes; None for a private word to ``user_id`` whose DM is opened on sending."""
    user_id: Mapped[str | None] = mapped_column(String(32), default=None)
    text: Mapped[str] = mapped_column(Text)
    blocks: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    """Not to be tried before then: a retry waits out Slack's Retry-After or a backoff."""
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    failure: Mapped[str | None] = mapped_column(String(64), default=None)
    """Why it was given up (Slack's error), or ``superseded`` by a newer version."""
    response_url: Mapped[str | None] = mapped_column(Text, default=None)
    """The click's own ``response_url`` when this version answers a click on the message (or,
    for a last word, the newest recent click it borrowed): it is redrawn through that, which
    Slack does not count against ``chat.update``'s limit."""
    response_ts: Mapped[str | None] = mapped_column(String(32), default=None)
    """The ``ts`` of the copy the click was on: its ``response_url`` redraws that copy, so it is
    used only while that copy is the one recorded (``messages.ts``). A phase's last word that
    answers no click borrows its message's newest recent click (``delivery.outbox``)."""
    settles: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """This version is the message's last word (its phase is over, ``game.effects.settles``):
    its redraw takes the next turn at ``chat.update``'s limit however far off, while a board
    that still counts takes one only while the burst keeps room for these."""


class SlackMessage(Base):
    """A stream's message as Slack has it: where, its ``ts``, and the version it shows."""

    __tablename__ = "messages"

    stream: Mapped[int] = mapped_column(Integer, primary_key=True)
    """The outbox stream it is a message of: a game's id, for a game's message."""
    surface: Mapped[str] = mapped_column(String(64), primary_key=True)
    channel: Mapped[str] = mapped_column(String(32))
    ts: Mapped[str] = mapped_column(String(32))
    version: Mapped[int] = mapped_column(Integer)
    unsure_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    """A redraw whose outcome is unknown (a timeout, a dropped connection) may still be applied
    by Slack until then, over anything newer: a landing before then leaves the message due
    again at that time (``delivery.plan``). None: what Slack shows is known."""


class DeliveryLease(Base):
    """Which process delivers an outbox stream now, until when; no lock is held meanwhile."""

    __tablename__ = "delivery_leases"

    stream: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    holder: Mapped[str] = mapped_column(String(64))
    until: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class PacingBucket(Base):
    """A rate limit's token bucket, shared by every process of a deployment: a workspace's
    ``chat.update`` calls (``slackapp.delivery.pacing``; a channel's posts are paced in the
    memory of the process delivering them)."""

    __tablename__ = "pacing_buckets"
    # No WAL: a turn costs no flush to disk, and a crash that empties the table only lets a
    # burst go again, as after a quiet spell.
    __table_args__ = ({"prefixes": ["UNLOGGED"]},)

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    free_from: Mapped[float]
    """Seconds since the epoch, on the database's clock, from which a full burst is free."""
    taken: Mapped[bool] = mapped_column(Boolean)
    """Whether the last call that asked took a turn (what that call's statement returns)."""


class ReinstallNeeded(Base):
    """A workspace whose bot token Slack refused to refresh for good (the refresh token spent,
    say by a crash between Slack's answer and its save): nothing brings the token back, so
    Varulv acts there again only once an admin reinstalls it (which deletes the row). The
    refused refresh token is kept as its SHA-256, so no process tries it again."""

    __tablename__ = "reinstalls_needed"

    enterprise_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    """The Enterprise Grid organisation's id; '' outside one."""
    team_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    """The workspace's id; '' for an installation on a whole organisation."""
    refresh_token_sha256: Mapped[str] = mapped_column(String(64))
    error: Mapped[str] = mapped_column(String(100))
    """What Slack answered the refresh (``invalid_refresh_token``...)."""
    since: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


def _between(column: str, bounds: tuple[int, int]) -> CheckConstraint:
    low, high = bounds
    return CheckConstraint(f"{column} BETWEEN {low} AND {high}", name=f"{column}_in_bounds")


def _known(setting: Setting[Any]) -> CheckConstraint:
    return CheckConstraint(
        f"{setting.name} IN ({_quoted(setting.choices)})", name=f"{setting.name}_known"
    )


class ChannelSettings(Base):
    """A channel's choices for its next games (``/varulv settings``), a column for each of
    ``slackapp.game.settings.SETTINGS``, by its name; no row means the defaults.

    A game copies them when its table opens, so a change never alters a game already running.
    """

    __tablename__ = "channel_settings"
    __table_args__ = (
        *(_between(setting.name, setting.bounds) for setting in LENGTHS),
        *(_known(setting) for setting in SETTINGS if setting.kind is Kind.PICK),
    )

    team_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    channel_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    night_seconds: Mapped[int] = mapped_column(Integer)
    day_seconds: Mapped[int] = mapped_column(Integer)
    vote_seconds: Mapped[int] = mapped_column(Integer)
    bots_allowed: Mapped[bool] = mapped_column(Boolean)
    """Whether the lobby offers "Fill with bots"."""
    language: Mapped[str] = mapped_column(String(8), server_default=Language.ENGLISH.value)
    """The words of the channel's games and answers (``en``, ``sv``)."""
    season: Mapped[str] = mapped_column(String(8), server_default="month")
    """How long the leaderboard's seasons run: ``month`` or ``quarter``."""
    open_to_everyone: Mapped[bool] = mapped_column(Boolean, server_default=false())
    """Anyone in the channel may change its settings and standing table and stop its games, not
    only the game's host, the standing table's owner and the workspace's admins (set by an
    admin)."""
    updated_by: Mapped[str] = mapped_column(String(32))
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )


class ChannelHome(Base):
    """The workspace that keeps a channel's table where Varulv is installed on a whole
    Enterprise Grid organisation. A channel shared by several of its workspaces has one id, so
    its games, settings, standing table and scores are kept under one of them: the workspace of
    the first person to use Varulv there. No row: the asker's workspace."""

    __tablename__ = "channel_homes"

    enterprise_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    channel_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    team_id: Mapped[str] = mapped_column(String(32))


class StandingTable(Base):
    """A channel's schedule (``/varulv schedule``): the lobby opens by itself on its days.

    ``next_at`` is the one opening it is armed for, in UTC; whichever process wakes first at
    or after it locks the row, opens the lobby and arms the next one, so each opening fires
    once. A paused schedule (Varulv could not post in the channel) keeps its row, unarmed.
    """

    __tablename__ = "standing_tables"
    __table_args__ = (
        CheckConstraint("weekdays > 0 AND weekdays < 128", name="weekdays_chosen"),
        CheckConstraint("minute_of_day BETWEEN 0 AND 1439", name="minute_of_day_in_day"),
        _between("lobby_minutes", LOBBY_MINUTES_BOUNDS),
        Index("ix_standing_tables_next_at", "next_at", postgresql_where=text("paused IS NULL")),
    )

    team_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    channel_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    enterprise_id: Mapped[str | None] = mapped_column(String(32), default=None)
    """The workspace's Enterprise Grid organisation: its tables are stored with it, since its
    installation is found by it."""
    weekdays: Mapped[int] = mapped_column(Integer)
    """A bit per weekday: 1 is Monday, 64 Sunday."""
    minute_of_day: Mapped[int] = mapped_column(Integer)
    """The local opening time, as minutes after midnight."""
    zone: Mapped[str] = mapped_column(String(64))
    lobby_minutes: Mapped[int] = mapped_column(Integer)
    next_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    owner_user_id: Mapped[str] = mapped_column(String(32))
    """Who set it: the tables open in their name (they are not seated)."""
    paused: Mapped[str | None] = mapped_column(String(64), default=None)
    """Why it stopped opening tables (Slack's error), or None while it runs."""
    lobby_game_id: Mapped[int | None] = mapped_column(
        ForeignKey("games.id", ondelete="SET NULL"), default=None
    )
    """The lobby it opened last, closed at ``lobby_closes_at`` unless started."""
    lobby_closes_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )


class Regular(Base):
    """A person who marked "I usually play" in a channel: its standing table mentions them."""

    __tablename__ = "regulars"

    team_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    channel_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    since: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class SeasonWrapUp(Base):
    """A season's wrap-up, posted once: the row is written with the post in one transaction."""

    __tablename__ = "season_wrap_ups"

    team_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    channel_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    season: Mapped[str] = mapped_column(String(16), primary_key=True)
    """The season's key: ``2026-12`` or ``2026-Q4``."""
    game_id: Mapped[int | None] = mapped_column(
        ForeignKey("games.id", ondelete="SET NULL"), default=None, index=True
    )
    """The season's last game, whose messages carry the wrap-up. Indexed: a game deleted (the
    daily prune, an erased workspace) finds the wrap-up naming it, among every season's."""
    posted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Deployment(Base):
    """Which kind of server this database belongs to, claimed by the first ``varulv serve``:
    ``single`` (one workspace, SLACK_BOT_TOKEN) or ``multi`` ("Add to Slack"). Either kind
    serves every game in its database, so a server of the other kind is refused."""

    __tablename__ = "deployment"
    __table_args__ = (
        CheckConstraint("id = 1", name="one_row"),
        CheckConstraint("mode IN ('single', 'multi')", name="mode_known"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, default=1)
    mode: Mapped[str] = mapped_column(String(8))
    claimed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class InboxEntry(Base):
    """A command or click Slack was told Varulv has, until it is carried out: written before
    the acknowledgement, claimed by one process at a time (``holder`` until ``until``), and
    marked done by the step that carries it out, in that step's transaction
    (``slackapp.inbox``). A done row keeps only its key, so that Slack's redelivery of the
    same request is known, until it is pruned."""

    __tablename__ = "inbox"
    __table_args__ = (
        Index("ix_inbox_pending", "holder", postgresql_where=text("done_at IS NULL")),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    request_key: Mapped[str | None] = mapped_column(String(255), unique=True, default=None)
    """A digest of the request's body, which a redelivery repeats."""
    body: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    """The request's payload, as Bolt parsed it; None once done."""
    headers: Mapped[dict[str, str] | None] = mapped_column(JSON, default=None)
    """The few headers the work reads (Slack's timestamp, its retry number)."""
    holder: Mapped[str] = mapped_column(String(64))
    until: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    received_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
