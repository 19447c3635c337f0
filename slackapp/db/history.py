"""Finished games read back: a channel's last reveal, its game as the referee's input, and
the records its seasons count."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from slackapp.db import games
from slackapp.db.models import REVEALED, ChannelSettings, Game, Seat, StandingTable
from slackapp.game import machine as m
from slackapp.game.fingerprint import deal_salt
from slackapp.game.outcome import Outcome
from slackapp.game.referee import game_input
from slackapp.game.seasons import (
    DEFAULT_SEASON,
    GameRecord,
    Season,
    SeasonLength,
    game_record,
    season_of,
    season_zone,
)


@dataclass(frozen=True)
class Finished:
    game_id: int
    state: m.GameState
    outcome: Outcome
    finished_at: datetime

    def referee_input(self) -> dict[str, Any]:
        """The whole game as REFEREE.md's input, seats called by the names people know."""
        names = {seat.key: seat.name for seat in self.state.seats}
        outcome = self.outcome
        # A seat whose person was forgotten has lost the key its fingerprints bound: the game
        # is still resolved, without the links that could no longer hold.
        erased = any(m.is_erased(seat.key) for seat in self.state.seats)
        salt = None if erased else deal_salt(self.state.seed)
        return game_input(outcome.deal, self.state.choices(), outcome.ballots, names, salt)

    def record(self) -> GameRecord:
        # Bots, and people Varulv was asked to forget, rank in no season.
        unranked = {seat.key for seat in self.state.seats if seat.is_bot or m.is_erased(seat.key)}
        return game_record(self.outcome, unranked, self.finished_at)


def _finished(game: Game) -> Finished:
    state = games.state_of(game)
    outcome = state.outcome()
    assert outcome is not None, "only a game that is over has an outcome"
    return Finished(game.id, state, outcome, game.finished_at or game.updated_at)


def _over(team_id: str, channel_id: str | None = None) -> Any:
    query = select(Game).where(Game.team_id == team_id, REVEALED)
    if channel_id is not None:
        query = query.where(Game.channel_id == channel_id)
    return query.options(selectinload(Game.seats).selectinload(Seat.ballot))


def last_finished(session: Session, team_id: str, channel_id: str) -> Finished | None:
    """The channel's most recently decided game, if any: that one alone is read, with its
    seats, not every game the channel keeps."""
    game = session.scalars(
        _over(team_id, channel_id)
        .order_by(Game.finished_at.desc().nulls_last(), Game.id.desc())
        .limit(1)
    ).first()
    return None if game is None else _finished(game)


def finished(session: Session, team_id: str, game_id: int) -> Finished | None:
    """A decided game of the workspace, by id."""
    game = session.scalars(_over(team_id).where(Game.id == game_id)).one_or_none()
    return None if game is None else _finished(game)


def season_rules(session: Session, team_id: str, channel_id: str) -> tuple[SeasonLength, ZoneInfo]:
    """How the channel's seasons run: their length (its settings) and the zone they turn in
    (its standing table's, or UTC)."""
    settings = session.get(ChannelSettings, (team_id, channel_id))
    length = SeasonLength(settings.season) if settings is not None else DEFAULT_SEASON
    table = session.get(StandingTable, (team_id, channel_id))
    return length, season_zone(None if table is None else table.zone)


def current_season(
    session: Session, team_id: str, channel_id: str, now: datetime
) -> tuple[Season, list[GameRecord]]:
    """The channel's season at ``now`` and the games decided in it so far."""
    length, zone = season_rules(session, team_id, channel_id)
    season = season_of(now, length, zone)
    return season, season_records(session, team_id, channel_id, season, zone)


def season_records(
    session: Session, team_id: str, channel_id: str, season: Season, zone: ZoneInfo
) -> list[GameRecord]:
    query = _over(team_id, channel_id).where(
        Game.finished_at >= season.starts(zone), Game.finished_at < season.ends(zone)
    )
    return [_finished(game).record() for game in session.scalars(query.order_by(Game.id))]


def last_finished_in(
    session: Session, team_id: str, channel_id: str, season: Season, zone: ZoneInfo
) -> int | None:
    """The id of the channel's last game decided in ``season``."""
    return session.scalar(
        select(Game.id)
        .where(
            Game.team_id == team_id,
            Game.channel_id == channel_id,
            REVEALED,
            Game.finished_at >= season.starts(zone),
            Game.finished_at < season.ends(zone),
        )
        # NULLS LAST as the index orders them (ix_games_revealed_by_channel): the season's
        # bounds leave no NULL, and its first entry is the answer.
        .order_by(Game.finished_at.desc().nulls_last(), Game.id.desc())
        .limit(1)
    )
