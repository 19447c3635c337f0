"""A finished game written out as the referee's input: ``varulv referee`` gives its outcome back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slackapp.game.cards import Card, Deal
from slackapp.game.fingerprint import deal_salt, fingerprint
from slackapp.game.night import LookAtCenter, LookAtSeat, NightChoice, Peek, Rob, Swap
from slackapp.game.outcome import play
from slackapp.game.referee import (
    RefereeError,
    game_input,
    outcome_to_json,
    parse_input,
    referee,
    seat_names,
)
from tests.game.test_properties import Game, games
from tests.game.test_referee_errors import VALID

pytestmark = pytest.mark.long(6)

ENOUGH = settings(max_examples=150, deadline=None)


def renamed_outcome(outcome: dict[str, Any], name: dict[str, str]) -> dict[str, Any]:
    """The referee's output with every seat called by ``name``, written out field by field."""
    seen: dict[str, Any] = {}
    for seat, knowledge in outcome["seen"].items():
        knowledge = dict(knowledge)
        if "werewolves" in knowledge:
            knowledge["werewolves"] = [name[wolf] for wolf in knowledge["werewolves"]]
        if "seat" in knowledge:
            knowledge["seat"] = name[knowledge["seat"]]
        seen[name[seat]] = knowledge
    return {
        "dawn": {name[seat]: card for seat, card in outcome["dawn"].items()},
        "center": outcome["center"],
        "seen": seen,
        "tally": {name.get(seat, seat): count for seat, count in outcome["tally"].items()},
        "dead": [name[seat] for seat in outcome["dead"]],
        "winning_team": outcome["winning_team"],
        "winners": [name[seat] for seat in outcome["winners"]],
        "points": {name[seat]: points for seat, points in outcome["points"].items()},
    }


@st.composite
def people_names(draw: st.DrawFn, seats: tuple[str, ...]) -> dict[str, str]:
    """Names people go by: usually distinct, sometimes shared, blank, reserved or missing."""
    name = st.sampled_from(["Anna", "Bo", "Anna ", "nobody", "center", "", " "]) | st.text(
        min_size=1, max_size=6
    )
    return {seat: draw(name) for seat in seats if draw(st.integers(0, 9))}


@ENOUGH
@given(games())
def test_the_input_reads_back_as_the_same_game(game: Game) -> None:
    written = game_input(game.deal, game.choices, game.ballots)
    deal, choices, ballots = parse_input(json.loads(json.dumps(written)))
    assert deal == game.deal
    assert choices == game.choices
    assert ballots == game.ballots


@ENOUGH
@given(games().flatmap(lambda game: st.tuples(st.just(game), people_names(game.seats))))
def test_the_referee_gives_the_games_outcome_back_under_peoples_names(
    game_and_names: tuple[Game, dict[str, str]],
) -> None:
    game, names = game_and_names
    outcome = outcome_to_json(play(game.deal, game.choices, game.ballots))
    name = seat_names(game.seats, names)
    written = json.dumps(game_input(game.deal, game.choices, game.ballots, names))
    assert referee(written) == renamed_outcome(outcome, name)


def test_seats_go_by_peoples_names_when_they_tell_everyone_apart() -> None:
    seats = ("U1", "U2", "bot1")
    assert seat_names(seats, {"U1": "Anna", "U2": "Bo", "bot1": "Astrid"}) == {
        "U1": "Anna",
        "U2": "Bo",
        "bot1": "Astrid",
    }


def test_seats_keep_their_keys_when_a_name_is_shared_reserved_or_missing() -> None:
    seats = ("U1", "U2", "bot1")
    keys = {"U1": "U1", "U2": "U2", "bot1": "bot1"}
    assert seat_names(seats, {"U1": "Anna", "U2": "Anna ", "bot1": "Astrid"}) == keys
    assert seat_names(seats, {"U1": "Anna", "U2": "center", "bot1": "Astrid"}) == keys
    assert seat_names(seats, {"U1": "Anna", "U2": "nobody", "bot1": "Astrid"}) == keys
    assert seat_names(seats, {"U1": "Anna", "bot1": "Astrid"}) == keys
    assert seat_names(seats, {"U1": "Anna", "U2": "  ", "bot1": "Astrid"}) == keys


