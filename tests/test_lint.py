"""The code stays ruff- and mypy-clean and ruff-formatted: all run as part of the test command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# mypy with no cache (a fresh clone) checks every library the code imports: about twenty
# seconds of CPU, so it starts with the other long files rather than last, alone.
pytestmark = pytest.mark.long(20)

ROOT = Path(__file__).resolve().parents[1]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


SOURCES = ("slackapp", "tests", "migrations", "benchmarks", "scripts", ".ci")


def test_ruff_finds_nothing() -> None:
    result = run(sys.executable, "-m", "ruff", "check", *SOURCES)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_would_change_nothing() -> None:
    result = run(sys.executable, "-m", "ruff", "format", "--check", *SOURCES)
    assert result.returncode == 0, result.stdout + result.stderr


TYPED = ("slackapp", "tests", "benchmarks", "scripts/sandbox_screenshot.py")
"""What mypy checks, as pyproject.toml's ``files`` says, in one process: the tests and
benchmarks import the package, which a second process would check again."""


def test_mypy_strict_finds_nothing() -> None:
    # pyproject.toml sets strict = true for all of them, the rules engine included.
    result = run(sys.executable, "-m", "mypy", "--strict", *TYPED)
    assert result.returncode == 0, result.stdout + result.stderr
