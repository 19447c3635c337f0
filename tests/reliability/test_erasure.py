"""Erasure: ``varulv erase-workspace`` as a real process on a real database (``/varulv forget
me`` through the app: ``tests/inprocess/test_forget_me.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from slack_sdk.oauth.installation_store import Installation
from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.orm import Session

from slackapp.blocks.forgotten import erased_name
from slackapp.db.erasure import Installed, forget, installed
from slackapp.db.installations import installation_store
from slackapp.db.migrate import upgrade
from slackapp.db.models import (
    Ballot,
    ChannelHome,
    ChannelSettings,
    DeliveryLease,
    Game,
    OutboxEntry,
    PacingBucket,
    Person,
    Regular,
    ReinstallNeeded,
    Score,
    SeasonWrapUp,
    Seat,
    SlackMessage,
    StandingTable,
)
from tests.databases import migrated_database

pytestmark = pytest.mark.long(9)


@pytest.fixture
def database_url(postgres: str) -> str:
    """A database of its own: the installations it keeps would make the end-to-end apps'
    shared one an "Add to Slack" server's, and a single-workspace app started on it after
    would refuse."""
    return migrated_database(postgres, "erasure")


@pytest.fixture
def db(database_url: str) -> Iterator[Engine]:
    engine = create_engine(database_url)
    yield engine
    engine.dispose()


def rows_naming(db: Engine, needle: str) -> dict[str, int]:
    """How many rows of each table hold ``needle`` anywhere in them."""
    found = {}
    with db.connect() as connection:
        for table in inspect(connection).get_table_names():
            count = connection.scalar(
                text(f'SELECT count(*) FROM "{table}" AS t WHERE t::text LIKE :needle'),
                {"needle": f"%{needle}%"},
            )
            if count:
                found[table] = int(count)
    return found


def outcome_of(db: Engine, game_id: int) -> dict[str, Any]:
    with db.connect() as connection:
        stored = connection.scalar(
            text("SELECT outcome FROM games WHERE id = :id"), {"id": game_id}
        )
    assert isinstance(stored, dict)
    return stored


def seat_rows_of(db: Engine, game_id: int) -> list[dict[str, Any]]:
    with db.connect() as connection:
        rows = connection.execute(
            text("SELECT * FROM seats WHERE game_id = :id"), {"id": game_id}
        ).mappings()
        return [dict(row) for row in rows]


ERASED_TEAM, KEPT_TEAM = "T0ERASEME", "T0KEEPME"


def a_workspace(db: Engine, team: str, installed: bool) -> None:
    """A row for the workspace in every table Varulv keeps."""
    now = datetime.now(UTC)
    channel = f"C{team[1:]}"
    with Session(db) as session, session.begin():
        game = Game(
            team_id=team, channel_id=channel, host_user_id="U0HOST", phase="over", seed=1,
            night_seconds=60, day_seconds=60, vote_seconds=60, bots_allowed=True,
        )  # fmt: skip
        session.add(game)
        session.flush()
        notice = game.id + 1_000_000
        seat = Seat(game_id=game.id, position=0, user_id="U0HOST", display_name="host")
        session.add(seat)
        session.flush()
        session.add_all(
            [
                Ballot(seat_id=seat.id, game_id=game.id, voter_key="U0HOST", target="nobody"),
                OutboxEntry(stream=game.id, team_id=team, surface="reveal", version=1,
                            channel=channel, text="the reveal"),
                SlackMessage(stream=game.id, surface="reveal", channel=channel, ts="1.0",
                             version=1),
                Score(team_id=team, channel_id=channel, user_id="U0HOST", games=1, wins=1,
                      points=1),
                ChannelSettings(team_id=team, channel_id=channel, night_seconds=60,
                                day_seconds=60, vote_seconds=60, bots_allowed=True,
                                updated_by="U0HOST"),
                Person(team_id=team, user_id="U0HOST", name="host", fetched_at=now),
                Regular(team_id=team, channel_id=channel, user_id="U0HOST"),
                ChannelHome(enterprise_id=f"E{team[1:]}", channel_id=channel, team_id=team),
                StandingTable(team_id=team, channel_id=channel, weekdays=1, minute_of_day=0,
                              zone="UTC", lobby_minutes=5, next_at=now, owner_user_id="U0HOST",
                              lobby_game_id=game.id),
                DeliveryLease(stream=game.id, holder="a process", until=now + timedelta(hours=1)),
                # a channel's notice: a stream of its own, no game's
                OutboxEntry(stream=notice, team_id=team, surface="say:1", version=1,
                            channel=channel, text="the settings changed"),
                SlackMessage(stream=notice, surface="say:1", channel=channel, ts="2.0",
                             version=1),
                SeasonWrapUp(team_id=team, channel_id=channel, season="2026-12",
                             game_id=game.id),
                PacingBucket(key=f"update:{team}", free_from=0, taken=True),
                PacingBucket(key=f"post:{channel}", free_from=0, taken=True),
                ReinstallNeeded(enterprise_id="", team_id=team, refresh_token_sha256="0" * 64,
                                error="invalid_refresh_token"),
            ]
        )  # fmt: skip
    if installed:
        installation_store(db, "client").save(
            Installation(
                app_id="A0APP", team_id=team, user_id="U0ADMIN", bot_token="xoxb-erase",
                bot_id="B0BOT", bot_user_id="U0BOT", installed_at=now.timestamp(),
            )
        )  # fmt: skip


def erase(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    return subprocess.run(
        [sys.executable, "-m", "slackapp.cli", "erase-workspace", *args],
        capture_output=True,
        text=True,
        env={**env, "DATABASE_URL": database_url},
        timeout=120,
    )


def rows_of(db: Engine, team: str) -> dict[str, int]:
    """Each table's rows for the workspace: by its team id, or through its game or stream."""
    counted = {}
    with db.connect() as connection:
        for table in inspect(connection).get_table_names():
            columns = {c["name"] for c in inspect(connection).get_columns(table)}
            if "team_id" in columns:
                where = "team_id = :team"
            elif "stream" in columns:  # a game's, or a notice's
                where = (
                    "stream IN (SELECT id FROM games WHERE team_id = :team"
                    " UNION SELECT stream FROM outbox WHERE team_id = :team)"
                )
            elif "game_id" in columns:
                where = "game_id IN (SELECT id FROM games WHERE team_id = :team)"
            else:
                continue
            sql = f'SELECT count(*) FROM "{table}" WHERE {where}'
            counted[table] = int(connection.scalar(text(sql), {"team": team}) or 0)
    return counted


