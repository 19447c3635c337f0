"""The Block Kit screens: they build within Slack's limits, their buttons carry the right
values, the public ones keep every secret, and the reveal tells the whole game."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from slackapp.blocks import ids
from slackapp.blocks.ballot import HOW_THE_VOTE_COUNTS, ballot_board, ballot_closed, personal_ballot
from slackapp.blocks.day import day_board, day_over
from slackapp.blocks.help import help_screen, leaderboard
from slackapp.blocks.home import ChannelSeason, home_view
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.last import game_json
from slackapp.blocks.lobby import cancel_question, lobby, lobby_closed
from slackapp.blocks.night import knowledge_text, night_board, night_dm, night_over
from slackapp.blocks.notices import remedy
from slackapp.blocks.render import render
from slackapp.blocks.reveal import dm_game_over, reveal
from slackapp.blocks.said import said
from slackapp.blocks.screen import Screen, deck_text, sections, slack_time
from slackapp.blocks.sides import goal
from slackapp.blocks.words import words
from slackapp.fakeslack.blocks import as_shown
from slackapp.game import (
    BotView,
    Card,
    Deal,
    LookAtCenter,
    LookAtSeat,
    Peek,
    Rob,
    SawCard,
    SawCenter,
    SawSeat,
    SawWerewolves,
    Swap,
    bot_ballot,
    bot_night_choice,
    choice_kind,
    deal,
    learned_on_choosing,
    play,
)
from slackapp.game.effects import NightDmView
from slackapp.game.lines import Language, Line, Message, SeatName
from slackapp.game.night import CenterCard, may_still_move
from slackapp.game.outcome import BallotScore
from slackapp.game.referee import game_input, referee
from slackapp.game.settings import Kept

GAME = 42
CHANNEL = "C0TABLE"
DEADLINE = datetime(2024, 5, 17, 14, 5, tzinfo=UTC)
TABLE_SIZES = range(3, 11)
CARD_NAMES = [str(card) for card in Card]

Json = dict[str, Any]


# --- helpers -------------------------------------------------------------------------------


def table(size: int, people: int | None = None) -> list[SeatLabel]:
    """``size`` seats: people first (at least two), then bots. Keys hold no card name."""
    people = max(2, size // 2) if people is None else people
    seats = [SeatLabel(f"U0P{i}", f"Person {i}", f"U0P{i}") for i in range(1, people + 1)]
    seats += [SeatLabel(f"bot{i}", f"Bot {i}", None) for i in range(1, size - people + 1)]
    return seats


def by_key(seats: Sequence[SeatLabel]) -> dict[str, SeatLabel]:
    return {seat.key: seat for seat in seats}


def slack_sdk_agrees(blocks: list[Json]) -> None:
    """slack_sdk's models read the blocks back to the very same JSON, and find every text,
    button and value within Slack's limits (``to_dict`` validates)."""
    parsed = Block.parse_all(blocks)
    assert [block.to_dict() for block in parsed] == blocks


def serialised(screen: Screen) -> list[Json]:
    """The blocks as sent: plain JSON, validated by slack_sdk."""
    blocks = screen.as_dicts()
    json.dumps(blocks)
    assert len(blocks) <= 50
    slack_sdk_agrees(blocks)
    return blocks


def strings(node: object) -> Iterator[str]:
    """Every string anywhere in a JSON tree: texts, action ids, values, confirm dialogs."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from strings(item)


def everything(screen: Screen) -> str:
    return "\n".join([screen.text, *strings(serialised(screen))])


def buttons(screen: Screen) -> list[Json]:
    return [
        element
        for block in serialised(screen)
        if block["type"] == "actions"
        for element in block["elements"]
    ]


def targets(screen: Screen) -> list[tuple[str, str | None]]:
    """(action id, target) of every button; the value must unpack to this game."""
    found = []
    for element in buttons(screen):
        value = ids.ButtonValue.unpack(element["value"])
        assert value.game_id == GAME
        found.append((element["action_id"], value.target))
    return found


def assert_unique_action_ids(screen: Screen) -> None:
    action_ids = [element["action_id"] for element in buttons(screen)]
    assert len(action_ids) == len(set(action_ids)), action_ids


def section_texts(screen: Screen) -> list[str]:
    return [block["text"]["text"] for block in serialised(screen) if block["type"] == "section"]


def deck_lines(size: int) -> list[str]:
    """The table's deck and the night's order, as the screens word them in English."""
    return deck_text(size).split("\n")


def without_deck(text: str, size: int) -> str:
    """The text with the table's deck and the night's order taken out: public by design."""
    deck, order = deck_lines(size)
    return text.replace(deck, "").replace(order, "")


def leaked_cards(text: str) -> list[str]:
    """Card names in ``text``. "werewolf" in lower case is the game's name, not a card."""
    lowered = text.lower()
    return [
        name
        for name in CARD_NAMES
        if name in text or (name != str(Card.WEREWOLF) and name.lower() in lowered)
    ]


def bot_game(seats: Sequence[SeatLabel], seed: int) -> tuple[Deal, Any]:
    """A real deal played to the end with every seat choosing and voting as a bot would."""
    keys = tuple(seat.key for seat in seats)
    dealt = deal(keys, seed)
    lone = len(dealt.dealt_werewolves()) == 1
    views = {}
    choices = {}
    for key in keys:
        view = BotView(key, keys, dealt.dealt[key], lone_wolf=lone)
        choice = bot_night_choice(view, seed)
        if choice is not None:
            choices[key] = choice
        views[key] = BotView(
            key, keys, view.dealt, lone, choice, learned_on_choosing(dealt, key, choice)
        )
    # Leave the last seat's ballot out so "did not vote" is always told.
    ballots = {key: bot_ballot(views[key], seed, 2) for key in keys[:-1]}
    return dealt, play(dealt, choices, ballots)


FIVE_SEATS = ("anna", "bo", "cia", "dan", "eva")
FIVE_DEALT = Deal(
    seats=FIVE_SEATS,
    dealt={
        "anna": Card.WEREWOLF,
        "bo": Card.SEER,
        "cia": Card.ROBBER,
        "dan": Card.TROUBLEMAKER,
        "eva": Card.INSOMNIAC,
    },
    center=(Card.WEREWOLF, Card.VILLAGER),
)
"""The deal of the shared scenario robber-caught-out."""


def robber_caught_out() -> tuple[dict[str, SeatLabel], Any]:
    """The shared scenario robber-caught-out, with eva as a bot."""
    seats, dealt = FIVE_SEATS, FIVE_DEALT
    outcome = play(
        dealt,
        {"anna": Peek(1), "bo": LookAtSeat("eva"), "cia": Rob("anna"), "dan": Swap("cia", "eva")},
        {"anna": "cia", "bo": "cia", "cia": None, "dan": "anna"},
    )
    labels = {seat: SeatLabel(seat, seat.title(), f"U{seat.upper()}") for seat in seats[:-1]}
    labels["eva"] = SeatLabel("eva", "Eva", None)
    return labels, outcome


# --- shared pieces -------------------------------------------------------------------------


def test_slack_time_shows_local_time_with_a_utc_fallback() -> None:
    stockholm = timezone(timedelta(hours=2))
    moment = datetime(2024, 5, 17, 16, 5, tzinfo=stockholm)
    assert slack_time(moment) == f"<!date^{int(moment.timestamp())}^{{time}}|14:05 UTC>"


