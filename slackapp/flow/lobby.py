"""The lobby: open a table, join, leave, fill with bots, cancel, and start the night."""

from __future__ import annotations

import secrets

from slack_sdk.errors import SlackApiError
from sqlalchemy.exc import IntegrityError

import slackapp.blocks.lobby as lobby_screen
from slackapp.blocks.screen import Screen
from slackapp.db.models import Game, Phase, Seat
from slackapp.flow.night import begin_night, deliver_cards
from slackapp.flow.settings import choice_in
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
SLACK_IS_BUSY = frozenset(
    {"ratelimited", "fatal_error", "internal_error", "service_unavailable", "request_timeout"}
)
"""Errors that say nothing about the person: Slack was throttling or failing at that moment."""


def open_lobby(
    table: Table,
    team_id: str,
    channel_id: str,
    user_id: str,
    user_name: str,
    bots_allowed: bool | None = None,
    retry: bool = False,
) -> Reply:
    """``/varulv``: open a table in the channel with the caller seated, unless one is open.

    The game takes the channel's settings (``/varulv settings``) as they are now;
    ``bots_allowed`` overrides the channel's choice. The game is committed before its lobby is
    posted, so a click on the lobby always finds it; a lobby whose post a crash cut off is
    posted by the next ``/varulv`` in the channel. ``retry``: Slack is sending the command
    again (``X-Slack-Retry-Num``); if the first delivery opened this person's table, it stays
    the one table and the person is told nothing twice.
    """
    try:
        with table.transaction() as session:
            running = open_game_in(session, team_id, channel_id)
            if running is not None and running.phase == Phase.LOBBY and not running.board_ts:
                game = running  # opened, but a crash cut its lobby's post off: post it now
            elif running is not None:
                own = running.phase == Phase.LOBBY and running.host_user_id == user_id
                return Reply() if retry and own else Reply(already_running(running))
            else:
                chosen = choice_in(session, team_id, channel_id, table.lengths)
                game = Game(
                    team_id=team_id,
                    channel_id=channel_id,
                    host_user_id=user_id,
                    phase=Phase.LOBBY,
                    seed=secrets.randbits(62),
                    night_seconds=chosen.night_seconds,
                    day_seconds=chosen.day_seconds,
                    vote_seconds=chosen.vote_seconds,
                    bots_allowed=chosen.bots_allowed if bots_allowed is None else bots_allowed,
                )
                game.seats.append(Seat(position=0, user_id=user_id, display_name=user_name))
                session.add(game)
    except IntegrityError:  # the one-open-game-per-channel index: another /varulv won
        return Reply() if retry else Reply("A game is already open in this channel.")

    # Someone else's table (found without its lobby, being posted or cut off): say so.
    done = Reply(already_running(game)) if game.host_user_id != user_id else Reply()
    with table.transaction() as session:
        locked = lock_game(session, game.id)
        if locked is None or locked.phase != Phase.LOBBY or locked.board_ts:
            return done
        try:
            locked.board_ts = post(table, channel_id, _lobby(locked))
        except SlackApiError as error:
            locked.phase = Phase.CANCELLED
            if error.response.get("error") in ("not_in_channel", "channel_not_found"):
                return Reply(
                    "I can't post here yet. Invite me with `/invite @Varulv`, then try again."
                )
            return Reply("Slack would not let me post the lobby here, so no game was opened.")
    return done


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


def _show_lobby(table: Table, game_id: int) -> None:
    """Redraw the lobby from what is committed, once a step has committed: nobody sees a seat
    that a crash could still take away. Locked, so redraws land in the order of the commits."""
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is not None and game.phase == Phase.LOBBY:
            update(table, game.channel_id, game.board_ts, _lobby(game))


def _close_lobby(table: Table, game: Game, note: str) -> None:
    """The lobby's last words, drawn after the commit that closed it (a closed table never
    changes again, so no lock is needed to keep them in order)."""
    update(table, game.channel_id, game.board_ts, lobby_screen.lobby_closed(note))


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
    _show_lobby(table, game_id)
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
        emptied = not people(game)
        if emptied:
            game.phase = Phase.CANCELLED
            game.ended_by = user_id
    if emptied:
        _close_lobby(table, game, "Everyone left, so the table is closed.")
    else:
        _show_lobby(table, game_id)
    return Reply()


def _seated_in_lobby(game: Game | None, user_id: str) -> Reply | None:
    """The refusal for a seated-only lobby button, or None when ``user_id`` may press it."""
    if game is None or game.phase != Phase.LOBBY:
        return Reply(closed_lobby(game))
    if seat_of(game, user_id) is None:
        return Reply(NOT_SEATED)
    return None


def fill_with_bots(table: Table, game_id: int, user_id: str) -> Reply:
    with table.transaction() as session:
        game = lock_game(session, game_id)
        refusal = _seated_in_lobby(game, user_id)
        if refusal is not None:
            return refusal
        assert game is not None
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
    _show_lobby(table, game_id)
    return Reply()


def cancel(table: Table, game_id: int, user_id: str) -> Reply:
    with table.transaction() as session:
        game = lock_game(session, game_id)
        refusal = _seated_in_lobby(game, user_id)
        if refusal is not None:
            return refusal
        assert game is not None
        game.phase = Phase.CANCELLED
        game.ended_by = user_id
    _close_lobby(table, game, f"<@{user_id}> cancelled this table.")
    return Reply()


def start(table: Table, game_id: int, user_id: str) -> Reply:
    """Deal and begin the night, unless the table is not ready or a person cannot get a DM.

    The deal is committed first and the cards are sent after it (:func:`deliver_cards`), so
    every card anyone sees belongs to the one deal of this game.
    """
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is not None and game.phase == Phase.NIGHT and seat_of(game, user_id) is not None:
            # Pressed again, on a lobby a crash left undrawn: send whatever is still unsent.
            reply = Reply(closed_lobby(game))
        elif game is None or game.phase != Phase.LOBBY:
            return Reply(closed_lobby(game))
        else:
            refusal = _deal(table, game, user_id)
            if refusal is not None:
                return refusal
            reply = Reply()
    deliver_cards(table, game_id)
    return reply


def _deal(table: Table, game: Game, user_id: str) -> Reply | None:
    """Begin the night of a table in its lobby; the refusal when it is not ready."""
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
        return Reply(f"A table has {MIN_SEATS} to {MAX_SEATS} seats; this one has {seats}.{hint}")
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
    return None


def _open_dms(table: Table, game: Game) -> list[str]:
    """Open every person's DM channel; return the mentions of those who can't be reached."""
    unreachable = []
    for seat in people(game):
        try:
            response = table.client.conversations_open(users=seat.user_id)
            seat.dm_channel = str(response["channel"]["id"])
        except SlackApiError as error:
            if error.response.get("error") in SLACK_IS_BUSY:
                raise  # not the person's settings: the step fails and says Slack is busy
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
