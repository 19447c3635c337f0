"""The lobby: open a table, join, leave, fill with bots, cancel, and start the night."""

from __future__ import annotations

import secrets

from slack_sdk.errors import SlackApiError
from sqlalchemy.exc import IntegrityError

import slackapp.blocks.lobby as lobby_screen
from slackapp.blocks.screen import Screen
from slackapp.db.models import Game, Phase, Seat
from slackapp.flow.night import begin_night
from slackapp.flow.table import (
    Reply,
    Table,
    labels,
    lock_game,
    open_game_in,
    people,
    post,
    say,
    seat_of,
    update,
)
from slackapp.game import BOT_TABLE, MAX_SEATS, MIN_PEOPLE, MIN_SEATS

BOT_NAMES = ("Astrid", "Bosse", "Cissi", "Dagge", "Ebba", "Frasse", "Greta", "Hasse")
NOT_SEATED = "You are not seated at this table. Press *Join* first."


def open_lobby(
    table: Table,
    team_id: str,
    channel_id: str,
    user_id: str,
    user_name: str,
    bots_allowed: bool = True,
) -> Reply:
    """``/varulv``: open a table in the channel with the caller seated, unless one is open.

    The game is committed before its lobby is posted, so a click on the lobby always finds it.
    """
    try:
        with table.transaction() as session:
            running = open_game_in(session, team_id, channel_id)
            if running is not None:
                return Reply(already_running(running))
            game = Game(
                team_id=team_id,
                channel_id=channel_id,
                host_user_id=user_id,
                phase=Phase.LOBBY,
                seed=secrets.randbits(62),
                night_seconds=table.lengths.night_seconds,
                day_seconds=table.lengths.day_seconds,
                vote_seconds=table.lengths.vote_seconds,
                bots_allowed=bots_allowed,
            )
            game.seats.append(Seat(position=0, user_id=user_id, display_name=user_name))
            session.add(game)
    except IntegrityError:  # the one-open-game-per-channel index: another /varulv won
        return Reply("A game is already open in this channel.")

    with table.transaction() as session:
        locked = lock_game(session, game.id)
        if locked is None or locked.phase != Phase.LOBBY:
            return Reply()
        try:
            locked.board_ts = post(table, channel_id, _lobby(locked))
        except SlackApiError as error:
            locked.phase = Phase.CANCELLED
            if error.response.get("error") in ("not_in_channel", "channel_not_found"):
                return Reply(
                    "I can't post here yet. Invite me with `/invite @Varulv`, then try again."
                )
            return Reply("Slack would not let me post the lobby here, so no game was opened.")
    return Reply()


def already_running(game: Game) -> str:
    where = {
        Phase.LOBBY: "Its lobby is open above: press *Join*.",
        Phase.NIGHT: "It is night: check your DM from Varulv.",
        Phase.DAY: "It is day: talk it out.",
        Phase.VOTE: "The vote is open above.",
    }.get(Phase(game.phase), "")
    return f"A game is already running in this channel. {where} (`/varulv stop` ends it.)"


def _lobby(game: Game) -> Screen:
    return lobby_screen.lobby(
        game.id,
        game.host_user_id,
        labels(game),
        game.bots_allowed,
        min_seats=MIN_SEATS,
        max_seats=MAX_SEATS,
        bot_table=BOT_TABLE,
    )


def _redraw(table: Table, game: Game) -> None:
    update(table, game.channel_id, game.board_ts, _lobby(game))


def join(table: Table, game_id: int, user_id: str, user_name: str) -> Reply:
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is None or game.phase != Phase.LOBBY:
            return Reply(closed_lobby(game))
        if seat_of(game, user_id) is not None:
            return Reply("You are already seated.")
        if len(game.seats) >= MAX_SEATS:
            bot = next((seat for seat in reversed(game.seats) if seat.is_bot), None)
            if bot is None:
                return Reply(f"The table is full ({MAX_SEATS} seats).")
            game.seats.remove(bot)  # a person always gets the seat over a bot
            session.flush()
        game.seats.append(
            Seat(position=_free_position(game), user_id=user_id, display_name=user_name)
        )
        session.flush()
        game.seats.sort(key=lambda seat: seat.position)
        _redraw(table, game)
    return Reply()