def test_a_written_game_reads_as_refereemd_shows_it() -> None:
    deal = Deal(
        seats=("U1", "U2", "U3", "U4", "U5"),
        dealt={
            "U1": Card.WEREWOLF,
            "U2": Card.SEER,
            "U3": Card.ROBBER,
            "U4": Card.TROUBLEMAKER,
            "U5": Card.INSOMNIAC,
        },
        center=(Card.WEREWOLF, Card.VILLAGER),
    )
    choices: dict[str, NightChoice] = {
        "U1": Peek(1),
        "U2": LookAtSeat("U5"),
        "U3": Rob("U1"),
        "U4": Swap("U3", "U5"),
    }
    ballots = {"U1": "U3", "U2": "U3", "U3": None, "U4": "U1"}
    names = {"U1": "anna", "U2": "bo", "U3": "cia", "U4": "dan", "U5": "eva"}
    assert game_input(deal, choices, ballots, names) == VALID  # REFEREE's own example


def test_a_seer_who_looked_at_the_centre_is_written_as_center() -> None:
    deal = Deal(
        seats=("U1", "U2", "U3"),
        dealt={"U1": Card.SEER, "U2": Card.WEREWOLF, "U3": Card.VILLAGER},
        center=(Card.ROBBER, Card.TROUBLEMAKER),
    )
    written = game_input(deal, {"U1": LookAtCenter()}, {})
    assert written["night"] == {"U1": {"look": "center"}}
    assert written["ballots"] == {}


def test_varulv_referee_prints_the_outcome_of_a_written_game(tmp_path: Path) -> None:
    deal = Deal(
        seats=("U1", "U2", "U3", "bot1"),
        dealt={"U1": Card.ROBBER, "U2": Card.WEREWOLF, "U3": Card.SEER, "bot1": Card.VILLAGER},
        center=(Card.WEREWOLF, Card.TROUBLEMAKER),
    )
    choices: dict[str, NightChoice] = {"U1": Rob("U2"), "U3": LookAtSeat("U2")}
    ballots: dict[str, str | None] = {"U1": "U3", "U2": "U3", "U3": "U1", "bot1": "U1"}
    names = {"U1": "Anna", "U2": "Bo", "U3": "Cia", "bot1": "Astrid"}
    path = tmp_path / "game.json"
    path.write_text(json.dumps(game_input(deal, choices, ballots, names)))
    printed = subprocess.run(
        [sys.executable, "-m", "slackapp.cli", "referee", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    outcome = outcome_to_json(play(deal, choices, ballots))
    assert json.loads(printed.stdout) == renamed_outcome(outcome, names)
    # The robber took the wolf and the wolf became the Robber: Anna and Cia tie and die.
    assert json.loads(printed.stdout)["dead"] == ["Anna", "Cia"]


def test_a_written_game_carries_its_salt_and_fingerprint_for_the_referee_to_check() -> None:
    deal = Deal(
        seats=("U1", "U2", "U3"),
        dealt={"U1": Card.SEER, "U2": Card.WEREWOLF, "U3": Card.VILLAGER},
        center=(Card.ROBBER, Card.TROUBLEMAKER),
    )
    salt = deal_salt(12345)
    written = game_input(deal, {}, {}, {"U1": "Måns", "U2": "Åsa", "U3": "Bo"}, salt)
    assert (written["salt"], written["fingerprint"]) == (salt, fingerprint(salt, deal))
    assert referee(json.dumps(written))["fingerprint"] == written["fingerprint"]
    # The same game with another deal no longer matches what the night board showed.
    forged = {**written, "dealt": {"Måns": "Werewolf", "Åsa": "Seer", "Bo": "Villager"}}
    with pytest.raises(RefereeError, match="does not match the fingerprint"):
        referee(json.dumps(forged))


def test_the_salt_is_drawn_from_the_games_own_seed() -> None:
    assert deal_salt(1) == deal_salt(1)
    assert deal_salt(1) != deal_salt(2)
    assert len(deal_salt(1)) == 32