def test_slack_time_refuses_a_naive_datetime() -> None:
    with pytest.raises(ValueError):
        slack_time(datetime(2024, 5, 17, 14, 5))


def test_sections_split_long_text_under_the_limit() -> None:
    lines = [f"line {i} " + "x" * 290 for i in range(30)]
    blocks = sections(lines)
    slack_sdk_agrees(blocks)
    assert len(blocks) > 1
    assert all(len(block["text"]["text"]) <= 3000 for block in blocks)
    assert "\n".join(block["text"]["text"] for block in blocks) == "\n".join(lines)


# --- every screen, every table size --------------------------------------------------------


def all_screens(seats: Sequence[SeatLabel], seed: int) -> list[Screen]:
    labels = by_key(seats)
    dealt, outcome = bot_game(seats, seed)
    me, others = seats[0], seats[1:]
    screens = [
        lobby(GAME, me.key, seats, Kept(bots_allowed=True)),
        lobby_closed(f"Cancelled by <@{me.key}>."),
        night_board(seats, 1, 2, DEADLINE),
        night_over(seats),
        day_board(GAME, DEADLINE, 1, 2, 3),
        day_over("Enough heard: the vote is open."),
        ballot_board(GAME, 0, len(seats), DEADLINE, len(seats)),
        personal_ballot(GAME, others, None, False, DEADLINE),
        personal_ballot(GAME, others, others[0], True, DEADLINE, "Your ballot: someone."),
        ballot_closed(len(seats) - 1, len(seats)),
        reveal(outcome, labels, "Points go to this channel's leaderboard."),
        dm_game_over(CHANNEL, dealt.dealt[me.key], outcome.night.dawn[me.key], 3, True),
        help_screen(),
        leaderboard(CHANNEL, [(seat.key, 2, 1, 3) for seat in seats if not seat.is_bot]),
    ]
    for kind in ("peek", "look", "rob", "swap", None):
        screens.append(night_dm(GAME, CHANNEL, Card.SEER, me, others, kind, None, None, None))
    screens.append(
        night_dm(GAME, CHANNEL, Card.TROUBLEMAKER, me, others, "swap", None, others[0], None)
    )
    return screens


@pytest.mark.parametrize("size", TABLE_SIZES)
def test_every_screen_builds_within_limits_with_unique_action_ids(size: int) -> None:
    for screen in all_screens(table(size), seed=size):
        assert screen.text
        assert serialised(screen)
        assert_unique_action_ids(screen)
        targets(screen)  # every button value unpacks to this game


@pytest.mark.parametrize("size", TABLE_SIZES)
def test_public_screens_name_no_card(size: int) -> None:
    seats = table(size)
    dealt = deal(tuple(seat.key for seat in seats), seed=f"secret-{size}")
    public = [
        lobby(GAME, seats[0].key, seats, Kept(bots_allowed=True)),
        night_board(seats, 0, size, DEADLINE),
        night_over(seats),
        day_board(GAME, DEADLINE, 0, 2, 3, seat_count=size),
        ballot_board(GAME, 1, size, DEADLINE, size),
        ballot_closed(size, size),
    ]
    for screen in public:
        assert leaked_cards(without_deck(everything(screen), size)) == []
    # The check itself can fail: the same seat's private message does name its card.
    holder = seats[0]
    card = dealt.dealt[holder.key]
    private = night_dm(GAME, CHANNEL, card, holder, seats[1:], None, None, None, None)
    assert str(card) in leaked_cards(everything(private))
    assert leaked_cards(private.text) == []  # the notification text stays secret


# --- lobby ---------------------------------------------------------------------------------


def test_a_button_that_names_a_seat_says_what_it_does_to_a_screen_reader() -> None:
    seats = table(5)
    me, others = seats[0], seats[1:]
    # A long display name: the label is cut to Slack's 75 characters, like the text.
    others[0] = SeatLabel("U0LONG", "Maximiliana " * 8, "U0LONG")
    screens = [
        personal_ballot(GAME, seats, None, False, DEADLINE),
        night_dm(GAME, CHANNEL, Card.SEER, me, others, "look", None, None, None),
        night_dm(GAME, CHANNEL, Card.ROBBER, me, others, "rob", None, None, None),
        night_dm(GAME, CHANNEL, Card.TROUBLEMAKER, me, others, "swap", None, None, None),
        night_dm(GAME, CHANNEL, Card.TROUBLEMAKER, me, others, "swap", None, others[2], None),
        night_dm(GAME, CHANNEL, Card.WEREWOLF, me, others, "peek", None, None, None),
    ]
    labels = {b["text"]["text"]: b["accessibility_label"] for s in screens for b in buttons(s)}
    assert labels["Person 2"] == "Vote for Person 2"
    named = {
        b["accessibility_label"]
        for s in screens
        for b in buttons(s)
        if b["text"]["text"] == "Bot 1 (bot)"
    }
    assert named == {
        "Vote for Bot 1 (bot)",
        "Look at Bot 1 (bot)'s card",
        "Rob Bot 1 (bot)",
        "Swap Bot 1 (bot)'s card first",
        "Swap Bot 2 (bot)'s card with Bot 1 (bot)'s",
    }
    assert labels["Nobody"] == "Vote for nobody"
    assert labels["Left centre card"] == "Look at the left centre card"
    assert labels["Both centre cards"] == "Look at both centre cards"
    assert labels["Skip"].startswith("Skip")
    for screen in screens:
        for element in buttons(screen):
            label = element["accessibility_label"]
            assert len(label) <= 75
            # The visible words are in what is said (WCAG's "label in name"), cut names aside.
            words = element["text"]["text"].rstrip("…").strip()[:60].lower()
            assert words in label.lower() or "…" in label
    heard = buttons(day_board(GAME, DEADLINE, 1, 2, 3))[0]
    assert heard["accessibility_label"].startswith("Heard enough: ")


def test_lobby_lists_seats_in_order_and_marks_bots() -> None:
    seats = table(4, people=2)
    screen = lobby(GAME, "U0P1", seats, Kept(bots_allowed=True))
    text = "\n".join(section_texts(screen))
    assert "<@U0P1> is setting a table for one night of werewolf. 3 to 10 seats" in text
    assert "1. <@U0P1>\n2. <@U0P2>\n3. *Bot 1* (bot)\n4. *Bot 2* (bot)" in text


def test_a_lobby_the_host_has_left_names_no_host() -> None:
    text = "\n".join(
        section_texts(lobby(GAME, "U0HOST", table(3, people=2), Kept(bots_allowed=True)))
    )
    assert "A table is being set for one night of werewolf." in text
    assert "U0HOST" not in text


def test_lobby_buttons_and_a_cancel_that_asks_nobody_before_it_may_refuse() -> None:
    screen = lobby(GAME, "U0HOST", table(2, people=2), Kept(bots_allowed=True))
    assert targets(screen) == [
        (ids.JOIN, None),
        (ids.LEAVE, None),
        (ids.FILL_BOTS, None),
        (ids.START, None),
        (ids.CANCEL, None),
        (ids.USUALLY_PLAY, None),
    ]
    by_id = {element["action_id"]: element for element in buttons(screen)}
    assert by_id[ids.JOIN]["style"] == "primary"
    assert by_id[ids.CANCEL]["style"] == "danger"
    assert "confirm" not in by_id[ids.CANCEL], "Slack would ask people who may not cancel"
    question = cancel_question(GAME)
    assert targets(question) == [(ids.CANCEL_YES, None)]
    assert "Cancel this table?" in question.text


