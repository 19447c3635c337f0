"""The Swedish catalogue as a Swedish office says it: the phrasings a Swedish table tripped on
are gone, and the rules are said in the original's own words (docs/original-sv.txt)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from slackapp.blocks.ballot import HOW_THE_VOTE_COUNTS
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.reveal import reveal
from slackapp.blocks.words import words
from slackapp.game import Card, Deal, Rob, play
from slackapp.game.lines import Language
from tests.test_translations import catalogue, translated_forms

SV = words(Language.SWEDISH)
ROOT = Path(__file__).resolve().parent.parent
ORIGINAL = (ROOT / "docs" / "original-sv.txt").read_text()


def every_swedish_line() -> str:
    return "\n".join(
        " ".join(translated_forms(entry)) for entry in catalogue(Language.SWEDISH) if entry.id
    )


@pytest.mark.parametrize(
    "tripped_on",
    [
        "lika röster dör alla",  # not Swedish
        "Ingen räknas som",  # reads as "no one counts as a player"
        "Natten väcker",  # not how the night's order is said
        "där är det",  # "there it is day now"
        "behåller dig",  # games do not keep people
        "hade kvar det",  # word order
        "Byta vilka",  # terse to the point of puzzling
        "Klicka",  # the same gesture is "Tryck" everywhere
        "tavla",  # a message in a channel is a message
        "“",  # a Swedish quotation opens as it closes: ”Hört nog”
    ],
)
def test_no_line_says_what_a_swedish_table_tripped_on(tripped_on: str) -> None:
    assert not re.search(re.escape(tripped_on), every_swedish_line(), re.IGNORECASE)


def test_the_vote_is_counted_in_the_originals_words() -> None:
    how = SV._(HOW_THE_VOTE_COUNTS)
    assert "står två personer lika dör båda" in how and "står två personer lika dör båda" in (
        ORIGINAL
    )
    assert "ett eget alternativ i samma räkning" in how
    assert "ett eget alternativ i samma räkning" in ORIGINAL
    assert "Flest röster dör" in ORIGINAL and "flest röster dör" in how


def test_the_night_order_and_the_robbers_move_read_as_swedish() -> None:
    assert SV._("The night wakes: {order}.", order="vargarna → Seer") == (
        "I natt vaknar: vargarna → Seer."
    )
    seats = ("anna", "viggo", "cia")
    deal = Deal(
        seats=seats,
        dealt={"anna": Card.WEREWOLF, "viggo": Card.ROBBER, "cia": Card.SEER},
        center=(Card.WEREWOLF, Card.TROUBLEMAKER),
    )
    labels = {seat: SeatLabel(seat, seat.title(), f"U{seat.upper()}") for seat in seats}
    outcome = play(deal, {"viggo": Rob("anna")}, {})
    english = [b["text"]["text"] for b in reveal(outcome, labels).as_dicts() if "text" in b]
    swedish = [
        b["text"]["text"] for b in reveal(outcome, labels, words=SV).as_dicts() if "text" in b
    ]
    assert any(
        "<@UVIGGO> took the Werewolf from <@UANNA>, so <@UVIGGO> went over to the werewolf "
        "side and <@UANNA> to the village side, holding the Robber." in text
        for text in english
    )
    # The card the robbed seat got follows that seat, not "the village's side".
    assert any(
        "<@UVIGGO> tog Werewolf från <@UANNA>, som fick Robber i stället, så <@UVIGGO> gick "
        "över till vargarnas sida och <@UANNA> till byns sida." in text
        for text in swedish
    )


def test_the_lines_the_table_named_say_it_plainly() -> None:
    said = {
        "You were dealt the *{dealt}* and still held it at dawn.": (
            "Du fick *Seer* och hade det kvar i gryningen."
        ),
        "erase your scores and name; your past games keep you anonymously": (
            "radera dina poäng och ditt namn; du finns kvar anonymt i dina gamla spel"
        ),
        "Swap whom? Pick the first.": "Vilka två ska byta kort? Välj den första.",
    }
    for english, swedish in said.items():
        assert SV._(english, dealt=Card.SEER) == swedish
    vote = SV._(
        "One sealed ballot each, for another player or for Nobody. Press *Vote* for yours: "
        "only you see it, and you may change it until the vote closes."
    )
    assert "Tryck på *Rösta* för att få din egen" in vote
