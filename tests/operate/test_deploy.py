"""What a platform runs: the Procfile, the install files, the health check, the start-up checks."""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text

from slackapp.app import build
from slackapp.config import Settings
from slackapp.db.engine import make_sessions
from slackapp.db.migrate import MIGRATION_LOCK, MIGRATIONS, alembic_config, at_head, upgrade
from slackapp.db.models import Game, OutboxEntry, Phase
from slackapp.fakeslack import FakeSlack
from slackapp.logs import quiet_libraries
from slackapp.server import Router
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET
from tests.operate.conftest import fresh_database
from tests.processes import end, start
from tests.reliability.support import BrokenSteps, Nothing
from tests.waiting import PATIENCE, until

ROOT = Path(__file__).resolve().parents[2]
UNREACHABLE_DATABASE = "postgresql+psycopg://nobody@127.0.0.1:9/nothing?connect_timeout=2"


def test_procfile_releases_then_serves() -> None:
    processes = dict(
        line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line
    )
    assert {name: command.strip() for name, command in processes.items()} == {
        "web": "varulv serve",
        "release": "alembic upgrade head",
    }


def test_platform_install_files() -> None:
    requirements = [
        line
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert requirements == ["."], "the project itself, with pyproject.toml's dependencies"
    python = (ROOT / ".python-version").read_text().strip()
    wanted = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert wanted == ">=3.11" and tuple(map(int, python.split("."))) >= (3, 11)


def settings(**changes: Any) -> Settings:
    base = Settings(
        bot_token=None,
        signing_secret="secret",
        app_token=None,
        database_url=None,
        api_url="http://127.0.0.1:9/api/",
        port=3000,
        night_seconds=120,
        day_seconds=300,
        vote_seconds=120,
        data_dir=".pgdata",
    )
    return dataclasses.replace(base, **changes)


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({}, "SLACK_BOT_TOKEN"),
        ({"bot_token": "xoxb-1", "signing_secret": None}, "SLACK_SIGNING_SECRET"),
        ({"client_id": "1.2"}, "both SLACK_CLIENT_ID and SLACK_CLIENT_SECRET"),
        ({"client_id": "1.2", "client_secret": "s", "signing_secret": None}, "SIGNING_SECRET"),
        ({"client_id": "1.2", "client_secret": "s", "app_token": "xapp-1"}, "Socket Mode"),
    ],
)
def test_serve_says_what_is_missing(changes: dict[str, Any], complaint: str) -> None:
    problems = settings(**changes).problems()
    assert len(problems) == 1 and complaint in problems[0]


@pytest.mark.parametrize(
    "changes",
    [
        {"bot_token": "xoxb-1"},
        {"bot_token": "xoxb-1", "signing_secret": None, "app_token": "xapp-1"},
        {"client_id": "1.2", "client_secret": "s"},
    ],
)
def test_serve_starts_with_either_kind_of_credentials(changes: dict[str, Any]) -> None:
    assert settings(**changes).problems() == []


def test_work_is_named_in_its_complaints_and_listens_on_no_port() -> None:
    """``varulv work`` needs the credentials ``varulv serve`` does, and serves no ``PORT``: its
    ``/metrics`` may be on the port a ``varulv serve`` on another host uses."""
    (missing,) = settings().problems("work")
    assert missing.startswith("varulv work needs SLACK_BOT_TOKEN")
    on_port = settings(bot_token="xoxb-1", metrics_port=3000)
    assert on_port.problems("work") == []
    assert "must differ from PORT" in on_port.problems("serve")[0]


def test_serve_refuses_to_start_without_credentials(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    result = subprocess.run(
        [sys.executable, "-m", "slackapp.cli", "serve"],
        cwd=ROOT,
        env={**env, "DATABASE_URL": UNREACHABLE_DATABASE},
        capture_output=True,
        text=True,
        timeout=300,  # only how long a failing test takes to say so
        check=False,
    )
    assert result.returncode == 2
    assert "SLACK_BOT_TOKEN" in result.stderr and "SLACK_CLIENT_ID" in result.stderr


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeSlack]:
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as slack:
        yield slack


def call(router: Router, path: str) -> tuple[str, bytes]:
    answer: dict[str, str] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        answer["status"] = status

    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "CONTENT_LENGTH": "0",
    }
    body = b"".join(router(environ, start_response))
    return answer["status"], body


def test_readyz_checks_the_database_and_healthz_does_not(fake: FakeSlack, postgres: str) -> None:
    """A platform stops routing to a process whose database is away (readiness), and does not
    restart it for that (liveness): a restart would not bring the database back."""
    single = settings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=fake.api_url)
    url = fresh_database(postgres, "health")
    upgrade_schema(url)
    healthy = Router(build(single, url))
    assert call(healthy, "/readyz") == ("200 OK", b"ok\n")
    assert call(healthy, "/healthz") == ("200 OK", b"ok\n")
    down = Router(build(single, UNREACHABLE_DATABASE))
    assert call(down, "/readyz") == ("503 Service Unavailable", b"database unreachable\n")
    assert call(down, "/healthz") == ("200 OK", b"ok\n")