@pytest.mark.parametrize(
    ("seats", "bots_allowed", "offered"),
    [
        (table(2, 2), True, True),
        (table(4, 2), True, True),
        (table(5, 2), True, False),
        (table(2, 2), False, False),
    ],
)
def test_fill_with_bots_only_while_bots_may_fill_a_seat(
    seats: list[SeatLabel], bots_allowed: bool, offered: bool
) -> None:
    screen = lobby(GAME, "U0HOST", seats, Kept(bots_allowed=bots_allowed))
    assert (ids.FILL_BOTS in [action for action, _ in targets(screen)]) is offered


def test_lobby_says_whether_it_can_start() -> None:
    def readiness(seats: list[SeatLabel], bots: bool = True) -> str:
        return str(
            serialised(lobby(GAME, "U0HOST", seats, Kept(bots_allowed=bots)))[-1]["elements"][0][
                "text"
            ]
        )

    assert "Needs 1 more person" in readiness(table(3, people=1))
    assert "Needs 1 more seat (or fill with bots)" in readiness(table(2, people=2))
    assert "Needs 1 more seat to start" in readiness(table(2, people=2), bots=False)
    assert "Ready to start" in readiness(table(3, people=2))
    assert "the table is full" in readiness(table(10, people=2))
    assert "No one yet" in "\n".join(
        section_texts(lobby(GAME, "U0HOST", [], Kept(bots_allowed=True)))
    )


def test_lobby_closed_has_no_buttons() -> None:
    screen = lobby_closed("Cancelled by <@U0HOST>.")
    assert buttons(screen) == []
    assert "Cancelled by <@U0HOST>." in section_texts(screen)


# --- night ---------------------------------------------------------------------------------


def test_night_board_names_the_table_and_the_count() -> None:
    seats = table(5, people=3)
    text = everything(night_board(seats, 2, 3, DEADLINE))
    assert "<@U0P1>, <@U0P2>, <@U0P3>, *Bot 1* (bot) and *Bot 2* (bot)" in text
    assert "Check your DM from Varulv for your card" in text
    assert "2 of 3 people have confirmed the night" in text
    assert slack_time(DEADLINE) in text
    assert buttons(night_board(seats, 2, 3, DEADLINE)) == []


@pytest.mark.parametrize("size", TABLE_SIZES)
def test_the_deck_and_the_night_order_are_on_the_boards_and_in_each_dm(size: int) -> None:
    seats = table(size)
    card = deal(tuple(seat.key for seat in seats), seed=size).dealt[seats[0].key]
    shown = [
        night_board(seats, 0, size, DEADLINE),
        day_board(GAME, DEADLINE, 0, 2, 3, seat_count=size),
        night_dm(GAME, CHANNEL, card, seats[0], seats[1:], None, None, None, None),
        night_dm(GAME, CHANNEL, card, seats[0], seats, None, None, None, "Got it."),
    ]
    for screen in shown:
        text = everything(screen)
        deck, order = deck_lines(size)
        assert deck in text and order in text
        for other in set(TABLE_SIZES) - {size}:
            assert deck_lines(other)[0] not in text
    assert "In play" not in everything(day_board(GAME, DEADLINE, 0, 2, 3))  # size unknown


def test_the_deck_line_counts_copies_and_the_night_order_follows_the_deck() -> None:
    assert deck_lines(3) == [
        "In play: Werewolf \N{MULTIPLICATION SIGN}2, Seer, Robber, Troublemaker. "
        "5 cards for 3 seats: two lie face down in the centre.",
        "The night wakes: Werewolves → Seer → Robber → Troublemaker.",
    ]
    assert (
        "Villager \N{MULTIPLICATION SIGN}5, Insomniac, Minion. 12 cards for 10 seats"
        in deck_lines(10)[0]
    )
    assert deck_lines(6)[1] == (
        "The night wakes: Werewolves → Minion → Seer → Robber → Troublemaker → Insomniac. "
        "The Villager sleeps."
    )
    assert deck_lines(7)[1].endswith("Villagers sleep.")


def test_night_over_wakes_the_table_without_buttons() -> None:
    seats = table(3, people=2)
    screen = night_over(seats)
    assert buttons(screen) == []
    assert "<@U0P1>, <@U0P2> and *Bot 1* (bot)" in everything(screen)


def expected_night_buttons(
    card: Card, lone: bool, others: Sequence[SeatLabel]
) -> list[tuple[str, str | None]]:
    def each(prefix: str) -> list[tuple[str, str | None]]:
        return [(ids.indexed(prefix, i), seat.key) for i, seat in enumerate(others)]

    skip = (ids.NIGHT_SKIP, None)
    if card is Card.WEREWOLF and lone:
        return [(ids.indexed(ids.NIGHT_PEEK, 0), "0"), (ids.indexed(ids.NIGHT_PEEK, 1), "1"), skip]
    if card is Card.SEER:
        both = (ids.indexed(ids.NIGHT_LOOK, len(others)), ids.CENTER)
        return [*each(ids.NIGHT_LOOK), both, skip]
    if card is Card.ROBBER:
        return [*each(ids.NIGHT_ROB), skip]
    if card is Card.TROUBLEMAKER:
        return [*each(ids.NIGHT_SWAP), skip]
    return [(ids.NIGHT_CONFIRM, None)]


@pytest.mark.parametrize("size", TABLE_SIZES)
@pytest.mark.parametrize(
    ("card", "lone"), [(card, False) for card in Card] + [(Card.WEREWOLF, True)]
)
def test_night_dm_offers_exactly_the_cards_choices(card: Card, lone: bool, size: int) -> None:
    seats = table(size)
    me, others = seats[-1], seats[:-1]
    screen = night_dm(GAME, CHANNEL, card, me, others, choice_kind(card, lone), None, None, None)
    assert targets(screen) == expected_night_buttons(card, lone, others)
    labels = [element["text"]["text"] for element in buttons(screen)]
    if card in (Card.SEER, Card.ROBBER, Card.TROUBLEMAKER):
        assert labels[: len(others)] == [seat.button_text for seat in others]
    text = everything(screen)
    assert f"Your card: *{card}*" in text and card.line in text
    assert f"Table in <#{CHANNEL}>" in text


def test_lone_wolf_buttons_name_the_centre_cards() -> None:
    seats = table(3)
    screen = night_dm(GAME, CHANNEL, Card.WEREWOLF, seats[0], seats[1:], "peek", None, None, None)
    labels = [element["text"]["text"] for element in buttons(screen)]
    assert labels == ["Left centre card", "Right centre card", "Skip"]


def test_night_dm_never_offers_the_seat_itself() -> None:
    seats = table(4)
    screen = night_dm(GAME, CHANNEL, Card.ROBBER, seats[0], seats, "rob", None, None, None)
    assert seats[0].key not in [target for _, target in targets(screen)]


