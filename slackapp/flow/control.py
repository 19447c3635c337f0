"""Steps that are not a player's move: deadlines, stopping a game, the leaderboard."""

from __future__ import annotations

import logging

from sqlalchemy import select

import slackapp.blocks.lobby as lobby_screen
from slackapp.db.models import TIMED_PHASES, Game, Phase, Score
from slackapp.flow.day import end_day
from slackapp.flow.night import end_night
from slackapp.flow.table import Reply, Table, lock_game, open_game_in, people, seat_of, update
from slackapp.flow.vote import close_vote

log = logging.getLogger(__name__)


def on_deadline(table: Table, game_id: int) -> bool:
    """Advance the game if its current phase's deadline has passed; True if it moved.

    A timer that fires late, twice, or after the phase already moved on finds nothing to do.
    """
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is None or game.phase not in TIMED_PHASES or game.deadline is None:
            return False
        if game.deadline > table.now():
            return False
        if game.phase == Phase.NIGHT:
            end_night(table, session, game)
        elif game.phase == Phase.DAY:
            end_day(table, session, game, "Time is up: the day is over.")
        else:
            close_vote(table, session, game)
    return True


def due_games(table: Table) -> list[int]:
    """Open games whose deadline has passed, oldest first."""
    with table.transaction() as session:
        return list(
            session.scalars(
                select(Game.id)
                .where(Game.phase.in_([p.value for p in TIMED_PHASES]))
                .where(Game.deadline <= table.now())
                .order_by(Game.deadline)
            )
        )


def armed_games(table: Table) -> list[tuple[int, object]]:
    """Every open game's id and deadline, to re-arm timers after a restart."""
    with table.transaction() as session:
        rows = session.execute(
            select(Game.id, Game.deadline).where(Game.phase.in_([p.value for p in TIMED_PHASES]))
        )
        return [(game_id, deadline) for game_id, deadline in rows]


def stop(table: Table, team_id: str, channel_id: str, user_id: str) -> Reply:
    """``/varulv stop``: anyone seated ends the running game, and the channel is told who."""
    with table.transaction() as session:
        game = open_game_in(session, team_id, channel_id, lock=True)
        if game is None:
            return Reply("No game is running in this channel.")
        if seat_of(game, user_id) is None:
            return Reply("Only someone seated at the table can stop the game.")
        game.phase = Phase.STOPPED
        game.deadline = None
        game.ended_by = user_id
        note = lobby_screen.lobby_closed(f"<@{user_id}> stopped this game. No one scores.")
        update(table, game.channel_id, game.board_ts, note)
        for seat in people(game):
            update(table, seat.dm_channel, seat.dm_ts, note)
        table.client.chat_postMessage(
            channel=channel_id, text=f"<@{user_id}> stopped the game of Varulv."
        )
    return Reply()


def leaderboard(table: Table, team_id: str, channel_id: str) -> list[tuple[str, int, int, int]]:
    with table.transaction() as session:
        rows = session.execute(
            select(Score.user_id, Score.games, Score.wins, Score.points)
            .where(Score.team_id == team_id, Score.channel_id == channel_id)
            .order_by(Score.points.desc(), Score.wins.desc(), Score.user_id)
        )
        return [(user, games, wins, points) for user, games, wins, points in rows]
