"""Every worked example in ``tests/scenarios/`` is reproduced exactly.

Each ``NAME.json`` there has its expected outcome in ``NAME.out.json``. The examples are found
by globbing, so a new one is checked as soon as it is added; a
missing or empty folder fails loudly instead of passing with nothing checked.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from slackapp.game.referee import referee
from tests.game.test_referee_errors import varulv_command

SCENARIO_DIR = Path(__file__).resolve().parents[1] / "scenarios"
SCENARIO_INPUTS = sorted(
    path for path in SCENARIO_DIR.glob("*.json") if not path.name.endswith(".out.json")
)
MISSING = f"no worked examples found: expected NAME.json files in {SCENARIO_DIR}"

# With no examples the parametrised tests would be silently skipped; one failing case instead.
CASES = [pytest.param(path, id=path.stem) for path in SCENARIO_INPUTS] or [
    pytest.param(None, id="no-scenarios-found")
]


def expected_outcome(scenario: Path | None) -> dict[str, Any]:
    if scenario is None:
        pytest.fail(MISSING)
    answer = scenario.with_name(scenario.stem + ".out.json")
    if not answer.is_file():
        pytest.fail(f"{scenario.name} has no expected outcome {answer.name} beside it")
    outcome: dict[str, Any] = json.loads(answer.read_text(encoding="utf-8"))
    return outcome


def test_the_scenarios_folder_holds_examples() -> None:
    assert SCENARIO_DIR.is_dir(), MISSING
    assert SCENARIO_INPUTS, MISSING


@pytest.mark.parametrize("scenario", CASES)
def test_referee_reproduces_scenario_in_process(scenario: Path | None) -> None:
    expected = expected_outcome(scenario)
    assert scenario is not None
    assert referee(scenario.read_text(encoding="utf-8")) == expected


@pytest.mark.parametrize("scenario", CASES)
def test_varulv_referee_command_reproduces_scenario_from_a_file(scenario: Path | None) -> None:
    expected = expected_outcome(scenario)
    assert scenario is not None
    run = subprocess.run(
        [varulv_command(), "referee", str(scenario)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (run.returncode, run.stderr) == (0, "")
    assert json.loads(run.stdout) == expected


@pytest.mark.parametrize("scenario", CASES)
def test_varulv_referee_command_reproduces_scenario_from_stdin(scenario: Path | None) -> None:
    expected = expected_outcome(scenario)
    assert scenario is not None
    run = subprocess.run(
        [varulv_command(), "referee", "-"],
        input=scenario.read_text(encoding="utf-8"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (run.returncode, run.stderr) == (0, "")
    assert json.loads(run.stdout) == expected