def test_swap_second_step_leaves_out_the_first_pick() -> None:
    seats = table(6)
    me, others = seats[0], seats[1:]
    first = others[1]
    screen = night_dm(GAME, CHANNEL, Card.TROUBLEMAKER, me, others, "swap", None, first, None)
    rest = [seat for seat in others if seat is not first]
    assert targets(screen) == [
        *[(ids.indexed(ids.NIGHT_SWAP, i), seat.key) for i, seat in enumerate(rest)],
        (ids.NIGHT_SWAP_RESET, None),
        (ids.NIGHT_SKIP, None),
    ]
    assert f"Swap {first.mention} with…" in everything(screen)


def test_night_dm_shows_what_is_known_and_then_the_outcome_without_buttons() -> None:
    seats = table(4)
    known = "You are the only werewolf."
    done = "The left centre card is *Villager*."
    choosing = night_dm(
        GAME, CHANNEL, Card.WEREWOLF, seats[0], seats[1:], "peek", known, None, None
    )
    assert known in section_texts(choosing)
    acted = night_dm(GAME, CHANNEL, Card.WEREWOLF, seats[0], seats[1:], "peek", known, None, done)
    assert buttons(acted) == []
    assert section_texts(acted)[1:] == [known, done]


def test_each_games_card_opens_with_its_own_header() -> None:
    # Two games' DMs minutes apart would otherwise read as one: the card starts a new one.
    seats = table(3)
    card = night_dm(GAME, CHANNEL, Card.SEER, seats[0], seats[1:], "look", None, None, None)
    assert card.as_dicts()[0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": "Night falls", "emoji": True},
    }


def test_unknown_choice_kind_is_refused() -> None:
    seats = table(3)
    with pytest.raises(ValueError):
        night_dm(GAME, CHANNEL, Card.SEER, seats[0], seats[1:], "dance", None, None, None)


LABELS = by_key(table(5, people=3))


@pytest.mark.parametrize(
    ("knowledge", "card", "choice", "expected"),
    [
        (
            SawWerewolves((), CenterCard(1, Card.VILLAGER)),
            Card.WEREWOLF,
            Peek(1),
            "The right centre card is *Villager*.",
        ),
        (SawWerewolves(()), Card.WEREWOLF, None, "You are the only werewolf."),
        (SawWerewolves(("U0P2",)), Card.WEREWOLF, None, "The other werewolf is <@U0P2>."),
        (
            SawWerewolves(("U0P1", "bot1")),
            Card.MINION,
            None,
            "The werewolves are <@U0P1> and *Bot 1* (bot).",
        ),
        (SawWerewolves(()), Card.MINION, None, "No one at the table was dealt a Werewolf."),
        (SawSeat("U0P3", Card.ROBBER), Card.SEER, None, "<@U0P3>'s card is *Robber*."),
        (SawSeat("bot2", Card.MINION), Card.SEER, None, "*Bot 2* (bot)'s card is *Minion*."),
        (
            SawCenter((Card.WEREWOLF, Card.SEER)),
            Card.SEER,
            LookAtCenter(),
            "The centre cards are *Werewolf* (left) and *Seer* (right).",
        ),
        (
            SawCard(Card.WEREWOLF),
            Card.ROBBER,
            Rob("U0P1"),
            "You took <@U0P1>'s card: your card is now *Werewolf*.",
        ),
        (
            SawCard(Card.ROBBER),
            Card.INSOMNIAC,
            None,
            "At the end of the night your card is *Robber*.",
        ),
    ],
)
def test_knowledge_text(knowledge: Any, card: Card, choice: Any, expected: str) -> None:
    assert knowledge_text(knowledge, LABELS, card=card, choice=choice) == expected


# --- day and vote --------------------------------------------------------------------------


def test_day_board_counts_and_toggles() -> None:
    screen = day_board(GAME, DEADLINE, 1, 3, 4)
    text = everything(screen)
    assert "Day: talk it out, out loud" in text
    assert "as soon as 3 of the 4 people have heard enough" in text
    assert "1 person has heard enough so far: the vote opens once 3 of the 4 people have." in text
    assert "bots" not in text, "no bot is seated"
    assert "needed have" not in text
    nobody = everything(day_board(GAME, DEADLINE, 0, 2, 3))
    assert "No one has heard enough yet: the vote opens once 2 of the 3 people have" in nobody
    assert "Changed your mind" not in nobody, "nothing to take back yet"
    bot = SeatLabel("bot1", "Bot 1", None)
    both = everything(day_board(GAME, DEADLINE, 0, 2, 2, silent=[bot]))
    assert "as soon as both people have heard enough" in both
    assert "the vote opens once both people have (bots are not counted)" in both
    assert "0 " not in nobody.replace(slack_time(DEADLINE), "")
    assert "speaks first" not in text
    assert "click again to take it back" in text.lower()
    assert slack_time(DEADLINE) in text
    assert targets(screen) == [(ids.HEARD_ENOUGH, None)]


def test_day_board_names_who_speaks_first_and_suggests_a_round_of_claims() -> None:
    speaker = SeatLabel("U0TOVE", "Tove", "U0TOVE")
    text = "\n".join(section_texts(day_board(GAME, DEADLINE, 0, 2, 3, first_speaker=speaker)))
    assert "<@U0TOVE> speaks first." in text
    assert "one round of claims" in text and "Then talk freely." in text


def test_day_board_names_the_claims_order_and_the_bots_that_claim_nothing() -> None:
    seats = table(5, people=3)
    people, bots = seats[:3], seats[3:]
    order = [people[1], people[2], people[0]]
    text = "\n".join(
        section_texts(
            day_board(
                GAME, DEADLINE, 0, 2, 3, 5, first_speaker=people[1], claims_order=order, silent=bots
            )
        )
    )
    assert "in this order: 1. <@U0P2>, 2. <@U0P3>, 3. <@U0P1>." in text, text
    assert (
        "*Bot 1* (bot) and *Bot 2* (bot) hold cards, may have moved cards in the night and will "
        "vote, but make no claim" in text
    ), text
    one = "\n".join(
        section_texts(day_board(GAME, DEADLINE, 0, 2, 3, 4, people[0], people, bots[:1]))
    )
    assert (
        "*Bot 1* (bot) holds a card, may have moved cards in the night and will vote, but "
        "makes no claim: read its card from what the rest of you say." in one
    ), one
    # Spoken to the whole table in Swedish too: "er", as "ni andra", never "dig".
    swedish = "\n".join(
        section_texts(
            day_board(
                GAME,
                DEADLINE,
                0,
                2,
                3,
                4,
                people[0],
                people,
                bots[:1],
                words=words(Language.SWEDISH),
            )
        )
    )
    assert "gissa er till kortet utifrån vad ni andra säger" in swedish, swedish
    alone = "\n".join(section_texts(day_board(GAME, DEADLINE, 0, 2, 3, 3, people[0], people)))
    assert "(bot)" not in alone and "no claim" not in alone


@pytest.mark.parametrize("size", [3, 5, 10])
def test_every_board_from_night_to_the_closed_vote_keeps_the_deck(size: int) -> None:
    seats = table(size)
    footer = deck_text(size)
    boards = [
        night_board(seats, 0, 2, DEADLINE),
        night_over(seats),
        day_board(GAME, DEADLINE, 0, 2, 3, size),
        day_over("Time is up.", size),
        ballot_board(GAME, 0, size, DEADLINE, size),
        ballot_closed(size, size),
    ]
    for board in boards:
        footers = [block for block in serialised(board) if block["type"] == "context"]
        assert footer in everything(board) and footers, board.text
        assert footers[-1]["elements"][0]["text"] == footer, "the deck is the board's footer"


