"""The night: deal, private cards, choices collected in parallel, dawn."""

from __future__ import annotations

from sqlalchemy.orm import Session

import slackapp.blocks.night as night_screen
from slackapp.blocks import ids
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import Screen
from slackapp.db.models import Game, Phase, Seat
from slackapp.flow.day import begin_day
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
    Deal,
    IllegalChoice,
    LookAtCenter,
    LookAtSeat,
    Night,
    NightChoice,
    Peek,
    Rob,
    SawCard,
    Swap,
    bot_night_choice,
    check_choice,
    choice_kind,
    deal,
    learned_on_choosing,
    resolve_night,
)
from slackapp.game.codec import choice_from_json, choice_to_json

NIGHT_IS_OVER = "The night is over: your choice can no longer change anything."


def begin_night(table: Table, game: Game) -> None:
    """Deal the cards and let the bots choose. The caller commits, then :func:`deliver_cards`
    sends every person their card: a deal is fixed before anyone sees a card of it."""
    dealt = deal([seat.key for seat in game.seats], game.seed)
    for seat in game.seats:
        seat.dealt = dealt.dealt[seat.key].value
    game.center = [card.value for card in dealt.center]
    game.phase = Phase.NIGHT
    game.deadline = table.deadline(game.night_seconds)

    for seat in game.seats:
        if seat.is_bot:
            view = BotView(seat.key, dealt.seats, dealt.dealt[seat.key], _lone_wolf(dealt, seat))
            choice = bot_night_choice(view, game.seed)
            seat.night_choice = None if choice is None else choice_to_json(choice)
            seat.confirmed = True
    table.alarm.arm(game.id, game.deadline)


def deliver_cards(table: Table, game_id: int) -> None:
    """Turn the lobby into the night board, then send each person who has no card message yet
    their card, one message per transaction.

    Each message's ts is committed as soon as Slack answers, so a crash can repeat at most the
    one message Slack took as the process died. Safe to call again at any time (the deadline
    sweep does, for a night whose cards a crash or a Slack outage left undelivered).
    """
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is None or game.phase != Phase.NIGHT:
            return
        _redraw_board(table, game)
    while True:
        with table.transaction() as session:
            game = lock_game(session, game_id)
            if game is None or game.phase != Phase.NIGHT:
                return
            seat = next((each for each in people(game) if each.dm_ts is None), None)
            if seat is None:
                return
            assert seat.dm_channel is not None, "DMs are opened before the night begins"
            seat.dm_ts = post(table, seat.dm_channel, night_dm(game, deal_of(game), seat))


def _lone_wolf(dealt: Deal, seat: Seat) -> bool:
    return dealt.dealt_werewolves() == (seat.key,)


def _redraw_board(table: Table, game: Game) -> None:
    humans = people(game)
    assert game.deadline is not None
    screen = night_screen.night_board(
        labels(game), sum(seat.confirmed for seat in humans), len(humans), game.deadline
    )
    update(table, game.channel_id, game.board_ts, screen)


def night_dm(
    game: Game, dealt: Deal, seat: Seat, dawn_card: Card | None = None, late: bool = False
) -> Screen:
    """A person's private night message: card, what it knows on waking, choices or result.

    ``dawn_card`` is the Insomniac's card at dawn; ``late`` marks a seat the night ended on.
    """
    card = dealt.dealt[seat.key]
    names = {each.key: label(each) for each in game.seats}
    lone = _lone_wolf(dealt, seat)
    known = None
    if card in (Card.WEREWOLF, Card.MINION):
        waking = learned_on_choosing(dealt, seat.key, None)
        assert waking is not None
        known = night_screen.knowledge_text(waking, names, card=card)
    outcome = None
    if seat.confirmed:
        outcome = _outcome_text(dealt, seat, names)
    elif late:
        outcome = "The night ended before you chose, so you did nothing tonight."
    if dawn_card is not None:
        dawn = night_screen.knowledge_text(SawCard(dawn_card), names, card=card)
        outcome = dawn if outcome is None else f"{outcome}\n{dawn}"
    pending = names.get(seat.pending_target or "")
    return night_screen.night_dm(
        game_id=game.id,
        channel_id=game.channel_id,
        card=card,
        me=names[seat.key],
        others=[names[key] for key in dealt.seats if key != seat.key],
        kind=choice_kind(card, lone),
        known=known,
        pending_first=pending,
        outcome_text=outcome,
    )


def _outcome_text(dealt: Deal, seat: Seat, names: dict[str, SeatLabel]) -> str:
    choice = None if seat.night_choice is None else choice_from_json(seat.night_choice)
    card = dealt.dealt[seat.key]
    learned = learned_on_choosing(dealt, seat.key, choice)
    if isinstance(choice, Swap):
        first, second = names[choice.first].mention, names[choice.second].mention
        return f"You swapped the cards of {first} and {second}. Sleep well."
    if choice is not None and learned is not None:
        return night_screen.knowledge_text(learned, names, card=card, choice=choice)
    if choice_kind(card, _lone_wolf(dealt, seat)) is not None:
        return "You chose to do nothing tonight. Sleep well."
    if card is Card.INSOMNIAC:
        return "Sleep well: you will see your card again at dawn."
    return "Got it. Sleep well."


def night_action(
    table: Table, game_id: int, user_id: str, action: str, target: str | None
) -> Reply:
    """A person's night button: choose, skip or confirm. Ends the night when all have.

    The choice is committed before the person's message shows what it did, so a crash in
    between loses nothing they saw: their message still offers the choice, and any later click
    of theirs redraws it from what was kept.
    """
    with table.transaction() as session:
        game = lock_game(session, game_id)
        reply, confirmed = _night_move(table, session, game, user_id, action, target)
    # Only a confirmation changes the board: a Troublemaker's first pick must not show there.
    show_night_message(table, game_id, user_id, with_board=confirmed)
    return reply


