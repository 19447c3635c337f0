"""The referee as one file, run from a bare interpreter (``python -I -S``: no site-packages,
no environment), on every example in docs/referee.md and tests/scenarios/."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from slackapp.referee_file import REFEREE_FILE, referee_archive, sources, write

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(
    path for path in (ROOT / "tests" / "scenarios").glob("*.json") if ".out." not in path.name
)


@pytest.fixture(scope="module")
def referee_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("referee") / REFEREE_FILE)


def run_bare(referee_file: Path, given: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-I", "-S", str(referee_file)],
        input=given,
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
def test_each_scenario_from_a_bare_interpreter(referee_file: Path, scenario: Path) -> None:
    ran = run_bare(referee_file, scenario.read_bytes())
    assert ran.returncode == 0, ran.stderr.decode()
    expected = json.loads(scenario.with_suffix("").with_suffix(".out.json").read_text())
    assert json.loads(ran.stdout) == expected


def test_the_example_in_the_referee_format(referee_file: Path) -> None:
    documented = (ROOT / "docs" / "referee.md").read_text()
    given, shown = re.findall(r"```json\n(.*?)```", documented, re.DOTALL)[:2]
    ran = run_bare(referee_file, given.encode())
    assert ran.returncode == 0, ran.stderr.decode()
    assert json.loads(ran.stdout) == json.loads(shown)


def test_bad_input_is_one_line_and_status_2(referee_file: Path) -> None:
    ran = run_bare(referee_file, b'{"seats": ["anna"]}')
    assert ran.returncode == 2 and ran.stdout == b""
    assert len(ran.stderr.decode().splitlines()) == 1


def test_the_file_is_the_apps_own_code_and_the_same_every_build() -> None:
    """Not a copy: each module in it is the source file the app runs, byte for byte."""
    archive = referee_archive()
    assert archive.startswith(b"#!/usr/bin/env python3\n")
    with zipfile.ZipFile(io.BytesIO(archive)) as opened:
        held = {name: opened.read(name) for name in opened.namelist()}
    assert held == sources()
    for name, data in held.items():
        if name.startswith("slackapp/") and name != "slackapp/__init__.py":
            assert data == (ROOT / name).read_bytes(), name
    game_modules = {path.name for path in (ROOT / "slackapp" / "game").glob("*.py")}
    assert {name.removeprefix("slackapp/game/") for name in held} >= game_modules
    referee_archive.cache_clear()
    assert referee_archive() == archive, "built again, the same bytes"