def test_day_over_has_no_buttons() -> None:
    screen = day_over("Time is up.")
    assert buttons(screen) == [] and "Time is up." in screen.text


@pytest.mark.parametrize("size", TABLE_SIZES)
def test_the_vote_board_has_one_vote_button_and_says_how_the_vote_counts(size: int) -> None:
    screen = ballot_board(GAME, 2, size, DEADLINE, size)
    assert targets(screen) == [(ids.BALLOT, None)]
    text = everything(screen)
    assert f"2 of {size} have voted" in text
    assert "you may change it until the vote closes" in text
    assert slack_time(DEADLINE) in text
    assert HOW_THE_VOTE_COUNTS in text


@pytest.mark.parametrize("size", TABLE_SIZES)
def test_a_personal_ballot_has_a_button_per_other_seat_and_nobody(size: int) -> None:
    seats = table(size)
    others = seats[1:]
    screen = personal_ballot(GAME, others, None, False, DEADLINE)
    assert targets(screen) == [
        *[(ids.indexed(ids.VOTE, i), seat.key) for i, seat in enumerate(others)],
        (ids.indexed(ids.VOTE, size - 1), ids.NOBODY),
    ]
    assert "You have not voted yet" in everything(screen)
    assert all(element.get("style") is None for element in buttons(screen))


def test_a_personal_ballot_marks_the_current_choice_and_only_it() -> None:
    others = table(4)[1:]
    for chosen, marked in [(others[1], others[1].button_text), (None, "Nobody")]:
        screen = personal_ballot(GAME, others, chosen, True, DEADLINE)
        styled = [b["text"]["text"] for b in buttons(screen) if b.get("style") == "primary"]
        assert styled == [marked]
        named = "Nobody" if chosen is None else chosen.mention
        assert f"You voted for {named}." in everything(screen)


def test_ballot_closed_counts_and_has_no_buttons() -> None:
    screen = ballot_closed(4, 5)
    assert buttons(screen) == [] and "4 of 5 voted" in everything(screen)


def test_long_names_are_cut_to_fit_a_button() -> None:
    seats = [SeatLabel(f"U0P{i}", "A very long display name " * 5, f"U0P{i}") for i in range(3)]
    labels = [
        element["text"]["text"]
        for element in buttons(personal_ballot(GAME, seats, None, False, DEADLINE))
    ]
    assert all(len(label) <= 75 for label in labels)
    assert labels[0].endswith("…")


# --- reveal --------------------------------------------------------------------------------


REVEAL_PARTS = ("*The night*", "*The cards*", "*The vote*", "*The result*", "*Points*")


def reveal_part(screen: Screen, heading: str) -> str:
    """The lines under one heading of the reveal."""
    text = "\n".join(section_texts(screen))
    after = text.split(heading + "\n", 1)[1]
    following = REVEAL_PARTS[REVEAL_PARTS.index(heading) + 1 :]
    for next_heading in following:
        after = after.split("\n" + next_heading, 1)[0]
    return after


def line_with(text: str, start: str) -> str:
    """The one line of ``text`` that starts with ``start``."""
    found = [line for line in text.splitlines() if line.startswith(start)]
    assert len(found) == 1, (start, found)
    return found[0]


@pytest.mark.parametrize("language", list(Language))
def test_an_insomniac_still_holding_its_card_is_said_to_be_still_the_insomniac(
    language: Language,
) -> None:
    outcome = play(FIVE_DEALT, {"cia": Rob("anna"), "dan": Swap("anna", "bo")}, {})
    labels = {seat: SeatLabel(seat, seat.title(), f"U{seat.upper()}") for seat in FIVE_SEATS}
    text = "\n".join(section_texts(reveal(outcome, labels, words=words(language))))
    if language is Language.ENGLISH:
        assert "the Insomniac, woke at the end of the night still the Insomniac." in text
    else:
        assert "vaknade sist på natten och var fortfarande Insomniac." in text
    assert "*Insomniac*." not in text, "not as if it had learned a new card"


def test_reveal_tells_robber_caught_out() -> None:
    labels, outcome = robber_caught_out()
    screen = reveal(outcome, labels)
    text = "\n".join(section_texts(screen))
    night = [
        "<@UANNA> woke as the lone Werewolf and peeked at the right centre card: *Villager*.",
        "<@UBO>, the Seer, looked at *Eva* (bot)'s card: *Insomniac*.",
        "<@UCIA>, the Robber, took <@UANNA>'s card: the *Werewolf*.",
        "<@UDAN>, the Troublemaker, swapped <@UCIA>'s and *Eva* (bot)'s cards.",
        "*Eva* (bot), the Insomniac, woke at the end of the night as the *Werewolf*.",
    ]
    positions = [text.index(step) for step in night]
    assert positions == sorted(positions), "the night is told in its fixed order"
    cards = reveal_part(screen, "*The cards*")
    assert line_with(cards, "<@UANNA>: ") == "<@UANNA>: Werewolf → *Robber*"
    assert line_with(cards, "<@UBO>: ") == "<@UBO>: *Seer* all night"
    assert line_with(cards, "*Eva* (bot): ") == "*Eva* (bot): Insomniac → *Werewolf*"
    assert "Centre: *Werewolf* (left) and *Villager* (right)" in text
    for ballot in ["<@UANNA> → <@UCIA>", "<@UBO> → <@UCIA>", "<@UCIA> → nobody"]:
        assert ballot in text
    assert "<@UDAN> → <@UANNA>" in text
    assert "*Eva* (bot) did not vote" in text
    assert "Tally: <@UCIA> 2, <@UANNA> 1, nobody 1" in text
    assert "<@UCIA> died, holding the *Insomniac*." in text
    assert "*The werewolf team wins:* *Eva* (bot)." in text
    assert "No one died" not in text
    points = reveal_part(screen, "*Points*")
    assert line_with(points, "*Eva* (bot): ") == "*Eva* (bot): *2 points* (won; did not vote)"
    assert line_with(points, "<@UANNA>: ") == (
        "<@UANNA>: *0 points* (lost; the ballot named no Werewolf)"
    )
    assert line_with(points, "<@UCIA>: ") == "<@UCIA>: *0 points* (lost; voted for nobody)"
    assert all("(" in line for line in points.splitlines()[1:]), "every line has its reason"
    assert screen.text == "The Varulv reveal: the werewolf team wins."


def test_the_reveal_ends_the_night_with_what_it_did_to_the_teams() -> None:
    labels, outcome = robber_caught_out()
    night = reveal_part(reveal(outcome, labels), "*The night*").splitlines()
    assert night[-3:] == [
        "_<@UCIA> took the Werewolf from <@UANNA>, so <@UCIA> went over to the werewolf side "
        "and <@UANNA> to the village side, holding the Robber._",
        "_<@UDAN>'s swap gave <@UCIA> the Insomniac and *Eva* (bot) the Werewolf, so <@UCIA> "
        "went over to the village side and *Eva* (bot) to the werewolf side._",
        "_So at dawn the werewolf side was *Eva* (bot); everyone else played for the village._",
    ]
    text = "\n".join(section_texts(reveal(outcome, labels)))
    assert text.index("went over") < text.index("*The cards*"), "before cards, ballots, points"