def test_erase_workspace_deletes_every_row_of_one_workspace_once_it_is_uninstalled(
    db: Engine, database_url: str
) -> None:
    upgrade(db)
    a_workspace(db, ERASED_TEAM, installed=True)
    a_workspace(db, KEPT_TEAM, installed=True)
    kept = rows_of(db, KEPT_TEAM)
    held = rows_of(db, ERASED_TEAM)
    assert all(held.values()), f"a row in every table: {held}"

    refused = erase(database_url, ERASED_TEAM)
    assert refused.returncode == 2, refused.stderr
    assert "still has Varulv installed" in refused.stderr and "--force" in refused.stderr
    assert rows_of(db, ERASED_TEAM) == held, "a refusal erases nothing"
    assert erase(database_url, "not a team").returncode == 2

    done = erase(database_url, ERASED_TEAM, "--force")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"erased {ERASED_TEAM}: ")
    assert set(rows_of(db, ERASED_TEAM).values()) == {0}, rows_of(db, ERASED_TEAM)
    assert rows_naming(db, ERASED_TEAM) == {}, "no row anywhere names the workspace"
    assert rows_naming(db, f"C{ERASED_TEAM[1:]}") == {}, "nor any of its channels"
    assert rows_naming(db, KEPT_TEAM)["pacing_buckets"] == 1, "the other keeps its own"
    assert rows_of(db, KEPT_TEAM) == kept, "the other workspace keeps everything"
    again = erase(database_url, ERASED_TEAM)
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"nothing kept about {ERASED_TEAM}: no row erased\n", "nothing left"


