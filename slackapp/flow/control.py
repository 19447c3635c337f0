"""Steps that are not a player's move: deadlines, stopping a game, the leaderboard."""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy import select

import slackapp.blocks.lobby as lobby_screen
from slackapp.db.models import TIMED_PHASES, Game, Phase, Score, Seat
from slackapp.flow.day import TIME_IS_UP, end_day
from slackapp.flow.night import end_night
from slackapp.flow.table import (
    NotInstalled,
    Reply,
    Table,
    lock_game,
    open_game_in,
    people,
    say,
    seat_of,
    update,
)
from slackapp.flow.vote import close_vote

log = logging.getLogger(__name__)


def on_deadline(table: Table, game_id: int) -> bool:
    """Advance the game if its current phase's deadline has passed; True if it moved.

    A timer that fires late, twice, or after the phase already moved on finds nothing to do.
    Nor does one that finds the game locked: another process's timer is ending the phase, or
    a step is, which ends it too when it is due (and else the next sweep comes back to it), so
    no timer thread sits waiting while other deadlines fall due.
    """
    with table.transaction() as session:
        game = lock_game(session, game_id, skip_locked=True)
        if game is None or game.phase not in TIMED_PHASES or game.deadline is None:
            return False
        if game.deadline > table.now():
            return False
        try:
            table = table.for_workspace(game.team_id)  # a timer has no request to take it from
        except NotInstalled:
            # Uninstalled mid-game: nobody can be told, and retrying every sweep helps no one.
            log.warning("the game's workspace is no longer installed, so the game stops")
            game.phase = Phase.STOPPED
            game.deadline = None
            return True
        if game.phase == Phase.NIGHT:
            end_night(table, session, game)
        elif game.phase == Phase.DAY:
            end_day(table, session, game, TIME_IS_UP)
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


def stop(table: Table, team_id: str, channel_id: str, user_id: str, retry: bool = False) -> Reply:
    """``/varulv stop``: anyone seated ends the running game, and the channel is told who.

    Told once the stop is committed: nobody reads "stopped" about a game a crash kept going.
    ``retry``: Slack is sending the command again, and the first delivery may have stopped it.
    """
    with table.transaction() as session:
        game = open_game_in(session, team_id, channel_id, lock=True)
        if game is None:
            return Reply() if retry else Reply("No game is running in this channel.")
        if seat_of(game, user_id) is None:
            return Reply("Only someone seated at the table can stop the game.")
        game.phase = Phase.STOPPED
        game.deadline = None
        game.ended_by = user_id
    note = lobby_screen.lobby_closed(f"<@{user_id}> stopped this game. No one scores.")
    update(table, game.channel_id, game.board_ts, note)
    for seat in people(game):
        update(table, seat.dm_channel, seat.dm_ts, note)
    say(table, channel_id, f"<@{user_id}> stopped the game of Varulv.")
    return Reply()


UNDELIVERED_AFTER = timedelta(seconds=10)
"""How long a started night may go without every card sent before the sweep sends the rest."""


def undelivered_games(table: Table) -> list[tuple[int, str]]:
    """Nights (id, team) a person still has no card message in, since a crash or a Slack outage
    cut the sending short; the step that started them has had time to finish by now."""
    with table.transaction() as session:
        rows = session.execute(
            select(Game.id, Game.team_id)
            .join(Seat, Seat.game_id == Game.id)
            .where(Game.phase == Phase.NIGHT, Game.updated_at < table.now() - UNDELIVERED_AFTER)
            .where(Seat.user_id.is_not(None), Seat.dm_ts.is_(None))
            .distinct()
        )
        return [(game_id, team_id) for game_id, team_id in rows]


def leaderboard(table: Table, team_id: str, channel_id: str) -> list[tuple[str, int, int, int]]:
    with table.transaction() as session:
        rows = session.execute(
            select(Score.user_id, Score.games, Score.wins, Score.points)
            .where(Score.team_id == team_id, Score.channel_id == channel_id)
            .order_by(Score.points.desc(), Score.wins.desc(), Score.user_id)
        )
        return [(user, games, wins, points) for user, games, wins, points in rows]
