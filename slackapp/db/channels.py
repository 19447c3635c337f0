"""``/varulv settings``: a channel's phase lengths, whether the lobby offers bots, and whether
its table is open to everyone to change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlalchemy import Connection, Table, bindparam, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from slackapp.blocks.words import ENGLISH, LANGUAGE_NAMES, Words
from slackapp.db.engine import outside_transaction
from slackapp.db.models import ChannelSettings
from slackapp.game.lines import Language
from slackapp.game.machine import LENGTH_BOUNDS, Lengths
from slackapp.game.seasons import DEFAULT_SEASON, SeasonLength


@dataclass(frozen=True)
class ChannelChoice:
    """What a channel's next game gets: its settings, or the app's defaults."""

    night_seconds: int
    day_seconds: int
    vote_seconds: int
    bots_allowed: bool
    season: SeasonLength = DEFAULT_SEASON
    language: Language = Language.ENGLISH

    def lengths(self, words: Words = ENGLISH) -> str:
        return words._(
            "night {night}, day {day}, vote {vote}",
            night=duration(self.night_seconds, words),
            day=duration(self.day_seconds, words),
            vote=duration(self.vote_seconds, words),
        )

    def summary(self, words: Words = ENGLISH) -> str:
        w = words
        bots = w._("bots offered") if self.bots_allowed else w._("bots off")
        seasons = (
            w._("seasons by month") if self.season.value == "month" else w._("seasons by quarter")
        )
        return f"{self.lengths(w)}, {bots}, {seasons}, {LANGUAGE_NAMES[self.language]}"


def duration(seconds: int, words: Words = ENGLISH) -> str:
    w = words
    minutes, rest = divmod(seconds, 60)
    in_minutes = w.ngettext("{count} minute", "{count} minutes", minutes)
    if minutes and not rest:
        return in_minutes
    in_seconds = w.ngettext("{count} second", "{count} seconds", rest if minutes else seconds)
    if minutes:
        return f"{in_minutes} {in_seconds}"
    return in_seconds


CHANNELS = cast(Table, ChannelSettings.__table__)
_CHOICE = select(
    CHANNELS.c.night_seconds,
    CHANNELS.c.day_seconds,
    CHANNELS.c.vote_seconds,
    CHANNELS.c.bots_allowed,
    CHANNELS.c.season,
    CHANNELS.c.language,
).where(CHANNELS.c.team_id == bindparam("team_id"), CHANNELS.c.channel_id == bindparam("channel"))
"""A plain statement: every ``/varulv``, its help and every new table read it, and the ORM's
identity map was most of what that read cost."""


def choice_in(session: Session, team_id: str, channel_id: str, defaults: Lengths) -> ChannelChoice:
    """The channel's choice, read on the session's connection (in its transaction, if any)."""
    return _choice(session.connection(), team_id, channel_id, defaults)


def _choice(
    connection: Connection, team_id: str, channel_id: str, defaults: Lengths
) -> ChannelChoice:
    row = connection.execute(_CHOICE, {"team_id": team_id, "channel": channel_id}).first()
    if row is None:
        return ChannelChoice(
            defaults.night_seconds, defaults.day_seconds, defaults.vote_seconds, bots_allowed=True
        )
    return ChannelChoice(
        row.night_seconds,
        row.day_seconds,
        row.vote_seconds,
        row.bots_allowed,
        SeasonLength(row.season),
        Language(row.language),
    )


def lock_channel(session: Session, team_id: str, channel_id: str) -> None:
    """Hold the channel's lock until the transaction ends: every change to who may do what in
    a channel (its settings, openness, standing table) and every stop decides under it, on
    facts read after it was granted, so none is decided on facts another is changing."""
    key = func.hashtextextended(f"varulv channel {team_id} {channel_id}", 0)
    session.execute(select(func.pg_advisory_xact_lock(key)))


def open_to_everyone(session: Session, team_id: str, channel_id: str) -> bool:
    """Whether an admin opened the channel's table to everyone (no row: not open)."""
    row = session.get(ChannelSettings, (team_id, channel_id))
    return row is not None and row.open_to_everyone


def channel_choice(
    sessions: sessionmaker[Session], team_id: str, channel_id: str, defaults: Lengths
) -> ChannelChoice:
    """The channel's choice, read in one statement outside any transaction."""
    with outside_transaction(sessions) as session:
        return _choice(session.connection(), team_id, channel_id, defaults)


def out_of_bounds(lengths: dict[str, int], words: Words = ENGLISH) -> dict[str, str]:
    """For each length outside its bounds, what to tell the person who typed it."""
    problems = {}
    for name, seconds in lengths.items():
        low, high = LENGTH_BOUNDS[name]
        if not low <= seconds <= high:
            problems[name] = words._(
                "Choose {low} to {high} seconds ({shortest} to {longest}).",
                low=low,
                high=high,
                shortest=duration(low, words),
                longest=duration(high, words),
            )
    return problems


def write_choice(
    session: Session,
    team_id: str,
    channel_id: str,
    user_id: str,
    choice: ChannelChoice,
    open_to_everyone: bool | None = None,
) -> None:
    """Store the channel's settings in the session's transaction (the caller holds the
    channel's lock and has decided the permission on what it read under it); the next game to
    open there uses them. ``open_to_everyone``: open or close the channel's table to everyone
    (None: as it was)."""
    values: dict[str, object] = {
        "night_seconds": choice.night_seconds,
        "day_seconds": choice.day_seconds,
        "vote_seconds": choice.vote_seconds,
        "bots_allowed": choice.bots_allowed,
        "season": choice.season.value,
        "language": choice.language.value,
        "updated_by": user_id,
    }
    if open_to_everyone is not None:
        values["open_to_everyone"] = open_to_everyone
    session.execute(
        insert(ChannelSettings)
        .values(team_id=team_id, channel_id=channel_id, **values)
        .on_conflict_do_update(
            index_elements=[ChannelSettings.team_id, ChannelSettings.channel_id],
            # ON CONFLICT skips the column's onupdate, so the time is set here.
            set_={**values, "updated_at": func.now()},
        )
    )
