"""Scores: a channel's leaderboard, and a person's record with the leaderboards they are on."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import transaction
from slackapp.db.models import Score

Row = tuple[str, int, int, int]
"""(user id, games, wins, points)"""


def leaderboard(sessions: sessionmaker[Session], team_id: str, channel_id: str) -> list[Row]:
    with transaction(sessions) as session:
        return _board(session, team_id, channel_id)


def _board(session: Session, team_id: str, channel_id: str, limit: int | None = None) -> list[Row]:
    """A channel's leaderboard, best first: most points, then most wins."""
    rows = session.execute(
        select(Score.user_id, Score.games, Score.wins, Score.points)
        .where(Score.team_id == team_id, Score.channel_id == channel_id)
        .order_by(Score.points.desc(), Score.wins.desc(), Score.user_id)
        .limit(limit)
    )
    return [(user, games, wins, points) for user, games, wins, points in rows]


def record_of(
    sessions: sessionmaker[Session],
    teams: Sequence[str],
    user_id: str,
    boards_shown: int = 5,
    rows_shown: int = 10,
) -> tuple[tuple[int, int, int], list[tuple[str, str, list[Row]]]]:
    """A person's games, wins and points over the tables ``teams`` keep, and the leaderboards
    they are on, best first, each as (its workspace, its channel, its rows)."""
    theirs = (Score.team_id.in_(teams), Score.user_id == user_id)
    with transaction(sessions) as session:
        games, wins, points = session.execute(
            select(
                func.coalesce(func.sum(Score.games), 0),
                func.coalesce(func.sum(Score.wins), 0),
                func.coalesce(func.sum(Score.points), 0),
            ).where(*theirs)
        ).one()
        channels = session.execute(
            select(Score.team_id, Score.channel_id)
            .where(*theirs)
            .order_by(Score.points.desc())
            .limit(boards_shown)
        ).all()
        boards = [
            (team, channel, _board(session, team, channel, rows_shown))
            for team, channel in channels
        ]
        return (int(games), int(wins), int(points)), boards
