"""A workspace leaving: when Varulv is uninstalled there, or its bot token revoked."""

from __future__ import annotations

from sqlalchemy import select

from slackapp.db.models import OPEN_PHASES, Game, Phase
from slackapp.flow.table import Table


def stop_open_games(table: Table, team_id: str) -> int:
    """End the workspace's open games without a word (no token is left to post with).

    Their timers then find nothing to do, and a reinstall can open new tables at once. Scores
    and channel settings stay, so the leaderboards are still there after a reinstall.
    """
    with table.transaction() as session:
        games = session.scalars(
            select(Game)
            .where(Game.team_id == team_id, Game.phase.in_([p.value for p in OPEN_PHASES]))
            .with_for_update()
        ).all()
        for game in games:
            game.phase = Phase.STOPPED
            game.deadline = None
        return len(games)
