"""Input that breaks REFEREE.md is refused: exit 2, one line on stderr naming the problem,
nothing on stdout. The long list runs in-process against ``RefereeError``; a handful run
through the installed ``varulv`` command to hold the command-line contract itself.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slackapp.game.cards import Deal
from slackapp.game.fingerprint import fingerprint
from slackapp.game.referee import RefereeError, parse_input, referee

pytestmark = pytest.mark.long(6)

VALID: dict[str, Any] = {
    "seats": ["anna", "bo", "cia", "dan", "eva"],
    "dealt": {
        "anna": "Werewolf",
        "bo": "Seer",
        "cia": "Robber",
        "dan": "Troublemaker",
        "eva": "Insomniac",
    },
    "center": ["Werewolf", "Villager"],
    "night": {
        "anna": {"peek": 1},
        "bo": {"look": "eva"},
        "cia": {"rob": "anna"},
        "dan": {"swap": ["cia", "eva"]},
    },
    "ballots": {"anna": "cia", "bo": "cia", "cia": None, "dan": "anna"},
}
PACK: dict[str, Any] = {
    "seats": ["anna", "bo", "cia", "dan", "eva", "fia"],
    "dealt": {
        "anna": "Werewolf",
        "bo": "Werewolf",
        "cia": "Minion",
        "dan": "Villager",
        "eva": "Insomniac",
        "fia": "Seer",
    },
    "center": ["Robber", "Troublemaker"],
    "night": {},
    "ballots": {},
}


def changed(base: dict[str, Any], **fields: Any) -> str:
    """``base`` with top-level ``fields`` replaced, as JSON text."""
    data = copy.deepcopy(base)
    data.update(fields)
    return json.dumps(data)


def named(*seats: str) -> str:
    """A three-seat table whose seats go by ``seats``."""
    dealt = dict(zip(seats, ["Seer", "Robber", "Villager"], strict=True))
    return json.dumps({"seats": list(seats), "dealt": dealt, "center": ["Werewolf", "Werewolf"]})


def with_night(**choices: Any) -> str:
    return changed(VALID, night=choices)


def with_ballots(**ballots: Any) -> str:
    return changed(VALID, ballots=ballots)


SEATS_3 = ["anna", "bo", "cia"]
DEALT_3 = {"anna": "Werewolf", "bo": "Seer", "cia": "Robber"}
SEATS_11 = [f"p{n}" for n in range(11)]

# (input text, a fragment the one-line message must contain)
BAD_INPUTS: dict[str, tuple[str, str]] = {
    "unknown card dealt": (
        changed(VALID, dealt={**VALID["dealt"], "bo": "Wolf"}),
        "unknown card 'Wolf'",
    ),
    "card name in the wrong case": (
        changed(VALID, dealt={**VALID["dealt"], "bo": "seer"}),
        "unknown card 'seer'",
    ),
    "card that is not a string": (
        changed(VALID, dealt={**VALID["dealt"], "bo": 3}),
        "unknown card 3",
    ),
    "unknown card in the centre": (
        changed(VALID, center=["Werewolf", "Tanner"]),
        "unknown card 'Tanner'",
    ),
    "unknown seat in dealt": (
        changed(VALID, dealt={**VALID["dealt"], "zed": "Villager"}),
        "'dealt'",
    ),
    "seat missing from dealt": (
        changed(VALID, dealt={k: v for k, v in VALID["dealt"].items() if k != "eva"}),
        "'dealt'",
    ),
    "unknown seat in night": (with_night(zed={"look": "center"}), "'zed'"),
    "unknown seat voting": (with_ballots(zed="anna"), "'zed'"),
    "one centre card": (changed(VALID, center=["Werewolf"]), "'center'"),
    "three centre cards": (
        changed(VALID, center=["Werewolf", "Villager", "Villager"]),
        "'center'",
    ),
    "centre not a list": (changed(VALID, center="Werewolf,Villager"), "'center'"),
    "too few seats": (
        changed(VALID, seats=["anna", "bo"], dealt={"anna": "Seer", "bo": "Robber"}),
        "not 2",
    ),
    "too many seats": (
        changed(VALID, seats=SEATS_11, dealt=dict.fromkeys(SEATS_11, "Villager")),
        "not 11",
    ),
    "seats not a list of names": (changed(VALID, seats="anna bo cia"), "'seats'"),
    "seat name not a string": (changed(VALID, seats=["anna", "bo", 3]), "'seats'"),
    "duplicate seat": (
        changed(VALID, seats=["anna", "bo", "cia", "dan", "anna"]),
        "distinct",
    ),
    "seat named nobody": (
        changed(
            VALID,
            seats=["anna", "bo", "nobody"],
            dealt={"anna": "Seer", "bo": "Robber", "nobody": "Villager"},
            night={},
            ballots={},
        ),
        "'nobody'",
    ),
    "seat with a blank name": (named("anna", "bo", ""), "'' is blank"),
    "seat with a name of spaces": (named("anna", "bo", "  "), "'  ' is blank"),
    "seat with a name of a tab": (named("anna", "\t", "cia"), "'\\t' is blank"),
    "seat named center": (named("anna", "bo", "center"), "'center' is reserved"),
    "seat with a line break in its name": (
        named("anna", "bo", "cia\nforged: a second line"),
        "'cia\\nforged: a second line' holds a control character",
    ),
    "seat with a control character in its name": (
        named("anna", "bo\x1b[2K", "cia"),
        "'bo\\x1b[2K' holds a control character",
    ),
    "seat with a line separator in its name": (
        named("anna", "bo\u2028", "cia"),
        "holds a control character",
    ),
    "unknown top-level key": (changed(VALID, votes={"anna": "bo"}), "unknown key 'votes'"),
    "top-level key in the wrong case": (
        json.dumps({**{k: v for k, v in VALID.items() if k != "ballots"}, "Ballots": {}}),
        "unknown key 'Ballots'",
    ),
    "a fingerprint without its salt": (
        changed(VALID, fingerprint="0000-0000-0000-0000"),
        "without the game's 'salt'",
    ),
    "a salt that is not text": (changed(VALID, salt=5), "'salt'"),
    "a salt holding a line break": (changed(VALID, salt="ab\ncd"), "'salt'"),
    "a fingerprint that is not text": (changed(VALID, salt="abc", fingerprint=5), "'fingerprint'"),
    "a fingerprint the deal does not match": (
        changed(VALID, salt="abc", fingerprint="0000-0000-0000-0000"),
        "does not match the fingerprint '0000-0000-0000-0000'",
    ),
    "a unique card twice at the table": (
        changed(VALID, dealt={**VALID["dealt"], "eva": "Seer"}),
        "Seer",
    ),
    "a unique card at the table and in the centre": (
        changed(VALID, center=["Werewolf", "Robber"]),
        "Robber",
    ),
    "villager looking": (
        changed(PACK, night={"dan": {"look": "anna"}}),
        "'dan' was dealt a Villager",
    ),
    "pack wolf peeking": (
        changed(PACK, night={"anna": {"peek": 0}}),
        "'anna' was dealt a Werewolf",
    ),
    "minion acting": (
        changed(PACK, night={"cia": {"look": "center"}}),
        "'cia' was dealt a Minion",
    ),
    "insomniac acting": (
        changed(PACK, night={"eva": {"rob": "anna"}}),
        "'eva' was dealt an Insomniac",
    ),
    "seer robbing": (with_night(bo={"rob": "anna"}), "'bo' was dealt a Seer"),
    "lone wolf looking at a seat": (with_night(anna={"look": "bo"}), "'anna' was dealt"),
    "peek index 2": (with_night(anna={"peek": 2}), "not 2"),
    "peek index -1": (with_night(anna={"peek": -1}), "not -1"),
    "peek index true": (with_night(anna={"peek": True}), "night['anna']"),
    "peek index as a string": (with_night(anna={"peek": "0"}), "night['anna']"),
    "seer looking at itself": (with_night(bo={"look": "bo"}), "'bo' cannot act on itself"),
    "seer looking at an unknown seat": (with_night(bo={"look": "zed"}), "'zed'"),
    "robber robbing itself": (with_night(cia={"rob": "cia"}), "'cia' cannot act on itself"),
    "troublemaker swapping itself": (
        with_night(dan={"swap": ["dan", "eva"]}),
        "'dan' cannot act on itself",
    ),
    "troublemaker swapping one seat twice": (
        with_night(dan={"swap": ["eva", "eva"]}),
        "two different seats",
    ),
    "troublemaker swapping three seats": (
        with_night(dan={"swap": ["anna", "bo", "eva"]}),
        "night['dan']",
    ),
    "choice with two keys": (
        with_night(bo={"look": "eva", "rob": "anna"}),
        "night['bo']",
    ),
    "choice of an unknown kind": (with_night(bo={"stare": "eva"}), "night['bo']"),
    "choice that is not an object": (with_night(bo="eva"), "night['bo']"),
    "ballot for oneself": (with_ballots(bo="bo"), "'bo' cannot vote for themself"),
    "ballot for an unknown seat": (with_ballots(bo="zed"), "'zed'"),
    "ballot for nobody spelt out": (with_ballots(bo="nobody"), "'nobody'"),
    "ballot that is not a name": (with_ballots(bo=2), "ballots['bo']"),
    "night not an object": (changed(VALID, night=[]), "'night'"),
    "ballots not an object": (changed(VALID, ballots=None), "'ballots'"),
    "malformed JSON": ('{"seats": ["anna", "bo", "cia"],', "malformed JSON"),
    "empty input": ("", "malformed JSON"),
    "input that is a list": (json.dumps([VALID]), "JSON object"),
    "input that is a string": ('"anna"', "JSON object"),
    "input that is null": ("null", "JSON object"),
    "a number too long to read": (
        changed(VALID, night={"anna": {"peek": 0}}).replace('"peek": 0', '"peek": ' + "1" * 5000),
        "malformed JSON",
    ),
    "nesting too deep to read": ("[" * 100_000 + "]" * 100_000, "malformed JSON"),
}


def test_the_valid_bases_are_accepted() -> None:
    # Every bad input is one change away from these; they must pass for the list to mean much.
    assert referee(json.dumps(VALID))["dead"] == ["cia"]
    assert referee(json.dumps(PACK))["dead"] == []
    assert referee(changed(VALID, seats=SEATS_3, dealt=DEALT_3, night={}, ballots={}))


def test_night_and_ballots_may_be_left_out() -> None:
    # As REFEREE.md says: left out, they are a night where no one chose and a vote no one cast.
    bare = {key: value for key, value in VALID.items() if key not in ("night", "ballots")}
    outcome = referee(json.dumps(bare))
    assert outcome == referee(changed(VALID, night={}, ballots={}))
    assert (outcome["tally"], outcome["dead"], outcome["dawn"]) == ({}, [], VALID["dealt"])
    assert "bo" not in outcome["seen"]  # the Seer looked at nothing


SPACED = ["Anna Berg", "Bo 'B' Ek", "Cia", "Dan", "Eva"]
SPACED_GAME: dict[str, Any] = {
    "seats": SPACED,
    "dealt": dict(zip(SPACED, VALID["dealt"].values(), strict=True)),
    "center": VALID["center"],
}


@pytest.mark.parametrize(
    ("night", "ballots", "quoted"),
    [
        ({}, {"Anna Berg": "Anna Berg"}, "'Anna Berg' cannot vote for themself"),
        ({}, {"Anna Berg": "Zed Q"}, "'Anna Berg' votes for unknown seat 'Zed Q'"),
        ({"Bo 'B' Ek": {"look": "Bo 'B' Ek"}}, {}, "\"Bo 'B' Ek\" cannot act on itself"),
        ({"Cia": {"rob": "Zed Q"}}, {}, "'Cia' names unknown seat 'Zed Q'"),
        ({"Dan": {"swap": ["Eva", "Eva"]}}, {}, "'Dan' must swap two different seats"),
        ({"Anna Berg": {"peek": 2}}, {}, "'Anna Berg' may peek at centre card 0 or 1"),
        ({"Eva": {"peek": 0}}, {}, "'Eva' was dealt an Insomniac"),
    ],
)
def test_every_error_quotes_the_names_it_gives(
    night: dict[str, Any], ballots: dict[str, Any], quoted: str
) -> None:
    with pytest.raises(RefereeError) as refused:
        referee(json.dumps({**SPACED_GAME, "night": night, "ballots": ballots}))
    assert quoted in str(refused.value)


def test_a_deal_with_its_salt_is_checked_against_its_fingerprint() -> None:
    shown = fingerprint("f00d", deal_of(VALID))
    outcome = referee(changed(VALID, salt="f00d", fingerprint=shown))
    assert outcome["fingerprint"] == shown
    linked = ("fingerprint", "night_fingerprint")
    assert {k: v for k, v in outcome.items() if k not in linked} == referee(json.dumps(VALID))
    # The salt alone: the referee prints the fingerprint for a person to compare.
    assert referee(changed(VALID, salt="f00d"))["fingerprint"] == shown


def test_the_fingerprint_changes_with_any_card_or_the_salt() -> None:
    base = fingerprint("f00d", deal_of(VALID))
    assert re.fullmatch(r"[0-9a-f]{4}(-[0-9a-f]{4}){7}", base), "128 bits, in groups of four"
    swapped = {**VALID["dealt"], "anna": "Seer", "bo": "Werewolf"}
    assert fingerprint("f00d", deal_of(changed(VALID, dealt=swapped))) != base
    centre_turned = changed(VALID, center=list(reversed(VALID["center"])))
    assert fingerprint("f00d", deal_of(centre_turned)) != base
    assert fingerprint("f00e", deal_of(VALID)) != base
    with pytest.raises(RefereeError, match="does not match the fingerprint"):
        referee(changed(VALID, dealt=swapped, salt="f00d", fingerprint=base))


def deal_of(data: dict[str, Any] | str) -> Deal:
    return parse_input(json.loads(data) if isinstance(data, str) else data)[0]


@pytest.mark.parametrize(("text", "fragment"), BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_is_refused_with_one_line_naming_the_problem(text: str, fragment: str) -> None:
    with pytest.raises(RefereeError) as refused:
        referee(text)
    message = str(refused.value)
    assert message.strip() == message and message
    assert "\n" not in message
    assert fragment in message


# A few other JSON values to drop anywhere into a valid input.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.sampled_from(["anna", "Seer", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


@st.composite
def damaged_inputs(draw: st.DrawFn) -> str:
    data = copy.deepcopy(VALID)
    container: Any = data
    while True:
        keys = list(container) if isinstance(container, dict) else list(range(len(container)))
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        if isinstance(container[key], dict | list) and draw(st.booleans()):
            container = container[key]
            continue
        if draw(st.booleans()):
            container[key] = draw(json_values)
        elif isinstance(container, dict):
            del container[key]
        else:
            container.pop(key)
        break
    return json.dumps(data)


@settings(max_examples=300, deadline=None)
@given(damaged_inputs())
def test_damaged_input_is_resolved_or_refused_never_crashes(text: str) -> None:
    try:
        outcome = referee(text)
    except RefereeError as refused:
        assert str(refused) and "\n" not in str(refused)
    else:
        assert set(outcome) == {
            "dawn",
            "center",
            "seen",
            "tally",
            "dead",
            "winning_team",
            "winners",
            "points",
        }


# --- through the installed command ----------------------------------------------------------


def varulv_command() -> str:
    """The installed ``varulv`` console script of the interpreter running the tests."""
    beside_python = Path(sys.executable).with_name("varulv")
    if beside_python.is_file():
        return str(beside_python)
    found = shutil.which("varulv")
    if found is None:
        pytest.fail("the varulv console script is not installed (pip install -e .)")
    return found


def run_referee(argument: str | None, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """``varulv referee ARGUMENT``; with None, no argument at all."""
    return subprocess.run(
        [varulv_command(), "referee", *([] if argument is None else [argument])],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


def assert_refused(run: subprocess.CompletedProcess[bytes], fragment: str) -> None:
    stderr = run.stderr.decode("utf-8")
    assert run.returncode == 2, stderr
    assert run.stdout == b""
    assert stderr.endswith("\n") and stderr.count("\n") == 1, stderr
    assert fragment in stderr


@pytest.mark.parametrize(
    "case",
    [
        "unknown card dealt",
        "ballot for oneself",
        "troublemaker swapping itself",
        "seat with a line break in its name",
        "a fingerprint the deal does not match",
        "input that is a list",
        "a number too long to read",
        "nesting too deep to read",
    ],
)
def test_varulv_referee_refuses_a_bad_file(case: str, tmp_path: Path) -> None:
    text, fragment = BAD_INPUTS[case]
    path = tmp_path / "deal.json"
    path.write_text(text, encoding="utf-8")
    assert_refused(run_referee(str(path)), fragment)


def test_varulv_referee_refuses_malformed_json_on_stdin() -> None:
    assert_refused(run_referee("-", b'{"seats": ['), "malformed JSON")


def test_varulv_referee_refuses_bytes_that_are_not_utf8_on_stdin() -> None:
    assert_refused(run_referee("-", b"\xff\xfe{}"), "UTF-8")


def test_varulv_referee_refuses_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "deal.json"
    path.write_bytes(b'{"seats": ["\xe5sa"]}')
    assert_refused(run_referee(str(path)), "UTF-8")


def test_varulv_referee_refuses_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-deal.json"
    assert_refused(run_referee(str(missing)), f"cannot read {missing}")


def test_varulv_referee_refuses_a_directory(tmp_path: Path) -> None:
    assert_refused(run_referee(str(tmp_path)), f"cannot read {tmp_path}")


def test_varulv_referee_accepts_the_valid_base_on_stdin() -> None:
    run = run_referee("-", json.dumps(VALID).encode("utf-8"))
    assert (run.returncode, run.stderr) == (0, b"")
    assert json.loads(run.stdout)["winners"] == ["eva"]


def test_varulv_referee_reads_standard_input_without_an_argument() -> None:
    run = run_referee(None, json.dumps(VALID).encode("utf-8"))
    assert (run.returncode, run.stderr) == (0, b"")
    assert json.loads(run.stdout)["winners"] == ["eva"]


def test_varulv_referee_prints_names_as_written_in_utf8() -> None:
    names = ["Måns", "Åsa", "cia", "dan", "eva"]
    game = {
        "seats": names,
        "dealt": dict(zip(names, VALID["dealt"].values(), strict=True)),
        "center": VALID["center"],
        "ballots": {"Åsa": "Måns", "cia": "Måns"},
    }
    # A terminal whose locale is not UTF-8 still gets UTF-8, not an error.
    run = subprocess.run(
        [varulv_command(), "referee"],
        input=json.dumps(game).encode("utf-8"),
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ, "LC_ALL": "C", "PYTHONIOENCODING": "ascii"},
    )
    assert (run.returncode, run.stderr) == (0, b"")
    printed = run.stdout.decode("utf-8")
    assert '"Måns": 2' in printed and "\\u00e5" not in printed
    assert json.loads(printed)["dead"] == ["Måns"]
