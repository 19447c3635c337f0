"""The vote: one sealed ballot per seat, then the reveal of everything."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

import slackapp.blocks.ballot as ballot_screen
import slackapp.blocks.reveal as reveal_screen
from slackapp.blocks import ids
from slackapp.blocks.screen import Screen
from slackapp.db.models import NOBODY_TARGET, Ballot, Game, Phase, Score
from slackapp.flow.table import (
    Reply,
    Table,
    deal_of,
    is_due,
    label,
    labels,
    lock_game,
    people,
    post,
    update,
)
from slackapp.game import (
    BotView,
    Card,
    IllegalBallot,
    NightChoice,
    Outcome,
    bot_ballot,
    check_ballot,
    play,
    resolve_night,
)
from slackapp.game.codec import choice_from_json
from slackapp.game.referee import outcome_to_json

VOTE_IS_CLOSED = "The vote is closed: ballots can no longer change."


def begin_vote(table: Table, session: Session, game: Game) -> None:
    """Open the vote; bots cast their ballots at once, from what they know."""
    game.phase = Phase.VOTE
    game.deadline = table.deadline(game.vote_seconds)
    dealt = deal_of(game)
    choices = _choices(game)
    night = resolve_night(dealt, choices)
    wolves_in_deck = [*dealt.dealt.values(), *dealt.center].count(Card.WEREWOLF)
    for seat in game.seats:
        if not seat.is_bot:
            continue
        choice = choices.get(seat.key)
        view = BotView(
            seat=seat.key,
            seats=dealt.seats,
            dealt=dealt.dealt[seat.key],
            lone_wolf=dealt.dealt_werewolves() == (seat.key,),
            choice=choice,
            learned=night.seen.get(seat.key),
        )
        target = bot_ballot(view, game.seed, wolves_in_deck)
        seat.ballot = Ballot(game_id=game.id, voter_key=seat.key, target=target or NOBODY_TARGET)
    session.flush()
    game.board_ts = post(table, game.channel_id, _board(game))
    table.alarm.arm(game.id, game.deadline)
    if _everyone_voted(game):
        close_vote(table, session, game)


def _choices(game: Game) -> dict[str, NightChoice]:
    return {
        seat.key: choice_from_json(seat.night_choice)
        for seat in game.seats
        if seat.night_choice is not None
    }


def _board(game: Game) -> Screen:
    assert game.deadline is not None
    voted = sum(seat.ballot is not None for seat in game.seats)
    return ballot_screen.ballot_board(game.id, labels(game), voted, len(game.seats), game.deadline)


def _everyone_voted(game: Game) -> bool:
    return all(seat.ballot is not None for seat in game.seats)


def vote_has_closed(table: Table, game: Game) -> bool:
    """The vote is closed by its deadline or by the last ballot, reveal out or not: no ballot
    changes after that, so a reveal redone after a crash tells the same story."""
    return game.phase == Phase.VOTE and (is_due(table, game) or _everyone_voted(game))


def cast(
    table: Table, game_id: int, user_id: str, target: str, clicked_at: Decimal | None = None
) -> Reply:
    """Cast or change a sealed ballot. Voting for oneself is refused and changes nothing.

    Two quick clicks may be handled out of order; the one clicked later (Slack's
    ``action_ts``) is the ballot.
    """
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is not None and vote_has_closed(table, game):
            close_vote(table, session, game)  # closed before this click came: reveal first
        if game is None or game.phase != Phase.VOTE:
            return Reply(VOTE_IS_CLOSED)
        seat = next((s for s in game.seats if s.user_id == user_id), None)
        if seat is None:
            return Reply("You are not seated at this table, so you have no ballot.")
        named = None if target == ids.NOBODY else target
        try:
            check_ballot(tuple(s.key for s in game.seats), seat.key, named)
        except IllegalBallot:
            return Reply("You cannot vote for yourself. Pick another player, or nobody.")
        if seat.ballot is not None and _clicked_earlier(clicked_at, seat.ballot.clicked_at):
            kept = _choice_text(game, seat.ballot.target)
            return Reply(f"Your ballot stays {kept}: you changed it after that click.")
        # An upsert: the ballot row is the seat's one ballot, whatever clicks race here.
        session.execute(
            insert(Ballot)
            .values(
                seat_id=seat.id,
                game_id=game.id,
                voter_key=seat.key,
                target=target,
                clicked_at=clicked_at,
            )
            .on_conflict_do_update(
                index_elements=[Ballot.seat_id],
                set_={"target": target, "clicked_at": clicked_at, "cast_at": func.now()},
            )
        )
        session.expire(seat, ["ballot"])
        choice = _choice_text(game, target)
        if _everyone_voted(game):
            close_vote(table, session, game)
            return Reply(f"Your ballot: {choice}. That was the last one: the reveal is up.")
        update(table, game.channel_id, game.board_ts, _board(game))
        return Reply(f"Your ballot: {choice}. You can change it until the vote closes.")


def _clicked_earlier(clicked_at: Decimal | None, stored: Decimal | None) -> bool:
    return clicked_at is not None and stored is not None and clicked_at < stored


def _choice_text(game: Game, target: str) -> str:
    if target == NOBODY_TARGET:
        return "nobody"
    return next(label(seat).mention for seat in game.seats if seat.key == target)


def close_vote(table: Table, session: Session, game: Game) -> None:
    """Count, decide, score, and reveal everything in one channel message."""
    dealt = deal_of(game)
    ballots = {
        seat.key: (None if seat.ballot.target == NOBODY_TARGET else seat.ballot.target)
        for seat in game.seats
        if seat.ballot is not None
    }
    outcome = play(dealt, _choices(game), ballots)
    game.outcome = outcome_to_json(outcome)
    game.phase = Phase.OVER
    game.deadline = None
    _score(session, game, outcome)
    closed = ballot_screen.ballot_closed(len(ballots), len(game.seats))
    update(table, game.channel_id, game.board_ts, closed)
    names = {seat.key: label(seat) for seat in game.seats}
    game.board_ts = post(table, game.channel_id, reveal_screen.reveal(outcome, names))
    for seat in people(game):
        won = seat.key in outcome.result.winners
        screen = reveal_screen.dm_game_over(
            game.channel_id,
            dealt.dealt[seat.key],
            outcome.night.dawn[seat.key],
            outcome.result.points[seat.key],
            won,
        )
        update(table, seat.dm_channel, seat.dm_ts, screen)


def _score(session: Session, game: Game, outcome: Outcome) -> None:
    """Add this game to each person's record in the channel (bots keep no record)."""
    for seat in people(game):
        assert seat.user_id is not None
        won = int(seat.key in outcome.result.winners)
        points = outcome.result.points[seat.key]
        session.execute(
            insert(Score)
            .values(
                team_id=game.team_id,
                channel_id=game.channel_id,
                user_id=seat.user_id,
                games=1,
                wins=won,
                points=points,
            )
            .on_conflict_do_update(
                index_elements=[Score.team_id, Score.channel_id, Score.user_id],
                set_={
                    "games": Score.games + 1,
                    "wins": Score.wins + won,
                    "points": Score.points + points,
                },
            )
        )
