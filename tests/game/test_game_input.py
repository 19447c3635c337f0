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
    written = game_input(deal, choices, ballots, names)
    assert written.pop("tally") == {"cia": 2, "anna": 1, "nobody": 1}, "as the reveal showed it"
    assert written == VALID  # REFEREE's own example


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


LINKED_DEAL = Deal(
    seats=("U1", "U2", "U3", "bot1", "U5"),
    dealt={
        "U1": Card.WEREWOLF,
        "U2": Card.SEER,
        "U3": Card.ROBBER,
        "bot1": Card.TROUBLEMAKER,
        "U5": Card.INSOMNIAC,
    },
    center=(Card.WEREWOLF, Card.VILLAGER),
)
LINKED_NIGHT: dict[str, NightChoice] = {
    "U1": Peek(1),
    "U2": LookAtSeat("U5"),
    "U3": Rob("U1"),
    "bot1": Swap("U3", "U5"),
}
LINKED_BALLOTS: dict[str, str | None] = {"U1": "U3", "U2": "U3", "U3": None, "bot1": "U1"}
LINKED_NAMES = {"U1": "anna", "U2": "bo", "U3": "cia", "bot1": "Astrid", "U5": "eva"}


def linked_record() -> dict[str, Any]:
    salt = deal_salt(2026)
    return game_input(LINKED_DEAL, LINKED_NIGHT, LINKED_BALLOTS, LINKED_NAMES, salt)


def test_a_whole_record_checks_every_link() -> None:
    record = linked_record()
    assert record["keys"] == {name: key for key, name in LINKED_NAMES.items()}
    assert len(record["fingerprint"].replace("-", "")) == 32, "128 bits"
    assert len(record["night_fingerprint"].replace("-", "")) == 32
    outcome = referee(json.dumps(record))
    assert (outcome["fingerprint"], outcome["night_fingerprint"]) == (
        record["fingerprint"],
        record["night_fingerprint"],
    )
    assert outcome["tally"] == record["tally"]


def _renamed_everywhere(value: Any, swap: dict[str, str]) -> Any:
    if isinstance(value, str):
        return swap.get(value, value)
    if isinstance(value, list):
        return [_renamed_everywhere(item, swap) for item in value]
    if isinstance(value, dict):
        return {swap.get(k, k): _renamed_everywhere(v, swap) for k, v in value.items()}
    return value


def test_a_record_with_two_peoples_names_swapped_fails_the_deals_link() -> None:
    """Two people's names swapped through the whole record (so each is said to have held
    the other's card, made the other's move and cast the other's ballot): the people in
    their seats are bound, not only the seats."""
    record = linked_record()
    keys = record.pop("keys")
    swapped = _renamed_everywhere(record, {"anna": "bo", "bo": "anna"})
    swapped["keys"] = keys
    with pytest.raises(RefereeError, match=r"^the deal does not match the fingerprint"):
        referee(json.dumps(swapped))
    # The keys swapped instead: the same.
    record["keys"] = {**keys, "anna": keys["bo"], "bo": keys["anna"]}
    with pytest.raises(RefereeError, match=r"^the deal does not match the fingerprint"):
        referee(json.dumps(record))


@pytest.mark.parametrize(
    ("seat", "move"),
    [
        ("cia", {"rob": "bo"}),  # another rob
        ("Astrid", {"swap": ["anna", "eva"]}),  # a bot's other swap
        ("bo", {"look": "center"}),  # another look
        ("anna", {"peek": 0}),
    ],
)
def test_a_record_with_another_night_move_fails_the_nights_link(
    seat: str, move: dict[str, Any]
) -> None:
    record = linked_record()
    record["night"] = {**record["night"], seat: move}
    with pytest.raises(RefereeError, match=r"^the night does not match the fingerprint"):
        referee(json.dumps(record))
    del record["night"][seat]  # a move left out: the same
    with pytest.raises(RefereeError, match=r"^the night does not match the fingerprint"):
        referee(json.dumps(record))


def test_a_record_with_another_ballot_fails_the_tallys_link() -> None:
    record = linked_record()
    record["ballots"] = {**record["ballots"], "bo": "anna"}
    with pytest.raises(RefereeError, match=r"^the ballots do not give the tally the reveal"):
        referee(json.dumps(record))


def test_the_salt_is_drawn_from_the_games_own_seed() -> None:
    assert deal_salt(1) == deal_salt(1)
    assert deal_salt(1) != deal_salt(2)
    assert len(deal_salt(1)) == 32
