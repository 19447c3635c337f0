"""Finished games read back: a channel's last reveal, its game as the referee's input, and
the records its seasons count."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from slackapp.db import games
from slackapp.db.models import Game, Seat
from slackapp.game import machine as m
from slackapp.game.outcome import Outcome
from slackapp.game.referee import game_input
from slackapp.game.seasons import GameRecord, game_record


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
        return game_input(outcome.deal, self.state.choices(), outcome.ballots, names)

    def record(self) -> GameRecord:
        bots = {seat.key for seat in self.state.seats if seat.is_bot}
        return game_record(self.outcome, bots, self.finished_at)


def _finished(game: Game) -> Finished:
    state = games.state_of(game)
    outcome = state.outcome()
    assert outcome is not None, "only a game that is over has an outcome"
    return Finished(game.id, state, outcome, game.finished_at or game.updated_at)


def _over(team_id: str, channel_id: str | None = None) -> Any:
    query = select(Game).where(Game.team_id == team_id, Game.phase == m.Phase.OVER.value)
    if channel_id is not None:
        query = query.where(Game.channel_id == channel_id)
    return query.options(selectinload(Game.seats).selectinload(Seat.ballot))


def last_finished(session: Session, team_id: str, channel_id: str) -> Finished | None:
    """The channel's most recently decided game, if any."""
    game = session.scalars(
        _over(team_id, channel_id).order_by(Game.finished_at.desc().nulls_last(), Game.id.desc())
    ).first()
    return None if game is None else _finished(game)


def finished(session: Session, team_id: str, game_id: int) -> Finished | None:
    """A decided game of the workspace, by id."""
    game = session.scalars(_over(team_id).where(Game.id == game_id)).one_or_none()
    return None if game is None else _finished(game)


def records(
    session: Session, team_id: str, channel_id: str, since: datetime | None = None
) -> list[GameRecord]:
    """The channel's decided games as its seasons count them, optionally from ``since``."""
    query = _over(team_id, channel_id)
    if since is not None:
        query = query.where(Game.finished_at >= since)
    return [_finished(game).record() for game in session.scalars(query.order_by(Game.id))]