def upgrade_schema(url: str) -> None:
    engine = create_engine(url)
    upgrade(engine)
    engine.dispose()


def late_game(
    url: str, phase: Phase, deadline: datetime | None, message_due: datetime | None
) -> None:
    """A game in ``phase`` with ``deadline``, and a message due since ``message_due`` if given."""
    sessions = make_sessions(create_engine(url))
    with sessions() as session, session.begin():
        game = Game(
            team_id="T0001",
            channel_id=f"CLATE{phase.value}",
            host_user_id="U0001",
            phase=phase,
            seed=1,
            night_seconds=60,
            day_seconds=300,
            vote_seconds=60,
            deadline=deadline,
        )
        session.add(game)
        session.flush()
        if message_due is not None:
            session.add(
                OutboxEntry(
                    stream=game.id,
                    team_id=game.team_id,
                    surface="lobby",
                    version=1,
                    channel=game.channel_id,
                    text="",
                    due_at=message_due,
                )
            )


def late_request(url: str, received_at: datetime) -> None:
    """A request acknowledged then, and carried out by nobody since."""
    with create_engine(url).begin() as connection:
        connection.execute(
            text(
                "INSERT INTO inbox (request_key, body, holder, until, received_at)"
                " VALUES (NULL, '{}', 'gone', :at, :at)"
            ),
            {"at": received_at},
        )


@pytest.mark.parametrize("late", ["message", "deadline", "request"])
def test_readyz_says_when_deliveries_or_deadlines_fall_behind(
    fake: FakeSlack, postgres: str, late: str
) -> None:
    """A message due, or a deadline passed, long ago and still waiting: nobody is delivering
    or keeping the timers, and the platform hears it; the same a moment ago is no alarm."""
    single = settings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=fake.api_url)
    url = fresh_database(postgres, f"behind-{late}")
    upgrade_schema(url)
    router = Router(build(single, url), ready_behind_seconds=30)
    now = datetime.now(UTC)
    for ago, expected in ((timedelta(seconds=5), "200"), (timedelta(seconds=60), "503")):
        if late == "message":
            late_game(url, Phase.LOBBY, None, now - ago)
        elif late == "deadline":
            late_game(url, Phase.NIGHT, now - ago, None)
        else:
            late_request(url, now - ago)
        status, body = call(router, "/readyz")
        assert status.startswith(expected), (ago, status, body)
        assert call(router, "/healthz")[0].startswith("200"), "still alive: nothing to restart"
        with create_engine(url).begin() as connection:
            connection.execute(text("DELETE FROM games"))
            connection.execute(text("DELETE FROM outbox"))  # no foreign key: see db.streams
            connection.execute(text("DELETE FROM inbox"))
    said = {"message": b"deliveries", "deadline": b"deadlines", "request": b"requests"}
    assert body == said[late] + b" behind\n"


def test_readyz_is_ready_again_once_a_game_whose_deadline_always_fails_is_given_up(
    fake: FakeSlack, postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One game whose deadline step raises every time kept every process not ready for as
    long as it lasted; now, after a minute of failing, it is ended, and readiness recovers."""
    single = settings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=fake.api_url)
    url = fresh_database(postgres, "given-up")
    upgrade_schema(url)
    ahead = [timedelta()]
    varulv = build(single, url, now=lambda: datetime.now(UTC) + ahead[0])
    varulv.games.deliverer = Nothing()  # what it says waits in the outbox
    router = Router(varulv)
    try:
        late_game(url, Phase.NIGHT, datetime.now(UTC) - timedelta(minutes=10), None)
        with create_engine(url).connect() as connection:
            game_id = connection.execute(text("SELECT max(id) FROM games")).scalar_one()
        BrokenSteps(monkeypatch).always.add(game_id)
        assert call(router, "/readyz") == ("503 Service Unavailable", b"deadlines behind\n")
        for seconds in (0, 30):
            ahead[0] += timedelta(seconds=seconds)
            varulv.games.deadlines_due()
            assert call(router, "/readyz")[1] == b"deadlines behind\n", "failing, not yet ended"
        ahead[0] += timedelta(seconds=30)
        varulv.games.deadlines_due()
        assert call(router, "/readyz") == ("200 OK", b"ok\n")
    finally:
        varulv.sessions.kw["bind"].dispose()


def test_install_pages_exist_only_for_many_workspaces(fake: FakeSlack, postgres: str) -> None:
    url = fresh_database(postgres, "routes")
    engine = create_engine(url)
    upgrade(engine)  # the install page stores an OAuth state
    engine.dispose()
    single = settings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=fake.api_url)
    assert call(Router(build(single, url)), "/slack/install")[0].startswith("404")
    many = dataclasses.replace(single, bot_token=None, client_id="1.2", client_secret="s")
    status, page = call(Router(build(many, url)), "/slack/install")
    assert status.startswith("200") and b"https://slack.com/oauth/v2/authorize" in page


def test_every_package_ships_with_the_migrations_inside() -> None:
    """pyproject.toml lists the packages by hand (the migrations live outside ``slackapp/``):
    a package missing from the list would be absent from a non-editable install."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        ".".join(folder.relative_to(ROOT).parts)
        for folder in (ROOT / "slackapp").rglob("*")
        if folder.is_dir() and folder.name != "__pycache__"
    } | {"slackapp"}
    migrations = {
        "slackapp.migrations" + ".".join(("", *folder.relative_to(ROOT / "migrations").parts))
        for folder in [ROOT / "migrations", *(ROOT / "migrations").iterdir()]
        if folder.is_dir() and folder.name != "__pycache__"
    }
    assert set(tool["packages"]) == on_disk | migrations
    assert tool["package-dir"] == {"slackapp.migrations": "migrations"}
    assert "script.py.mako" in tool["package-data"]["slackapp.migrations"]


