"""The container image and the compose file, checked without a container engine (none runs
where these tests do): the Dockerfile's and compose.yaml's commands are the Procfile's, each is
a command that runs, and the files the image copies are enough to install Varulv."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import create_engine

from slackapp.db.migrate import at_head
from tests.operate.conftest import fresh_database

ROOT = Path(__file__).resolve().parents[2]


def procfile() -> dict[str, list[str]]:
    lines = (ROOT / "Procfile").read_text().splitlines()
    return {
        name.strip(): shlex.split(command)
        for name, command in (line.split(":", 1) for line in lines if line.strip())
    }


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments), continuation lines joined, comments left out."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line.rstrip().removesuffix("\\") + " "
        if not line.rstrip().endswith("\\"):
            keyword, _, rest = pending.strip().partition(" ")
            instructions.append((keyword.upper(), rest.strip()))
            pending = ""
    return instructions


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_the_image_is_slim_python_3_13_and_serves_as_no_root_user() -> None:
    steps = dockerfile()
    keywords = [keyword for keyword, _ in steps]
    assert steps[0] == ("FROM", "python:3.13-slim")
    users = [rest for keyword, rest in steps if keyword == "USER"]
    assert users and users[-1] not in ("root", "0"), users
    assert keywords.index("USER") < keywords.index("CMD")
    (command,) = [json.loads(rest) for keyword, rest in steps if keyword == "CMD"]
    assert command == procfile()["web"], "the image runs the Procfile's web process"
    (health,) = [rest for keyword, rest in steps if keyword == "HEALTHCHECK"]
    assert "/healthz" in health


def test_the_files_the_image_copies_install_varulv(tmp_path: Path) -> None:
    """The image's ``COPY`` lines, into an empty folder, build the whole package."""
    context = tmp_path / "context"
    context.mkdir()
    for keyword, rest in dockerfile():
        if keyword == "COPY":
            *sources, target = rest.split()
            for source in sources:
                origin = ROOT / source
                place = context / (source if target == "./" else target.removeprefix("./"))
                if origin.is_dir():
                    shutil.copytree(origin, place, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    shutil.copy(origin, place)
    # What ``pip install .`` builds from them: setuptools' build of the packages and their data.
    built = subprocess.run(
        [
            sys.executable,
            "-c",
            "import setuptools; setuptools.setup()",
            "-q",
            "build_py",
            "--build-lib",
            str(tmp_path / "lib"),
        ],
        cwd=context,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    lib = tmp_path / "lib"
    names = {str(path.relative_to(lib)) for path in lib.rglob("*") if path.is_file()}
    migrations = {name for name in names if name.startswith("slackapp/migrations/versions/0")}
    assert len(migrations) == len(list((ROOT / "migrations" / "versions").glob("0*.py")))
    assert {"slackapp/cli.py", "slackapp/sandbox/static/index.html"} <= names


def test_compose_runs_the_procfile_processes_on_its_postgres() -> None:
    services = compose()["services"]
    app = {name: service for name, service in services.items() if "build" in service}
    assert sorted(service["command"] for service in app.values()) == sorted(procfile().values()), (
        "each Procfile process is a compose service, and nothing else is"
    )
    assert services["postgres"]["image"].startswith("postgres:")
    for service in app.values():
        database = service["environment"]["DATABASE_URL"]
        assert database.startswith("postgresql://") and "@postgres:5432/" in database
        # Every setting in .env reaches the app, but for the database and the port it serves on.
        assert service["env_file"] == [{"path": ".env", "required": False}]
        assert service["environment"]["PORT"] == "3000"
    release = next(name for name, service in app.items() if service["command"][0] == "alembic")
    web = next(name for name, service in app.items() if service["command"][0] == "varulv")
    assert app[release]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert app[web]["depends_on"][release]["condition"] == "service_completed_successfully"
    assert app[web]["ports"] == ["${PORT:-3000}:3000"]
    assert all(
        service["environment"][name].startswith("${")
        for service in app.values()
        for name in service["environment"]
        if name not in ("DATABASE_URL", "PORT")
    ), "what compose passes on is the environment's, not a value of its own"


def test_every_command_of_the_image_runs(postgres: str, tmp_path: Path) -> None:
    """``varulv`` commands are subcommands the CLI has; the release migrates a database."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLACK_")}
    for command in procfile().values():
        if command[0] == "varulv":
            shown = subprocess.run(
                [sys.executable, "-m", "slackapp.cli", *command[1:], "--help"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert shown.returncode == 0 and "usage: varulv" in shown.stdout, shown.stderr
        else:
            assert command == ["alembic", "upgrade", "head"], command
            url = fresh_database(postgres, "release")
            alembic = Path(sys.executable).with_name("alembic")
            done = subprocess.run(
                [str(alembic), *command[1:]],
                cwd=ROOT,  # the image's WORKDIR holds the same alembic.ini and migrations/
                env={**env, "DATABASE_URL": url},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, done.stderr
            engine = create_engine(url)
            try:
                assert at_head(engine)
            finally:
                engine.dispose()
