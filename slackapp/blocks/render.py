"""The phase machine's views as Block Kit: each view goes to the screen module that draws it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import assert_never

import slackapp.blocks.ballot as ballot_screen
import slackapp.blocks.day as day_screen
import slackapp.blocks.lobby as lobby_screen
import slackapp.blocks.night as night_screen
import slackapp.blocks.reveal as reveal_screen
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.said import said, said_or_text
from slackapp.blocks.screen import Screen
from slackapp.blocks.sides import learned_goal, minion_without_werewolves_goal
from slackapp.blocks.words import ENGLISH, Words, words
from slackapp.game.cards import BOT_TABLE, MAX_SEATS, MIN_SEATS, Card
from slackapp.game.effects import (
    BallotBoardView,
    BallotClosedView,
    ClosedView,
    DayBoardView,
    DayOverView,
    GameOverDmView,
    LobbyView,
    NightBoardView,
    NightDmView,
    NightOverView,
    PersonalBallotView,
    RevealView,
    View,
)
from slackapp.game.lines import SeatName
from slackapp.game.night import SawCard, Swap, may_still_move


def label(seat: SeatName) -> SeatLabel:
    return SeatLabel(key=seat.key, name=seat.name, user_id=None if seat.is_bot else seat.key)


def labels(seats: Sequence[SeatName]) -> list[SeatLabel]:
    return [label(seat) for seat in seats]


def render(view: View, words: Words = ENGLISH) -> Screen:
    w = words
    match view:
        case LobbyView(game_id, host, seats, kept):
            return lobby_screen.lobby(
                game_id,
                host,
                labels(seats),
                kept,
                min_seats=MIN_SEATS,
                max_seats=MAX_SEATS,
                bot_table=BOT_TABLE,
                words=w,
            )
        case ClosedView(line):
            return lobby_screen.lobby_closed(said_or_text(line, w), w)
        case NightBoardView(seats, confirmed, people, deadline, shown):
            return night_screen.night_board(
                labels(seats), confirmed, people, deadline, fingerprint=shown, words=w
            )
        case NightOverView(seats, shown):
            return night_screen.night_over(labels(seats), fingerprint=shown, words=w)
        case DayBoardView(
            game_id, deadline, heard, needed, people, seat_count, first, order, silent
        ):
            speaker = None if first is None else label(first)
            return day_screen.day_board(
                game_id,
                deadline,
                heard,
                needed,
                people,
                seat_count,
                first_speaker=speaker,
                claims_order=labels(order),
                silent=labels(silent),
                words=w,
            )
        case DayOverView(reason, seat_count):
            return day_screen.day_over(said(reason, w), seat_count, w)
        case BallotBoardView(game_id, seats, voted, total, deadline):
            return ballot_screen.ballot_board(game_id, voted, total, deadline, len(seats), w)
        case BallotClosedView(voted, total):
            return ballot_screen.ballot_closed(voted, total, w)
        case RevealView(outcome, seats, game_id):
            named = {seat.key: label(seat) for seat in seats}
            return reveal_screen.reveal(outcome, named, game_id=game_id or None, words=w)
        case NightDmView():
            return night_dm(view, w)
        case GameOverDmView(channel, dealt, dawn, points, won, ballot, moved):
            return reveal_screen.dm_game_over(
                channel, dealt, dawn, points, won, ballot, moved=moved, words=w
            )
        case _:  # a view with no screen fails mypy here
            assert_never(view)


def personal_ballot(view: PersonalBallotView, said: str | None = None) -> Screen:
    """A person's own ballot, privately, in the game's words; ``said`` answers their last
    click on it."""
    others = {seat.key: label(seat) for seat in view.others}
    chosen = None if view.target is None else others.get(view.target)
    return ballot_screen.personal_ballot(
        view.game_id,
        list(others.values()),
        chosen,
        view.voted,
        view.deadline,
        said,
        words(view.language),
    )


def night_dm(view: NightDmView, words: Words = ENGLISH) -> Screen:
    names = {seat.key: label(seat) for seat in view.seats}
    known, outcome = night_lines(view, names, words)
    me = names[view.me.key]
    return night_screen.night_dm(
        game_id=view.game_id,
        channel_id=view.channel,
        card=view.card,
        me=me,
        others=[names[seat.key] for seat in view.seats if seat.key != me.key],
        kind=view.kind,
        known=known,
        pending_first=names.get(view.pending or ""),
        outcome_text=outcome,
        goal=_learned_goal(view, words),
        words=words,
        dealt_goal=minion_without_werewolves_goal(words)
        if view.minion_without_werewolves
        else None,
    )


def night_lines(
    view: NightDmView, names: Mapping[str, SeatLabel], words: Words = ENGLISH
) -> tuple[str | None, str | None]:
    """What the seat learned on waking, and what it did and learned of its own choice."""
    w = words
    known = None
    if view.waking is not None:
        known = night_screen.knowledge_text(view.waking, names, card=view.card, words=w)
    outcome = None
    if view.confirmed:
        outcome = _outcome_text(view, names, w)
    elif view.late and view.kind is not None:
        outcome = w._("The night ended before you chose, so you did nothing tonight.")
    elif view.late:  # a card with no choice to make: only the confirmation was missing
        outcome = w._("The night ended before you confirmed it.")
    if view.dawn_card is not None:
        dawn = night_screen.knowledge_text(SawCard(view.dawn_card), names, card=view.card, words=w)
        outcome = dawn if outcome is None else f"{outcome}\n{dawn}"
    return known, outcome


def _learned_goal(view: NightDmView, words: Words) -> str | None:
    """The side of the card the seat has seen it holds now, or None if it has seen none."""
    held = view.dawn_card
    if held is None and view.card is Card.ROBBER and isinstance(view.learned, SawCard):
        held = view.learned.card
    if held is None:
        return None
    return learned_goal(view.card, held, may_still_move(view.card, len(view.seats)), words)


def _outcome_text(view: NightDmView, names: Mapping[str, SeatLabel], w: Words) -> str:
    choice = view.choice
    if isinstance(choice, Swap):
        first, second = names[choice.first].mention, names[choice.second].mention
        return w._(
            "You swapped the cards of {first} and {second}. Sleep well.", first=first, second=second
        )
    if choice is not None and view.learned is not None:
        return night_screen.knowledge_text(
            view.learned, names, card=view.card, choice=choice, words=w
        )
    if view.kind is not None:
        return w._("You chose to do nothing tonight. Sleep well.")
    if view.card is Card.INSOMNIAC:
        return w._("Sleep well: you will see your card again at dawn.")
    return w._("Got it. Sleep well.")
