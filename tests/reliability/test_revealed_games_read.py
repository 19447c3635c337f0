"""A channel's revealed games are read through their index, not by reading every game kept:
`/varulv last`, the season's records (`/varulv score`, the Home tab, the wrap-ups) and a
season's last game. The deployment keeps the retention days' games of every channel of every
workspace, so a read that scans them all gets slower with each channel added; here PostgreSQL's
plans for the statements these reads send are checked on a database that keeps many."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from slackapp.db import history
from slackapp.db.engine import make_engine
from slackapp.db.models import REVEALED_GAME_SQL
from slackapp.game.seasons import SeasonLength, season_of
from tests.databases import migrated_database
from tests.reliability.plans import nodes, plan_of, sent_while

TEAM, CHANNEL = "T0KEPT", "C0ASKED"
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
CHANNELS, GAMES_EACH = 300, 30
FROM_GAMES = "FROM games"
"""How a statement that reads the games names them."""


@pytest.fixture(scope="module")
def engine(postgres: str) -> Iterator[Engine]:
    """Games revealed in many channels, a month's worth each, and a few cancelled ones. The
    asked channel's id has games of another workspace only, so that nothing read is made into
    a game here: only the plans are looked at."""
    engine = make_engine(migrated_database(postgres, "revealed_games_read"))
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO games (team_id, channel_id, host_user_id, phase, seed,"
                " night_seconds, day_seconds, vote_seconds, bots_allowed, finished_at,"
                " ended_by, updated_at)"
                " SELECT 'T' || (c % 5), CASE WHEN c = 0 THEN :channel ELSE 'C' || c END,"
                " 'U' || g, CASE WHEN g % 10 = 3 THEN 'cancelled' ELSE 'over' END, g, 60, 240,"
                " 90, true,"
                " CASE WHEN g % 10 <> 3 THEN :now - make_interval(days => g, mins => c) END,"
                " CASE WHEN g % 10 = 3 THEN 'U' || g END, :now - make_interval(days => g)"
                " FROM generate_series(0, :channels - 1) c, generate_series(1, :games) g"
            ),
            {"channel": CHANNEL, "now": NOW, "channels": CHANNELS, "games": GAMES_EACH},
        )
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("ANALYZE games"))
    yield engine
    engine.dispose()


def planned(engine: Engine, statement: str, parameters: Any) -> dict[str, Any]:
    """The read's plan, once it is seen to say "revealed" as the index does: literally, so that
    a generic plan of it (PostgreSQL's, for a statement prepared and run often) may use the
    index too, which it never may for a bound value."""
    assert REVEALED_GAME_SQL in statement, statement
    return plan_of(engine, statement, parameters)


def reads_games_by_their_index(plan: dict[str, Any]) -> bool:
    on_games = [node for node in nodes(plan) if node.get("Relation Name") == "games"]
    return bool(on_games) and all(
        node.get("Index Name") == "ix_games_revealed_by_channel" for node in on_games
    )


def test_the_channels_last_reveal_reads_its_newest_game_alone(engine: Engine) -> None:
    (statement, parameters), *_ = sent_while(
        engine, lambda session: history.last_finished(session, TEAM, CHANNEL), FROM_GAMES
    )
    plan = planned(engine, statement, parameters)
    assert reads_games_by_their_index(plan), plan
    assert plan["Node Type"] == "Limit", "one game, not every one the channel keeps"
    assert not [node for node in nodes(plan) if "Sort" in node["Node Type"]], "in index order"


def test_a_seasons_records_and_its_last_game_read_the_channels_games_alone(
    engine: Engine,
) -> None:
    zone = ZoneInfo("Europe/Stockholm")
    season = season_of(NOW, SeasonLength.MONTH, zone)

    def read(session: Session) -> None:
        history.season_records(session, TEAM, CHANNEL, season, zone)
        history.last_finished_in(session, TEAM, CHANNEL, season, zone)

    records, last = sent_while(engine, read, FROM_GAMES)
    assert reads_games_by_their_index(planned(engine, *records))
    last_plan = planned(engine, *last)
    assert reads_games_by_their_index(last_plan), last_plan
    assert not [node for node in nodes(last_plan) if "Sort" in node["Node Type"]]
