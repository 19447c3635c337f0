"""Scores: a channel's leaderboard, and a person's record with the leaderboards they are on."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import transaction
from slackapp.db.models import Score

Row = tuple[str, int, int, int]
"""(user id, games, wins, points)"""


def leaderboard(sessions: sessionmaker[Session], team_id: str, channel_id: str) -> list[Row]:
    with transaction(sessions) as session:
        rows = session.execute(
            select(Score.user_id, Score.games, Score.wins, Score.points)
            .where(Score.team_id == team_id, Score.channel_id == channel_id)
            .order_by(Score.points.desc(), Score.wins.desc(), Score.user_id)
        )
        return [(user, games, wins, points) for user, games, wins, points in rows]


def record_of(
    sessions: sessionmaker[Session],
    team_id: str,
    user_id: str,
    boards_shown: int = 5,
    rows_shown: int = 10,
) -> tuple[tuple[int, int, int], list[tuple[str, list[Row]]]]:
    with transaction(sessions) as session:
        games, wins, points = session.execute(
            select(
                func.coalesce(func.sum(Score.games), 0),
                func.coalesce(func.sum(Score.wins), 0),
                func.coalesce(func.sum(Score.points), 0),
            ).where(Score.team_id == team_id, Score.user_id == user_id)
        ).one()
        channels = session.scalars(
            select(Score.channel_id)
            .where(Score.team_id == team_id, Score.user_id == user_id)
            .order_by(Score.points.desc())
            .limit(boards_shown)
        ).all()
        boards: list[tuple[str, list[Row]]] = []
        for channel in channels:
            rows = session.execute(
                select(Score.user_id, Score.games, Score.wins, Score.points)
                .where(Score.team_id == team_id, Score.channel_id == channel)
                .order_by(Score.points.desc(), Score.wins.desc(), Score.user_id)
                .limit(rows_shown)
            )
            boards.append((channel, [(u, g, w, p) for u, g, w, p in rows]))
        return (int(games), int(wins), int(points)), boards
