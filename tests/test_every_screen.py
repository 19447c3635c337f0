"""Every screen, in every language, is Block Kit that slack_sdk's models read back to the very
same JSON and find within Slack's limits: the screens are built as plain data
(``slackapp.blocks.kit``), so these models are where the limits are checked."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, get_args

import pytest
from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from slackapp.blocks import kit
from slackapp.blocks.help import help_screen, leaderboard
from slackapp.blocks.home import ChannelSeason, home_view, reinstall_view
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.last import last_reveal
from slackapp.blocks.lobby import cancel_question
from slackapp.blocks.modals import every_modal
from slackapp.blocks.render import personal_ballot, render
from slackapp.blocks.screen import Screen
from slackapp.blocks.words import words
from slackapp.game import Card, SawCard, SawSeat, SawWerewolves, Swap
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
)
from slackapp.game.effects import View as GameView
from slackapp.game.lines import Language, Line, Message, SeatName
from slackapp.game.outcome import BallotScore
from slackapp.game.seasons import Standing
from slackapp.game.settings import Kept
from tests.test_blocks import CHANNEL, DEADLINE, GAME, Json, bot_game, slack_sdk_agrees, table

SIZES = (3, 10)
SUPPORT = "mailto:varulv-help@example.org"


def seat_names(labels: list[SeatLabel]) -> tuple[SeatName, ...]:
    return tuple(SeatName(label.key, label.name, label.is_bot) for label in labels)


def examples(size: int) -> list[GameView]:
    """Each kind of view a game draws, most of them in more than one state."""
    labels = table(size)
    seats = seat_names(labels)
    people = tuple(seat for seat in seats if not seat.is_bot)
    bots = tuple(seat for seat in seats if seat.is_bot)
    me, other = seats[0], seats[1]
    _, outcome = bot_game(labels, seed=size)

    def dm(card: Card, kind: str | None, **state: Any) -> NightDmView:
        view = NightDmView(GAME, CHANNEL, me, seats, card, kind, None, None, False, None, None)
        return replace(view, **state)

    return [
        LobbyView(GAME, me.key, seats, Kept(bots_allowed=True)),
        LobbyView(GAME, "U0GONE", seats[:1], Kept(bots_allowed=False)),
        ClosedView(Line(Message.CANCELLED_BY, user=me.key)),
        ClosedView("Closed, in words already written."),
        NightBoardView(seats, 1, len(people), DEADLINE, "0123456789abcdef"),
        NightOverView(seats, "0123456789abcdef"),
        DayBoardView(GAME, DEADLINE, 1, 2, len(people), size, people[0], people, bots),
        DayOverView(Line(Message.HEARD_ENOUGH, count=2, total=len(people)), size),
        BallotBoardView(GAME, seats, 1, size, DEADLINE),
        BallotClosedView(size - 1, size),
        RevealView(outcome, seats, GAME),
        RevealView(outcome, seats),
        *(dm(Card.SEER, kind) for kind in ("peek", "look", "rob", "swap", None)),
        dm(Card.TROUBLEMAKER, "swap", pending=other.key),
        dm(Card.TROUBLEMAKER, "swap", confirmed=True, choice=Swap(other.key, seats[-1].key)),
        dm(Card.WEREWOLF, None, waking=SawWerewolves((other.key,)), confirmed=True),
        dm(Card.MINION, None, waking=SawWerewolves(()), confirmed=True),
        dm(Card.INSOMNIAC, None, confirmed=True, dawn_card=Card.WEREWOLF),
        dm(Card.SEER, "look", late=True),
        dm(Card.SEER, "look", confirmed=True, choice=None, learned=SawSeat(other.key, Card.SEER)),
        dm(Card.ROBBER, "rob", confirmed=True, learned=SawCard(Card.VILLAGER)),
        GameOverDmView(CHANNEL, Card.ROBBER, Card.WEREWOLF, 3, True, BallotScore.NAMED_WEREWOLF),
        GameOverDmView(CHANNEL, Card.SEER, Card.SEER, 0, False),
    ]


def other_screens(size: int, language: Language) -> list[Screen]:
    """The screens drawn beside a game's views: a ballot, help, scores, the last game."""
    w = words(language)
    labels = table(size)
    seats = seat_names(labels)
    _, outcome = bot_game(labels, seed=size)
    rows = [(label.key, 3, 1, 4) for label in labels if not label.is_bot]
    season = ("Spring", [Standing(1, rows[0][0], 3, 1, 4)])
    ballot = PersonalBallotView(GAME, seats[1:], True, seats[1].key, DEADLINE, language)
    return [
        personal_ballot(ballot, "Your ballot: someone."),
        personal_ballot(PersonalBallotView(GAME, seats[1:], False, None, DEADLINE, language)),
        help_screen("day 5 minutes", w, SUPPORT),
        leaderboard(CHANNEL, rows, season, w),
        leaderboard(CHANNEL, [], None, w),
        last_reveal(GAME, outcome, {label.key: label for label in labels}, w, "https://x.test"),
        cancel_question(GAME, w),
    ]


