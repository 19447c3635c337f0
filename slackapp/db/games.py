"""The game rows: their lock, their queries, and the phase machine's state read from and
written back to them. Seats, ballots and scores stay rows of their own, so the invariants
(one open game per channel, one seat per person, one ballot per seat) stay constraints."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, selectinload

from slackapp.db.models import NOBODY_TARGET, Ballot, Game, Score, Seat
from slackapp.game import machine as m
from slackapp.game.cards import Card
from slackapp.game.codec import choice_from_json, choice_to_json
from slackapp.game.referee import outcome_to_json


def lock(session: Session, game_id: int, skip_locked: bool = False) -> Game | None:
    """The game row, locked until the transaction ends, with its seats and ballots loaded.

    Two statements: the lock, then the seats with their ballots joined. The seats must be read
    by a statement begun after the lock was granted, or a step that waited for it would see
    them as they were before the step it waited for.

    ``skip_locked``: None at once if another transaction holds the lock, instead of waiting.
    """
    return session.scalars(
        select(Game)
        .where(Game.id == game_id)
        .with_for_update(skip_locked=skip_locked)
        .options(selectinload(Game.seats).joinedload(Seat.ballot))
    ).one_or_none()


def open_in(session: Session, team_id: str, channel_id: str, locked: bool = False) -> Game | None:
    """The channel's open game, if any (locked, with its seats, when ``locked``)."""
    query = select(Game).where(
        Game.team_id == team_id,
        Game.channel_id == channel_id,
        Game.phase.in_([phase.value for phase in m.OPEN_PHASES]),
    )
    if locked:
        query = query.with_for_update().options(selectinload(Game.seats).selectinload(Seat.ballot))
    return session.scalars(query).one_or_none()


def state_of(game: Game) -> m.GameState:
    """The machine's state of a game, read from its rows."""
    center = None
    if game.center is not None:
        left, right = (Card(card) for card in game.center)
        center = (left, right)
    return m.GameState(
        id=game.id,
        channel=game.channel_id,
        host=game.host_user_id,
        seed=game.seed,
        lengths=m.Lengths(game.night_seconds, game.day_seconds, game.vote_seconds),
        bots_allowed=game.bots_allowed,
        phase=m.Phase(game.phase),
        seats=tuple(_seat_state(seat) for seat in game.seats),
        center=center,
        deadline=game.deadline,
        ended_by=game.ended_by,
    )


def _seat_state(seat: Seat) -> m.SeatState:
    ballot = None
    if seat.ballot is not None:
        target = None if seat.ballot.target == NOBODY_TARGET else seat.ballot.target
        ballot = m.Ballot(target, seat.ballot.clicked_at)
    return m.SeatState(
        key=seat.key,
        name=seat.display_name,
        is_bot=seat.is_bot,
        position=seat.position,
        dealt=None if seat.dealt is None else Card(seat.dealt),
        choice=None if seat.night_choice is None else choice_from_json(seat.night_choice),
        pending=seat.pending_target,
        confirmed=seat.confirmed,
        heard_enough=seat.heard_enough,
        heard_enough_at=seat.heard_enough_at,
        ballot=ballot,
        reachable=seat.reachable,
    )


def store(session: Session, game: Game, state: m.GameState) -> None:
    """Write ``state`` back into the game's rows (only what changed is sent)."""
    game.phase = state.phase.value
    game.deadline = state.deadline
    game.center = None if state.center is None else [card.value for card in state.center]
    game.ended_by = state.ended_by
    rows = {seat.key: seat for seat in game.seats}
    wanted = {seat.key for seat in state.seats}
    gone = [row for key, row in rows.items() if key not in wanted]
    for row in gone:
        game.seats.remove(row)
    if gone:
        session.flush()  # a freed position may be taken again in the same step
    for seat in state.seats:
        found = rows.get(seat.key)
        row = (
            found
            if found is not None
            else Seat(
                user_id=None if seat.is_bot else seat.key,
                bot_name=seat.key if seat.is_bot else None,
                display_name=seat.name,
                position=seat.position,
            )
        )
        if found is None:
            game.seats.append(row)
        _store_seat(game, row, seat)


def _store_seat(game: Game, row: Seat, seat: m.SeatState) -> None:
    row.position = seat.position
    row.display_name = seat.name  # a bot takes another name when a namesake sits down
    row.dealt = None if seat.dealt is None else seat.dealt.value
    choice = None if seat.choice is None else choice_to_json(seat.choice)
    if row.night_choice != choice:
        row.night_choice = choice
    row.pending_target = seat.pending
    row.confirmed = seat.confirmed
    row.heard_enough = seat.heard_enough
    row.heard_enough_at = seat.heard_enough_at
    row.reachable = seat.reachable
    if seat.ballot is None:
        row.ballot = None
        return
    target = NOBODY_TARGET if seat.ballot.target is None else seat.ballot.target
    if row.ballot is None:
        row.ballot = Ballot(
            game_id=game.id, voter_key=seat.key, target=target, clicked_at=seat.ballot.clicked_at
        )
    elif (row.ballot.target, row.ballot.clicked_at) != (target, seat.ballot.clicked_at):
        row.ballot.target = target
        row.ballot.clicked_at = seat.ballot.clicked_at


def record_scores(session: Session, game: Game, scored: m.Scored, at: datetime) -> None:
    """Keep the decided game's outcome, and add it to each person's record in the channel
    (bots keep no record)."""
    game.outcome = outcome_to_json(scored.outcome)
    game.finished_at = at
    people = {seat.key for seat in game.seats if not seat.is_bot}
    rows = [
        {
            "team_id": game.team_id,
            "channel_id": game.channel_id,
            "user_id": award.key,
            "games": 1,
            "wins": int(award.won),
            "points": award.points,
        }
        for award in scored.awards
        if award.key in people
    ]
    if not rows:
        return
    added = insert(Score).values(rows)  # one statement for the whole table, under the lock
    session.execute(
        added.on_conflict_do_update(
            index_elements=[Score.team_id, Score.channel_id, Score.user_id],
            set_={
                "games": Score.games + added.excluded.games,
                "wins": Score.wins + added.excluded.wins,
                "points": Score.points + added.excluded.points,
            },
        )
    )