def leave(table: Table, game_id: int, user_id: str) -> Reply:
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is None or game.phase != Phase.LOBBY:
            return Reply(closed_lobby(game))
        seat = seat_of(game, user_id)
        if seat is None:
            return Reply("You are not seated.")
        game.seats.remove(seat)
        if not people(game):
            game.phase = Phase.CANCELLED
            game.ended_by = user_id
            update(
                table,
                game.channel_id,
                game.board_ts,
                lobby_screen.lobby_closed("Everyone left, so the table is closed."),
            )
            return Reply()
        _redraw(table, game)
    return Reply()


def fill_with_bots(table: Table, game_id: int, user_id: str) -> Reply:
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is None or game.phase != Phase.LOBBY:
            return Reply(closed_lobby(game))
        if seat_of(game, user_id) is None:
            return Reply(NOT_SEATED)
        if not game.bots_allowed:
            return Reply("Bots are switched off in this channel.")
        if len(game.seats) >= BOT_TABLE:
            return Reply(f"Bots only fill a table up to {BOT_TABLE} seats.")
        taken = {seat.bot_name for seat in game.seats}
        spare = (n for n in range(1, MAX_SEATS + 1) if f"bot{n}" not in taken)
        while len(game.seats) < BOT_TABLE:
            number = next(spare)
            game.seats.append(
                Seat(
                    position=_free_position(game),
                    bot_name=f"bot{number}",
                    display_name=BOT_NAMES[(number - 1) % len(BOT_NAMES)],
                )
            )
            session.flush()
        game.seats.sort(key=lambda seat: seat.position)
        _redraw(table, game)
    return Reply()


def cancel(table: Table, game_id: int, user_id: str) -> Reply:
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is None or game.phase != Phase.LOBBY:
            return Reply(closed_lobby(game))
        if seat_of(game, user_id) is None:
            return Reply(NOT_SEATED)
        game.phase = Phase.CANCELLED
        game.ended_by = user_id
        update(
            table,
            game.channel_id,
            game.board_ts,
            lobby_screen.lobby_closed(f"<@{user_id}> cancelled this table."),
        )
    return Reply()


def start(table: Table, game_id: int, user_id: str) -> Reply:
    """Deal and begin the night, unless the table is not ready or a person cannot get a DM."""
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is None or game.phase != Phase.LOBBY:
            return Reply(closed_lobby(game))
        if seat_of(game, user_id) is None:
            return Reply(NOT_SEATED)
        seats, humans = len(game.seats), len(people(game))
        if humans < MIN_PEOPLE:
            return Reply(
                f"A game needs at least {MIN_PEOPLE} people: a bot cannot argue, "
                "and the day is the game."
            )
        if not MIN_SEATS <= seats <= MAX_SEATS:
            hint = " Press *Fill with bots*." if game.bots_allowed else ""
            return Reply(
                f"A table has {MIN_SEATS} to {MAX_SEATS} seats; this one has {seats}.{hint}"
            )
        unreachable = _open_dms(table, game)
        if unreachable:
            say(
                table,
                game.channel_id,
                f"I can't send a private message to {', '.join(unreachable)}, so the game "
                "can't start. The lobby stays open: they can check their Slack settings or "
                "press *Leave*.",
            )
            return Reply()
        begin_night(table, game)
    return Reply()


def _open_dms(table: Table, game: Game) -> list[str]:
    """Open every person's DM channel; return the mentions of those who can't be reached."""
    unreachable = []
    for seat in people(game):
        try:
            response = table.client.conversations_open(users=seat.user_id)
            seat.dm_channel = str(response["channel"]["id"])
        except SlackApiError:
            unreachable.append(f"<@{seat.user_id}>")
    return unreachable


def _free_position(game: Game) -> int:
    taken = {seat.position for seat in game.seats}
    return next(position for position in range(MAX_SEATS) if position not in taken)


def closed_lobby(game: Game | None) -> str:
    if game is None:
        return "That game no longer exists."
    if game.phase in (Phase.CANCELLED, Phase.STOPPED, Phase.OVER):
        return "That game is over. Type `/varulv` to start a new one."
    return "That game has already started."