def three_at_table(
    anna: Card, bo: Card, cia: Card, center: tuple[Card, Card]
) -> tuple[Deal, dict[str, SeatLabel]]:
    """Anna, Bo and Cia dealt these cards, and how the reveal names them."""
    seats = ("anna", "bo", "cia")
    dealt = Deal(seats=seats, dealt=dict(zip(seats, (anna, bo, cia), strict=True)), center=center)
    return dealt, {key: SeatLabel(key, key, f"U{key}") for key in seats}


def test_the_reveal_says_when_no_one_changed_sides() -> None:
    dealt, labels = three_at_table(
        Card.ROBBER, Card.SEER, Card.WEREWOLF, (Card.WEREWOLF, Card.TROUBLEMAKER)
    )
    robbed = reveal_part(reveal(play(dealt, {"anna": Rob("bo")}, {}), labels), "*The night*")
    assert "No one changed sides in the night" in robbed and "went over" not in robbed
    quiet = reveal_part(reveal(play(dealt, {}, {}), labels), "*The night*")
    assert "sides" not in quiet, "nothing moved, nothing to say"
    took = reveal_part(reveal(play(dealt, {"anna": Rob("cia")}, {}), labels), "*The night*")
    assert took.splitlines()[-1] == (
        "_<@Uanna> took the Werewolf from <@Ucia>, so <@Uanna> went over to the werewolf side "
        "and <@Ucia> to the village side, holding the Robber._"
    )


def test_a_card_that_changed_hands_and_came_back_was_not_held_all_night() -> None:
    dealt, labels = three_at_table(
        Card.ROBBER, Card.WEREWOLF, Card.TROUBLEMAKER, (Card.WEREWOLF, Card.SEER)
    )
    # The Robber takes the Werewolf, the Troublemaker swaps them back: same cards at dawn.
    outcome = play(dealt, {"anna": Rob("bo"), "cia": Swap("anna", "bo")}, {})
    assert outcome.night.dawn == dealt.dealt
    assert outcome.night.changed_hands("anna") and not outcome.night.changed_hands("cia")
    cards = reveal_part(reveal(outcome, labels), "*The cards*")
    assert line_with(cards, "<@Uanna>: ") == "<@Uanna>: Robber → *Robber*"
    assert line_with(cards, "<@Ubo>: ") == "<@Ubo>: Werewolf → *Werewolf*"
    assert line_with(cards, "<@Ucia>: ") == "<@Ucia>: *Troublemaker* all night"
    moved = everything(dm_game_over(CHANNEL, Card.ROBBER, Card.ROBBER, 3, True, moved=True))
    assert "still" not in moved and "dealt the *Robber* and held the *Robber* at dawn" in moved


def test_reveal_says_skipped_choices_and_no_death() -> None:
    seats = ("anna", "bo", "cia", "dan", "eva", "fia")
    dealt = Deal(
        seats=seats,
        dealt={
            "anna": Card.WEREWOLF,
            "bo": Card.SEER,
            "cia": Card.ROBBER,
            "dan": Card.TROUBLEMAKER,
            "eva": Card.MINION,
            "fia": Card.WEREWOLF,
        },
        center=(Card.INSOMNIAC, Card.VILLAGER),
    )
    outcome = play(dealt, {}, {seat: None for seat in seats})
    labels = {seat: SeatLabel(seat, seat.title(), f"U{seat.upper()}") for seat in seats}
    text = "\n".join(section_texts(reveal(outcome, labels)))
    assert "<@UANNA> and <@UFIA> woke as Werewolves and saw each other." in text
    assert "<@UEVA>, the Minion, saw the werewolves: <@UANNA> and <@UFIA>." in text
    # Said alike whether they skipped or the night ran out first: either way, nothing was done.
    assert "the Seer, did not look" in text
    assert "the Robber, robbed no one" in text
    assert "the Troublemaker, swapped no cards" in text
    assert "No one died." in text
    assert "*The werewolf team wins:* <@UANNA>, <@UEVA> and <@UFIA>." in text
    assert "Tally: nobody 6" in text


@pytest.mark.parametrize("size", TABLE_SIZES)
def test_reveal_of_a_real_game_tells_everything_within_limits(size: int) -> None:
    seats = table(size)
    labels = by_key(seats)
    dealt, outcome = bot_game(seats, seed=1000 + size)
    screen = reveal(outcome, labels, "Points go to this channel's leaderboard.")
    blocks = serialised(screen)
    assert len(blocks) <= 50
    text = "\n".join(section_texts(screen))
    assert all(len(section) <= 3000 for section in section_texts(screen))
    cards, points = reveal_part(screen, "*The cards*"), reveal_part(screen, "*Points*")
    for seat in seats:
        dealt_card, dawn = dealt.dealt[seat.key], outcome.night.dawn[seat.key]
        held = line_with(cards, f"{seat.mention}: ")
        if dealt_card is dawn and not outcome.night.changed_hands(seat.key):
            assert held == f"{seat.mention}: *{dawn}* all night"
        else:
            assert held == f"{seat.mention}: {dealt_card} → *{dawn}*"
        ballot = outcome.ballots.get(seat.key, "missing")
        if ballot == "missing":
            assert f"{seat.mention} did not vote" in text
        else:
            target = "nobody" if ballot is None else labels[str(ballot)].mention
            assert f"{seat.mention} → {target}" in text
        scored = line_with(points, f"{seat.mention}: ")
        assert scored.startswith(f"{seat.mention}: *{outcome.result.points[seat.key]} point")
    left, right = outcome.night.center
    assert f"Centre: *{left}* (left) and *{right}* (right)" in text
    for dead in outcome.tally.dead:
        assert f"{labels[dead].mention} died, holding the *{outcome.night.dawn[dead]}*" in text
    if not outcome.tally.dead:
        assert "No one died." in text
    if outcome.result.winners:
        winners = [labels[seat].mention for seat in outcome.result.winners]
        assert all(winner in line_with(text, ":trophy:") for winner in winners)
    else:
        assert "*Nobody wins.*" in text


def test_ten_bots_with_long_names_still_fit() -> None:
    seats = [SeatLabel(f"bot{i}", f"Bot {i} " + "with a long name " * 10, None) for i in range(10)]
    _, outcome = bot_game(seats, seed=7)
    screen = reveal(outcome, by_key(seats), "note")
    assert len(serialised(screen)) <= 50
    assert all(len(text) <= 3000 for text in section_texts(screen))


def test_dm_game_over() -> None:
    won = everything(dm_game_over(CHANNEL, Card.ROBBER, Card.WEREWOLF, 3, True))
    assert "You won!" in won and "dealt the *Robber*" in won and "*Werewolf* at dawn" in won
    assert "3 points" in won and f"<#{CHANNEL}>" in won
    lost = everything(dm_game_over(CHANNEL, Card.SEER, Card.SEER, 1, False))
    assert "Not this time" in lost and "still held it at dawn" in lost and "1 point " in lost
    why = everything(
        dm_game_over(CHANNEL, Card.SEER, Card.SEER, 0, False, ballot=BallotScore.NAMED_NO_WEREWOLF)
    )
    assert "0 points this game: lost; your ballot named no Werewolf." in why


# --- help, leaderboard, home ---------------------------------------------------------------


