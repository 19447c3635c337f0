"""The channels' notices are found through their index, not by reading the whole outbox:
`/varulv forget me` erases the person from them, and the daily prune deletes the old ones. The
outbox keeps every game's entries of the retention days, a few dozen a game, and a notice is a
stream of its own among them; here PostgreSQL's plans for the statements these send are checked
on an outbox that keeps many games' entries and a few thousand notices."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, text

from slackapp.blocks.forgotten import erased_name
from slackapp.db.engine import make_engine
from slackapp.db.erasure import forget
from slackapp.db.streams import notices_before
from tests.databases import migrated_database
from tests.reliability.plans import nodes, plan_of, sent_while

TEAMS = ("T0ONE", "T0TWO")
"""An organisation's two workspaces, as forget me in an organisation-wide install asks."""
PERSON = "U0000007"
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
GAMES, ENTRIES_EACH, NOTICES = 4_000, 30, 3_000
NOTICE = "notice:"
"""How a statement that looks for the notices names them."""


@pytest.fixture(scope="module")
def engine(postgres: str) -> Iterator[Engine]:
    """Games' entries of both workspaces and two others (the person's private messages among
    them), and notices of both workspaces that name the person, who was told privately of
    some; no game row is needed, as only the plans are looked at."""
    engine = make_engine(migrated_database(postgres, "notices_read"))
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO outbox (stream, team_id, surface, version, channel, user_id, text,"
                " attempts, created_at)"
                " SELECT g, 'T0' || (g % 4), CASE WHEN e % 3 = 0 THEN 'dm:U' || lpad(e::text,"
                " 7, '0') ELSE 'say:' || e END, 1, 'D' || e, 'U' || lpad(e::text, 7, '0'),"
                " 'a line of a game', 1, :now - make_interval(days => g % 90)"
                " FROM generate_series(1, :games) g, generate_series(1, :entries) e"
            ),
            {"now": NOW, "games": GAMES, "entries": ENTRIES_EACH},
        )
        connection.execute(
            text(
                "INSERT INTO outbox (stream, team_id, surface, version, channel, user_id, text,"
                " attempts, created_at)"
                " SELECT 1000000 + n, CASE WHEN n % 2 = 0 THEN :one ELSE :two END,"
                " 'notice:settings:' || n, 1, 'C' || (n % 300), :person,"
                " :said, 1,"
                " :now - make_interval(days => n % 90)"
                " FROM generate_series(1, :notices) n"
            ),
            {
                "one": TEAMS[0],
                "two": TEAMS[1],
                "person": PERSON,
                "said": f"<@{PERSON}> changed the Varulv settings",
                "now": NOW,
                "notices": NOTICES,
            },
        )
        connection.execute(
            text(
                "INSERT INTO outbox (stream, team_id, surface, version, user_id, text, attempts)"
                " SELECT stream, team_id, :told, 1, :person,"
                " 'the channel was not told', 1 FROM outbox"
                " WHERE surface LIKE 'notice:%' AND stream % 50 = 0"
            ),
            {"told": f"tell:{PERSON}:1", "person": PERSON},
        )
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("ANALYZE outbox"))
    yield engine
    engine.dispose()


def reads_the_notices_by_their_index(plan: dict[str, Any]) -> bool:
    """The notices are found in their index, and the outbox is read through an index alone
    (the notices' streams' entries by stream), never whole."""
    read = list(nodes(plan))
    whole = [
        node
        for node in read
        if node["Node Type"] == "Seq Scan" and node.get("Relation Name") == "outbox"
    ]
    return "ix_outbox_notices" in {node.get("Index Name") for node in read} and not whole


def test_forget_me_reads_the_workspaces_notices_alone(engine: Engine) -> None:
    sent = sent_while(engine, lambda session: forget(session, TEAMS, PERSON, erased_name), NOTICE)
    assert len(sent) == 4, "the mention, the author, the words told and their messages"
    for statement, parameters in sent:
        plan = plan_of(engine, statement, parameters)
        assert reads_the_notices_by_their_index(plan), (statement, plan)


def test_the_prune_finds_the_old_notices_alone(engine: Engine) -> None:
    """The prune deletes the streams it found by stream, as it deletes the games'."""
    cutoff = NOW - timedelta(days=60)
    (found,) = sent_while(
        engine, lambda session: session.scalars(notices_before(cutoff)).all(), NOTICE
    )
    plan = plan_of(engine, *found)
    assert reads_the_notices_by_their_index(plan), plan