def test_forgetting_a_person_erases_them_from_the_channels_notices(db: Engine) -> None:
    """A notice of a changed setting names who changed it, and no game carries it. Should the
    channel refuse it, its author is told privately in its stream, and so may be whoever set
    the channel's standing table: the author's word goes, the other's stays."""
    upgrade(db)
    notice, team = 3_000_001, "T0NOTICE"
    with Session(db) as session, session.begin():
        session.add_all(
            [
                OutboxEntry(stream=notice, team_id=team, surface="notice:settings:1",
                            version=1, channel="C0NOTICE", user_id="U0ANNA",
                            text="<@U0ANNA> changed the Varulv settings"),
                OutboxEntry(stream=notice, team_id=team, surface="tell:U0ANNA:1", version=1,
                            user_id="U0ANNA", text="the channel was not told"),
                SlackMessage(stream=notice, surface="tell:U0ANNA:1", channel="D0ANNA",
                             ts="1.0", version=1),
                OutboxEntry(stream=notice, team_id=team, surface="tell:U0BO:1", version=1,
                            user_id="U0BO", text="your standing table is paused"),
                SlackMessage(stream=notice, surface="tell:U0BO:1", channel="D0BO", ts="2.0",
                             version=1),
            ]
        )  # fmt: skip
    with Session(db) as session, session.begin():
        forget(session, ["T0NOTICE"], "U0ANNA", erased_name)
    assert rows_naming(db, "U0ANNA") == {}
    assert rows_naming(db, "D0ANNA") == {}, "where she was told"
    assert rows_naming(db, "changed the Varulv settings") == {"outbox": 1}
    assert rows_naming(db, "U0BO") == {"outbox": 1, "messages": 1}


def test_a_workspace_of_an_org_wide_installation_counts_as_installed(
    db: Engine, database_url: str
) -> None:
    """An org-wide Enterprise Grid installation is kept under the organisation, with no team
    id: a workspace whose games were played under that organisation still has Varulv, and one
    whose organisation nothing kept names (its games pruned) may have it; neither is erased
    without ``--force``."""
    upgrade(db)
    team, other, pruned = "T0ORGTEAM", "T0ELSEWHERE", "T0PRUNED"
    now = datetime.now(UTC)
    with Session(db) as session, session.begin():
        session.add(Score(team_id=pruned, channel_id="C0PRUNED", user_id="U0HOST", games=1,
                          wins=0, points=0))  # fmt: skip
    with Session(db) as session:
        assert installed(session, pruned) is None, "no installation anywhere"
    with Session(db) as session, session.begin():
        for each, organisation in ((team, "E0ORG"), (other, "E0OTHER")):
            session.add(
                Game(team_id=each, enterprise_id=organisation, channel_id=f"C{each[1:]}",
                     host_user_id="U0HOST", phase="over", seed=1, night_seconds=60,
                     day_seconds=60, vote_seconds=60, bots_allowed=True)
            )  # fmt: skip
    installation_store(db, "client").save(
        Installation(
            app_id="A0APP", enterprise_id="E0ORG", team_id=None, is_enterprise_install=True,
            user_id="U0ADMIN", bot_token="xoxb-org", bot_id="B0BOT", bot_user_id="U0BOT",
            installed_at=now.timestamp(),
        )
    )  # fmt: skip
    with Session(db) as session:
        assert installed(session, team) is Installed.ORGANISATION
        assert installed(session, other) is None, "another organisation's installation is not its"
        assert installed(session, pruned) is Installed.CANNOT_TELL
    refused = erase(database_url, team)
    assert refused.returncode == 2 and "still has Varulv installed" in refused.stderr
    assert rows_of(db, team)["games"] == 1, "a refusal erases nothing"
    maybe = erase(database_url, pruned)
    assert maybe.returncode == 2 and "may still have Varulv installed" in maybe.stderr
    assert "--force" in maybe.stderr
    assert erase(database_url, other).returncode == 0
    assert erase(database_url, pruned, "--force").returncode == 0
