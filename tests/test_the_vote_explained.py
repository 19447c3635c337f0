"""The vote explained where people decide: the ballot says a single vote can be enough, and
the reveal says in one sentence why single votes, a tie or Nobody decided who died, in
English and in Swedish."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import pytest

from slackapp.blocks.ballot import ONE_VOTE_CAN_BE_ENOUGH, ballot_board, personal_ballot
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.reveal import reveal
from slackapp.blocks.screen import Screen
from slackapp.blocks.words import words
from slackapp.game import Card, Deal, play
from slackapp.game.lines import Language
from slackapp.game.vote import Verdict, tally, verdict

EN, SV = words(Language.ENGLISH), words(Language.SWEDISH)
DEADLINE = datetime(2024, 5, 17, 14, 5, tzinfo=UTC)
SEATS = ("anna", "bo", "cia", "dan", "eva", "fia")
LABELS = {seat: SeatLabel(seat, seat.title(), f"U{seat.upper()}") for seat in SEATS}
DEAL = Deal(
    seats=SEATS,
    dealt={
        "anna": Card.WEREWOLF,
        "bo": Card.SEER,
        "cia": Card.ROBBER,
        "dan": Card.TROUBLEMAKER,
        "eva": Card.MINION,
        "fia": Card.VILLAGER,
    },
    center=(Card.WEREWOLF, Card.INSOMNIAC),
)
ROUND_THE_TABLE = {seat: SEATS[(i + 1) % len(SEATS)] for i, seat in enumerate(SEATS)}


def text_of(screen: Screen) -> str:
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("text"), str):
                found.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(screen.as_dicts())
    return "\n".join(found)


def result_of(ballots: Mapping[str, str | None], language: Language) -> str:
    text = text_of(reveal(play(DEAL, {}, ballots), LABELS, words=words(language)))
    heading = words(language)._("*The result*")
    return text.split(heading, 1)[1].split(words(language)._("*Points*"), 1)[0]


@pytest.mark.parametrize(
    ("ballots", "expected"),
    [
        ({}, Verdict.NO_VOTES),
        ({"anna": "bo", "bo": None}, Verdict.NOBODY_HELD),
        ({"anna": "bo", "cia": "bo", "bo": None}, Verdict.MOST_VOTES),
        ({"anna": "bo"}, Verdict.ONE_VOTE),
        (ROUND_THE_TABLE, Verdict.SINGLE_VOTES),
        ({"anna": "bo", "bo": "cia", "cia": "bo", "dan": "cia", "eva": None}, Verdict.TIE),
    ],
)
def test_the_count_names_the_rule_that_decided(
    ballots: dict[str, str | None], expected: Verdict
) -> None:
    assert verdict(tally(SEATS, ballots)) is expected


@pytest.mark.parametrize("language", list(Language))
def test_every_ballot_says_a_single_vote_can_be_enough(language: Language) -> None:
    w = words(language)
    line = w._(ONE_VOTE_CAN_BE_ENOUGH)
    board = text_of(ballot_board(1, 0, 6, DEADLINE, 6, w))
    others = [LABELS[seat] for seat in SEATS[1:]]
    own = text_of(personal_ballot(1, others, None, False, DEADLINE, words=w))
    assert line in board.splitlines() and line in own.splitlines(), "one line of its own"
    if language is Language.SWEDISH:
        assert line != ONE_VOTE_CAN_BE_ENOUGH and "En enda röst kan räcka" in line


def test_six_single_votes_round_the_table_say_why_all_six_died() -> None:
    english = result_of(ROUND_THE_TABLE, Language.ENGLISH)
    assert english.count("died, holding") == 6
    assert "Every seat had one vote and Nobody none: all tied, so all died." in english
    swedish = result_of(ROUND_THE_TABLE, Language.SWEDISH)
    assert "Alla fick en röst var och ingen röstade på Ingen: alla stod lika, så alla dog." in (
        swedish
    )


def test_some_single_votes_name_the_seats_that_tied() -> None:
    ballots: dict[str, str | None] = {"anna": "bo", "bo": "cia", "cia": "anna"}
    english = result_of(ballots, Language.ENGLISH)
    assert (
        "<@UANNA>, <@UBO> and <@UCIA> had one vote each, no one had more and Nobody had none: "
        "all tied, so all died." in english
    )
    swedish = result_of(ballots, Language.SWEDISH)
    assert "<@UANNA>, <@UBO> och <@UCIA> fick en röst var" in swedish


def test_one_vote_alone_is_enough_and_says_so() -> None:
    english = result_of({"anna": "bo"}, Language.ENGLISH)
    assert "One vote was enough: <@UBO> had the only vote and Nobody had none." in english
    swedish = result_of({"anna": "bo"}, Language.SWEDISH)
    assert "En röst räckte: <@UBO> fick den enda rösten, och ingen röstade på Ingen." in swedish


def test_a_tie_says_both_died_or_all_died() -> None:
    two: dict[str, str | None] = {"anna": "bo", "bo": "cia", "cia": "bo", "dan": "cia"}
    assert "<@UBO> and <@UCIA> tied on 2 votes each, more than Nobody had, so both died." in (
        result_of(two, Language.ENGLISH)
    )
    assert "står två personer lika dör båda" in result_of(two, Language.SWEDISH)
    three = {**two, "eva": "dan", "fia": "dan"}
    assert "so all of them died." in result_of(three, Language.ENGLISH)
    assert "så alla dog." in result_of(three, Language.SWEDISH)


def test_nobody_level_with_the_most_says_why_no_one_died() -> None:
    ballots: dict[str, str | None] = {"anna": "bo", "bo": None}
    english = result_of(ballots, Language.ENGLISH)
    assert "No one died." in english
    assert "Nobody had 1 vote, at least as many as any player" in english
    swedish = result_of(ballots, Language.SWEDISH)
    assert "Rösterna på Ingen (1) var minst lika många som den som fick flest" in swedish


def test_a_clear_majority_needs_no_reason() -> None:
    ballots: dict[str, str | None] = {"anna": "bo", "cia": "bo", "bo": None}
    for language in Language:
        lines = [line for line in result_of(ballots, language).splitlines() if line.strip()]
        assert len(lines) == 2, lines  # who died, and who won
        assert lines[0].startswith(":skull: <@UBO>")
