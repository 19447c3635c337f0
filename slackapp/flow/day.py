"""The day: five minutes of talk, ended early when more than half the people heard enough."""

from __future__ import annotations

from sqlalchemy.orm import Session

import slackapp.blocks.day as day_screen
from slackapp.blocks.screen import Screen
from slackapp.db.models import Game, Phase
from slackapp.flow.table import Reply, Table, is_due, lock_game, people, post, seat_of, update
from slackapp.flow.vote import begin_vote
from slackapp.game import heard_enough_needed, vote_opens_early

TIME_IS_UP = "Time is up: the day is over."
MOST_HEARD_ENOUGH = "Most of the table has heard enough."


def begin_day(table: Table, session: Session, game: Game) -> None:
    game.phase = Phase.DAY
    game.deadline = table.deadline(game.day_seconds)
    for seat in game.seats:
        seat.heard_enough = False
    game.board_ts = post(table, game.channel_id, _board(game))
    table.alarm.arm(game.id, game.deadline)


def _board(game: Game) -> Screen:
    humans = people(game)
    assert game.deadline is not None
    return day_screen.day_board(
        game.id,
        game.deadline,
        heard=sum(seat.heard_enough for seat in humans),
        needed=heard_enough_needed(len(humans)),
        people=len(humans),
    )


def toggle_heard_enough(table: Table, game_id: int, user_id: str) -> Reply:
    """Mark or take back "heard enough"; the vote opens once more than half have marked it."""
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is not None and game.phase == Phase.DAY:
            # Once the day's end is due, no mark changes it: a crash cannot make it end otherwise.
            if is_due(table, game):
                end_day(table, session, game, TIME_IS_UP)
            elif _most_heard_enough(game):
                end_day(table, session, game, MOST_HEARD_ENOUGH)
        if game is None or game.phase != Phase.DAY:
            return Reply("The day is already over.")
        seat = seat_of(game, user_id)
        if seat is None:
            return Reply("You are not seated at this table, so the day is not yours to end.")
        seat.heard_enough = not seat.heard_enough
        if _most_heard_enough(game):
            end_day(table, session, game, MOST_HEARD_ENOUGH)
            return Reply()
        update(table, game.channel_id, game.board_ts, _board(game))
        if seat.heard_enough:
            return Reply("Noted: you have heard enough. Press again to take it back.")
        return Reply("Taken back: you want to hear more.")


def _most_heard_enough(game: Game) -> bool:
    humans = people(game)
    return vote_opens_early(len(humans), sum(each.heard_enough for each in humans))


def end_day(table: Table, session: Session, game: Game, reason: str) -> None:
    update(table, game.channel_id, game.board_ts, day_screen.day_over(reason))
    begin_vote(table, session, game)