def test_help_lists_the_seven_cards_and_the_commands() -> None:
    text = everything(help_screen())
    for card in Card:
        assert f"*{card}* ({card.team} team): {card.line}" in text
    for command in ("`/varulv`", "`/varulv help`", "`/varulv stop`", "`/varulv score`"):
        assert command in text
    assert "at dawn" in text
    assert not re.search(r"\d+ minute", text), "a length stated where the channel set its own"
    here = everything(help_screen("night 45 seconds, day 4 minutes, vote 1 minute"))
    assert "In this channel: night 45 seconds, day 4 minutes, vote 1 minute." in here


def test_help_and_home_say_who_the_game_is_hard_for_and_how_the_dawn_card_decides() -> None:
    home = "\n".join(strings(home_dicts((0, 0, 0), [])))
    for text in (everything(help_screen()), home):
        assert "least comfortable arguing out loud" in text
        assert "speak first" in text and "one round of claims" in text
        assert "The card you hold at dawn is your team" in text
        assert "For example: Tove is dealt the Robber and takes Nils's card" in text
        assert not re.search(r"\d+ minute", text)


@pytest.mark.parametrize("card", list(Card))
def test_each_night_dm_says_what_its_card_plays_for_by_day(card: Card) -> None:
    seats = table(3)
    dm = "\n".join(
        section_texts(night_dm(GAME, CHANNEL, card, seats[0], seats, None, None, None, ""))
    )
    side = "werewolf" if card in (Card.WEREWOLF, Card.MINION) else "village"
    assert f"You are on the {side} side" in dm
    assert "Your card may have moved in the night" in dm


def learned_dm(dealt: Card, held: Card, size: int = 5) -> str:
    """The night message of seat one of ``size``, dealt ``dealt``, that has seen it now holds
    ``held``: the Robber's new card, or the Insomniac's card at dawn."""
    seats = tuple(SeatName(seat.key, seat.name, seat.is_bot) for seat in table(size))
    robbing = dealt is Card.ROBBER
    view = NightDmView(
        game_id=GAME,
        channel=CHANNEL,
        me=seats[0],
        seats=seats,
        card=dealt,
        kind="rob" if robbing else None,
        waking=None,
        pending=None,
        confirmed=True,
        choice=Rob(seats[1].key) if robbing else None,
        learned=SawCard(held) if robbing else None,
        dawn_card=None if robbing else held,
    )
    return "\n".join(section_texts(render(view)))


LEARNED_PAIRS = [
    (dealt, held)
    for dealt in (Card.ROBBER, Card.INSOMNIAC)
    for held in Card
    if not (dealt is Card.ROBBER and held is Card.ROBBER)  # the Robber robs another's card
]


@pytest.mark.parametrize(("dealt", "held"), LEARNED_PAIRS)
def test_the_side_line_follows_the_card_the_seat_learned_it_holds(dealt: Card, held: Card) -> None:
    dm = learned_dm(dealt, held)
    changed = held.team is not dealt.team
    side = f"You are {'now' if changed else 'still'} on the {held.team} side"
    assert side in dm, dm
    assert goal(held.team) in dm
    assert f"You are on the {dealt.team} side" not in dm, "the dealt card's side is gone"
    if changed:
        assert goal(dealt.team) not in dm, dm
    # what it learned comes before the side it puts the seat on
    assert dm.index(f"*{held}*", dm.index("\n", dm.index("Your card:"))) < dm.index(side)
    if dealt is Card.ROBBER:  # the Troublemaker wakes later and could swap it again
        assert "could still swap your card, and your side with it" in dm
    else:  # nothing wakes after the Insomniac
        assert "No card wakes after yours: this is your card, and your side, at dawn." in dm


def test_a_card_may_still_move_while_a_card_that_moves_cards_wakes_later() -> None:
    assert may_still_move(Card.ROBBER, 3)
    assert not may_still_move(Card.INSOMNIAC, 10)
    assert may_still_move(Card.SEER, 3), "the Seer's look comes before the Robber's"


def test_the_dealt_side_stays_until_the_seat_learns_its_card() -> None:
    seats = table(5)
    dm = everything(night_dm(GAME, CHANNEL, Card.ROBBER, seats[0], seats, "rob", None, None, None))
    assert "You are on the village side" in dm


def test_leaderboard_sorts_by_points() -> None:
    rows = [("U0A", 3, 1, 4), ("U0B", 5, 3, 9), ("U0C", 1, 0, 0)]
    text = everything(leaderboard(CHANNEL, rows))
    assert re.search(r"1\. <@U0B>.*\n2\. <@U0A>.*\n3\. <@U0C>", text)
    assert "<@U0B>: *9 points*, 3 wins in 5 games" in text


def test_tied_players_share_a_place() -> None:
    rows = [("U0A", 3, 1, 4), ("U0B", 5, 3, 9), ("U0C", 4, 1, 4), ("U0D", 1, 0, 0)]
    lines = [line for line in everything(leaderboard(CHANNEL, rows)).split("\n") if ". <@" in line]
    places = [line.split(".")[0] for line in lines]
    assert places == ["1", "2", "2", "4"], lines
    assert [line.split("<@")[1][:3] for line in lines] == ["U0B", "U0A", "U0C", "U0D"]


def test_leaderboard_when_empty_and_when_long() -> None:
    assert "No games finished" in everything(leaderboard(CHANNEL, []))
    rows = [(f"U0{i}", 1, 0, i) for i in range(40)]
    long_board = everything(leaderboard(CHANNEL, rows))
    assert "20. <@U020>" in long_board and "21. " not in long_board
    assert "Top 20 of 40 players." in long_board


def home_dicts(view_record: tuple[int, int, int], boards: Any) -> Json:
    view = home_view("U0ME", view_record, boards)
    data: Json = view.to_dict()
    json.dumps(data)
    return data


def test_home_shows_cards_steps_record_and_boards() -> None:
    data = home_dicts((7, 3, 11), [(CHANNEL, [("U0ME", 7, 3, 11), ("U0YOU", 2, 2, 5)])])
    assert data["type"] == "home"
    text = "\n".join(strings(data))
    for card in Card:
        assert card.line in text
    assert all(f"{step}. " in text for step in range(1, 6))
    assert "7 games, 3 wins, 11 points" in text
    assert f"*<#{CHANNEL}>*" in text
    assert "1. <@U0ME>: *11 points*, 3 wins in 7 games ← you" in text


@pytest.mark.parametrize("language", list(Language))
@pytest.mark.parametrize("regular", [True, False])
def test_the_home_toggle_tells_a_screen_reader_its_state_in_full(
    language: Language, regular: bool
) -> None:
    seasons = {CHANNEL: ChannelSeason("Spring", [], regular=regular)}
    view = home_view("U0ME", (1, 1, 2), [(CHANNEL, [])], seasons, words=words(language))
    blocks = view.to_dict()["blocks"]
    elements = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    (toggle,) = [e for e in elements if e["action_id"] == ids.USUALLY_PLAY]
    label = toggle["accessibility_label"]
    assert len(label) <= 75 and "…" not in label, "said whole, never cut"
    assert toggle["text"]["text"] in label, "the visible words, with their ✓ or without"