def views(language: Language) -> list[View]:
    w = words(language)
    rows = [("U0ME", 7, 3, 11), ("U0YOU", 2, 2, 5)]
    standings = [Standing(1, "U0ME", 7, 3, 11)]
    seasons = {CHANNEL: ChannelSeason("Spring", standings, regular=True)}
    boards = [(CHANNEL, rows), ("C0OTHER", rows)]
    return [
        home_view("U0ME", (7, 3, 11), boards, seasons, w, SUPPORT),
        home_view("U0NEW", (0, 0, 0), [], None, w),
        reinstall_view("Varulv must be reinstalled."),
        *every_modal(),
    ]


def test_the_kit_builds_what_slack_sdks_models_build() -> None:
    vote = ButtonElement(
        text="Vote", action_id="a", value="v", style="primary", accessibility_label="Vote now"
    )
    assert kit.header("Night falls") == HeaderBlock(text="Night falls").to_dict()
    assert kit.section("*x*") == SectionBlock(text=MarkdownTextObject(text="*x*")).to_dict()
    assert (
        kit.context("a", "b")
        == (
            ContextBlock(elements=[MarkdownTextObject(text="a"), MarkdownTextObject(text="b")])
        ).to_dict()
    )
    assert kit.divider() == DividerBlock().to_dict()
    assert kit.button("Vote", "a", "v", style="primary", label="Vote now") == vote.to_dict()
    plain = ButtonElement(text="Skip", action_id="s", value="v")
    assert kit.actions([kit.button("Skip", "s", "v")]) == ActionsBlock(elements=[plain]).to_dict()


def test_a_button_is_cut_to_slacks_limits() -> None:
    long = kit.button("x" * 200, "a", "v", label="y" * 200)
    assert len(long["text"]["text"]) == kit.BUTTON_TEXT_LIMIT == ButtonElement.text_max_length
    assert len(long["accessibility_label"]) == kit.BUTTON_LABEL_LIMIT
    assert long["text"]["text"].endswith("…")
    assert SectionBlock.text_max_length == kit.SECTION_TEXT_LIMIT
    slack_sdk_agrees([kit.actions([long])])


def test_every_kind_of_view_has_an_example() -> None:
    shown = {type(view) for view in examples(5)}
    assert [kind.__name__ for kind in get_args(GameView) if kind not in shown] == []


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("language", list(Language))
def test_every_view_is_block_kit_slack_sdk_reads_back(size: int, language: Language) -> None:
    screens = [render(view, words(language)) for view in examples(size)]
    for screen in [*screens, *other_screens(size, language)]:
        blocks = screen.as_dicts()
        assert screen.text and blocks and len(blocks) <= 50
        slack_sdk_agrees(blocks)


@pytest.mark.parametrize("language", list(Language))
def test_every_home_tab_and_modal_is_a_view_slack_sdk_reads_back(language: Language) -> None:
    for view in views(language):
        data: Json = view.to_dict()
        assert View(**data).to_dict() == data