def test_the_release_phase_and_the_app_use_the_same_migrations() -> None:
    """``alembic upgrade head`` in a clone reads alembic.ini; the app builds its configuration
    from the package: both find the one ``migrations/`` and the same head."""
    from_ini = ScriptDirectory.from_config(Config(str(ROOT / "alembic.ini")))
    from_package = ScriptDirectory.from_config(alembic_config())
    assert Path(from_ini.dir).resolve() == Path(str(MIGRATIONS)).resolve() == ROOT / "migrations"
    assert from_ini.get_heads() == from_package.get_heads() != []


def test_healthz_says_when_this_processs_timers_have_stopped(
    fake: FakeSlack, postgres: str
) -> None:
    single = settings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=fake.api_url)
    url = fresh_database(postgres, "timers")
    upgrade_schema(url)
    varulv = build(single, url)
    router = Router(varulv, keeps_timers=True)
    varulv.start()
    try:
        assert call(router, "/healthz") == ("200 OK", b"ok\n")
        assert call(router, "/readyz") == ("200 OK", b"ok\n")
    finally:
        varulv.stop()
    assert call(router, "/healthz") == ("503 Service Unavailable", b"timers stopped\n")
    assert call(router, "/readyz") == ("503 Service Unavailable", b"timers stopped\n")


def test_the_release_step_waits_for_a_start_that_is_migrating(postgres: str) -> None:
    """``alembic upgrade head`` may run while a ``varulv serve`` starts and migrates (a release
    job beside a rolling start): it takes the same advisory lock, so the two never run one
    migration at once."""
    url = fresh_database(postgres, "release_lock")
    holder = create_engine(url)
    waiting = text(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = :key"
    )
    try:
        with holder.connect() as starting:  # a start that migrates holds this for its migration
            starting.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
            release = start(
                [sys.executable, "-m", "alembic", "upgrade", "head"],
                cwd=ROOT,
                env={**os.environ, "DATABASE_URL": url},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:

                def blocked_or_done() -> bool:
                    with holder.connect() as looking:
                        blocked = looking.scalar(waiting, {"key": MIGRATION_LOCK})
                    return bool(blocked) or release.poll() is not None

                until(blocked_or_done, "the release step to wait for the lock, or to end")
                assert release.poll() is None, "it migrated while a start held the lock"
                starting.rollback()  # the start's migration is over
                _, stderr = release.communicate(timeout=PATIENCE)
                assert release.returncode == 0, stderr
            finally:
                end(release)
        assert at_head(holder)
    finally:
        holder.dispose()


def test_the_release_step_over_a_schema_a_newer_release_migrated_says_how_to_go_back(
    postgres: str,
) -> None:
    """Rolled back over a database the newer release migrated, ``alembic upgrade head`` fails
    in one line that says so and how to go back, as ``varulv serve`` does, and changes
    nothing."""
    url = fresh_database(postgres, "release_ahead")
    upgrade_schema(url)
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = '0999'"))
        release = subprocess.run(
            [sys.executable, "-m", "alembic", "upgrade", "head"],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": url},
            capture_output=True,
            text=True,
            timeout=PATIENCE,
        )
        assert release.returncode != 0
        said = [line for line in release.stderr.splitlines() if "0999" in line]
        assert said and "alembic downgrade" in said[0], release.stderr
        assert "Traceback" not in release.stderr, release.stderr
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT version_num FROM alembic_version")) == "0999"
    finally:
        engine.dispose()


def test_a_start_with_one_workspaces_token_logs_no_word_of_it_going_unused(
    fake: FakeSlack,
    postgres: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Bolt reads SLACK_BOT_TOKEN itself and, beside the client Varulv gives it, warned at every
    start that the token would go unused; the client holds that very token."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    single = settings(bot_token=BOT_TOKEN, signing_secret=SIGNING_SECRET, api_url=fake.api_url)
    url = fresh_database(postgres, "token_unused")
    upgrade_schema(url)
    quiet_libraries()  # as varulv serve's logging does
    with caplog.at_level(logging.DEBUG, logger="slack_bolt"):
        varulv = build(single, url)
    varulv.engine.dispose()
    assert varulv.app.client.token == BOT_TOKEN
    bolt = [r.getMessage() for r in caplog.records if r.name.startswith("slack_bolt")]
    assert not [line for line in bolt if "will be unused" in line], bolt