def _night_move(
    table: Table,
    session: Session,
    game: Game | None,
    user_id: str,
    action: str,
    target: str | None,
) -> tuple[Reply, bool]:
    """The reply, and whether this move confirmed the seat's night."""
    if game is not None and dawn_is_due(table, game):
        end_night(table, session, game)  # dawn was due before this click came: dawn first
    if game is None or game.phase != Phase.NIGHT:
        return Reply(NIGHT_IS_OVER), False
    seat = next((s for s in game.seats if s.user_id == user_id), None)
    if seat is None:
        return Reply("You are not seated at this table."), False
    if seat.confirmed:
        return Reply("You have already confirmed your night."), False
    dealt = deal_of(game)
    try:
        choice, done = _read_choice(dealt, seat, action, target)
    except IllegalChoice as error:
        return Reply(f"That is not a move your card can make ({error})."), False
    if done:
        seat.night_choice = None if choice is None else choice_to_json(choice)
        seat.pending_target = None
        seat.confirmed = True
        if all(each.confirmed for each in game.seats):
            end_night(table, session, game)
    return Reply(), done


def dawn_is_due(table: Table, game: Game) -> bool:
    """At night: everyone has confirmed, or the deadline has passed (a timer may lag)."""
    if game.phase != Phase.NIGHT:
        return False
    return is_due(table, game) or all(each.confirmed for each in game.seats)


def show_night_message(table: Table, game_id: int, user_id: str, with_board: bool = False) -> None:
    """Redraw a person's night message (and, at night and ``with_board``, the board) from what
    is committed.

    It takes the game's lock like a step, so redraws land in the order of the commits they
    show: a slow redraw can never paint over a newer one.
    """
    with table.transaction() as session:
        game = lock_game(session, game_id)
        if game is None or game.phase not in (Phase.NIGHT, Phase.DAY, Phase.VOTE):
            return  # the game's end drew its final screens itself
        seat = next((s for s in game.seats if s.user_id == user_id), None)
        if seat is None or seat.dm_ts is None:
            return
        dealt = deal_of(game)
        if game.phase == Phase.NIGHT:
            update(table, seat.dm_channel, seat.dm_ts, night_dm(game, dealt, seat))
            if with_board:
                _redraw_board(table, game)
        else:
            night = resolve_night(dealt, _choices(game))
            update(table, seat.dm_channel, seat.dm_ts, _dawn_dm(game, dealt, night, seat))


def _read_choice(
    dealt: Deal, seat: Seat, action: str, target: str | None
) -> tuple[NightChoice | None, bool]:
    """The choice a button makes, and whether it completes the seat's night.

    The Troublemaker picks two seats in two clicks; the first is kept as ``pending_target``.
    """
    kind = choice_kind(dealt.dealt[seat.key], _lone_wolf(dealt, seat))
    choice: NightChoice | None
    if action == ids.NIGHT_CONFIRM:
        if kind is not None:
            raise IllegalChoice("your card has a choice to make, or skip")
        return None, True
    if action == ids.NIGHT_SKIP:
        if kind is None:
            raise IllegalChoice("there is nothing to skip")
        return None, True
    if action == ids.NIGHT_SWAP_RESET:
        seat.pending_target = None
        return None, False
    if target is None:
        raise IllegalChoice("no target")
    if action == ids.NIGHT_PEEK:
        if target not in ("0", "1"):
            raise IllegalChoice("peek at the left or the right centre card")
        choice = Peek(int(target))
    elif action == ids.NIGHT_LOOK:
        choice = LookAtCenter() if target == ids.CENTER else LookAtSeat(target)
    elif action == ids.NIGHT_ROB:
        choice = Rob(target)
    elif action == ids.NIGHT_SWAP:
        if seat.pending_target is None:
            if target == seat.key or target not in dealt.seats:
                raise IllegalChoice("swap two other players")
            seat.pending_target = target
            return None, False
        choice = Swap(seat.pending_target, target)
    else:
        raise IllegalChoice(f"unknown move {action}")
    check_choice(dealt, seat.key, choice)
    return choice, True


def _choices(game: Game) -> dict[str, NightChoice]:
    return {
        seat.key: choice_from_json(seat.night_choice)
        for seat in game.seats
        if seat.night_choice is not None
    }


def _dawn_dm(game: Game, dealt: Deal, night: Night, seat: Seat) -> Screen:
    """A person's night message once the night is over: an Insomniac sees its card at dawn."""
    insomniac = dealt.dealt[seat.key] is Card.INSOMNIAC
    dawn_card = night.dawn[seat.key] if insomniac else None
    return night_dm(game, dealt, seat, dawn_card=dawn_card, late=not seat.confirmed)


def end_night(table: Table, session: Session, game: Game) -> None:
    """Dawn: resolve the night in its fixed order, tell each Insomniac, and begin the day.

    Every choice is committed and closed by now (everyone confirmed, or the deadline passed),
    so what dawn shows is the same however often a crash makes it run.
    """
    dealt = deal_of(game)
    night = resolve_night(dealt, _choices(game))
    for seat in people(game):
        if dealt.dealt[seat.key] is Card.INSOMNIAC or not seat.confirmed:
            update(table, seat.dm_channel, seat.dm_ts, _dawn_dm(game, dealt, night, seat))
    update(table, game.channel_id, game.board_ts, night_screen.night_over(labels(game)))
    begin_day(table, session, game)