@pytest.mark.parametrize("language", list(Language))
def test_the_home_tab_and_help_name_the_same_settings(language: Language) -> None:
    w = words(language)
    home = "\n".join(strings(home_view("U0ME", (0, 0, 0), [], words=w).to_dict()))
    (said,) = [line for line in home.splitlines() if line.startswith("`/varulv settings`")]
    # Each setting the form offers ("/varulv help" names them all), by its word's stem.
    stems = {Language.ENGLISH: ("length", "bots", "season", "language")}
    stems[Language.SWEDISH] = ("tider", "botar", "säsong", "språk")
    for stem in stems[language]:
        assert stem in said, (stem, said)


def test_home_for_a_newcomer_and_many_channels_fits() -> None:
    assert "No games yet" in "\n".join(strings(home_dicts((0, 0, 0), [])))
    boards = [(f"C0{i}", [(f"U0{j}", 1, 1, j) for j in range(30)]) for i in range(60)]
    data = home_dicts((1, 0, 0), boards)
    assert len(data["blocks"]) <= 100
    assert "And 45 more channels." in "\n".join(strings(data))


def test_a_bot_is_marked_on_every_button_and_list_that_names_it() -> None:
    """The colleague Astrid and the bot Astrid are never two bare names side by side."""
    seats = [SeatLabel("U0AST", "Astrid", "U0AST"), SeatLabel("U0BO", "Bo", "U0BO")]
    seats.append(SeatLabel("bot1", "Astrid", None))
    ballot = [
        element["text"]["text"]
        for element in buttons(personal_ballot(GAME, seats, None, False, DEADLINE))
    ]
    assert ballot == ["Astrid", "Bo", "Astrid (bot)", "Nobody"]
    for kind in ("look", "rob", "swap"):
        dm = night_dm(GAME, CHANNEL, Card.SEER, seats[1], seats, kind, None, None, None)
        assert "Astrid (bot)" in [element["text"]["text"] for element in buttons(dm)]
    listed = [
        lobby(GAME, "U0AST", seats, Kept(bots_allowed=True)),
        night_board(seats, 0, 2, DEADLINE),
        night_over(seats),
    ]
    for screen in listed:
        assert "*Astrid* (bot)" in everything(screen)
        assert "*Astrid*" not in everything(screen).replace("*Astrid* (bot)", "")


def test_the_reveal_offers_play_again_for_its_game_only_when_asked() -> None:
    labels, outcome = robber_caught_out()
    assert buttons(reveal(outcome, labels)) == []
    again = reveal(outcome, labels, game_id=GAME)
    assert targets(again) == [(ids.PLAY_AGAIN, None)]
    assert "same people seated" in everything(again)


REMEDIES = {
    "not_in_channel": "`/invite @Varulv`",
    "channel_not_found": "`/invite @Varulv`",
    "is_archived": "unarchive it",
    "is_inactive": "unarchive it",
    "restricted_action_read_only_channel": "let Varulv post there",
    "restricted_action_thread_only_channel": "check that Varulv is installed",
    "ekm_access_denied": "check that Varulv is installed",
}


@pytest.mark.parametrize("error", REMEDIES)
def test_a_channel_that_refuses_varulv_is_answered_with_what_lets_it_post_there(
    error: str,
) -> None:
    """Only a channel Varulv is not in is helped by inviting it; each other refusal gets its
    own remedy, in each language."""
    english = remedy(error)
    assert REMEDIES[error] in english
    assert ("/invite" in english) == (error in {"not_in_channel", "channel_not_found"})
    swedish = remedy(error, words(Language.SWEDISH))
    assert swedish != english and ("/invite" in swedish) == ("/invite" in english)


def robbed_game(names: dict[str, str] | None = None, salt: str | None = None) -> dict[str, Any]:
    """A whole game of three for the referee: the Robber takes the Werewolf, and the ballots
    go round the table."""
    dealt = Deal(
        seats=("anna", "bo", "cia"),
        dealt={"anna": Card.WEREWOLF, "bo": Card.SEER, "cia": Card.ROBBER},
        center=(Card.WEREWOLF, Card.TROUBLEMAKER),
    )
    return game_input(dealt, {"cia": Rob("anna")}, {"anna": "bo", "bo": "cia"}, names, salt)


@pytest.mark.parametrize("language", list(Language))
def test_the_whole_game_names_both_fingerprints_the_channel_saw(language: Language) -> None:
    """The channel saw two fingerprints, the deal's and the night's: the words before the
    referee's input name each for what it is, never the deal's as the night's."""
    data = robbed_game(salt="5a1t")
    prose = game_json(data, words(language)).split("```", 1)[0]
    assert data["fingerprint"] in prose and data["night_fingerprint"] in prose
    assert prose.index(data["fingerprint"]) < prose.index(data["night_fingerprint"])
    assert "night board" not in prose and "nattens meddelande" not in prose


def test_the_whole_game_shows_names_with_slacks_control_characters_as_written() -> None:
    """A display name may hold ``<``, ``>`` or ``&``, which Slack's mrkdwn reads as a link, a
    mention or an entity: the JSON is escaped, so what Slack shows is the game, exactly."""
    names = {"anna": "<@U0BOSS> & co", "bo": "Bo <https://x.example|click>", "cia": "Cia &amp;"}
    data = robbed_game(names, "5a1t")
    written = game_json(data).split("```", 2)[1]
    assert "<" not in written and ">" not in written
    assert json.loads(as_shown(written)) == data
    assert referee(as_shown(written))["fingerprint"] == data["fingerprint"]


def late_dm(card: Card, kind: str | None, language: Language = Language.ENGLISH) -> str:
    """The night message of a person who had not confirmed when the night ran out."""
    seats = tuple(SeatName(seat.key, seat.name, seat.is_bot) for seat in table(5))
    view = NightDmView(
        game_id=GAME,
        channel=CHANNEL,
        me=seats[0],
        seats=seats,
        card=card,
        kind=kind,
        waking=None,
        pending=None,
        confirmed=False,
        choice=None,
        learned=None,
        late=True,
    )
    return "\n".join(section_texts(render(view, words(language))))


@pytest.mark.parametrize("language", list(Language))
def test_a_late_night_says_a_choice_was_missed_only_to_a_card_that_had_one(
    language: Language,
) -> None:
    said = words(language)
    missed = said._("The night ended before you chose, so you did nothing tonight.")
    unconfirmed = said._("The night ended before you confirmed it.")
    assert missed in late_dm(Card.SEER, "look", language)
    for card in (Card.VILLAGER, Card.INSOMNIAC, Card.MINION):
        dm = late_dm(card, None, language)
        assert unconfirmed in dm and missed not in dm, dm


def test_a_line_that_offers_the_ballot_for_nobody_names_it_as_its_button_does() -> None:
    """The ballot's button reads *Nobody*, and so do the vote board, the ballot and the help:
    an answer or the Home tab that offers the same choice names it the same way."""
    offers = [
        said(Line(Message.NO_SELF_VOTE)),
        said(Line(Message.BALLOT_NAMES_NOBODY_SEATED)),
        next(
            line
            for text in strings(home_dicts((0, 0, 0), []))
            for line in text.splitlines()
            if line.startswith("4. *Vote*")
        ),
        everything(personal_ballot(GAME, table(3)[1:], None, False, DEADLINE)),
        everything(help_screen()),
    ]
    for text in offers:
        assert "Nobody" in text, text
        assert not re.search(r"\bor (for )?nobody\b", text), text
