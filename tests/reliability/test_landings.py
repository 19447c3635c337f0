"""Recording what Slack took: landings a drain found together share a transaction, and one that
cannot be recorded never costs the others theirs."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, create_engine, event, select
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import make_sessions, transaction
from slackapp.db.migrate import upgrade
from slackapp.db.models import OutboxEntry, SlackMessage
from slackapp.delivery.landings import Landing, record
from slackapp.fakeslack import FakeSlack
from tests.reliability.test_delivery import new_game as new_delivery_game

NOW = datetime.now(UTC)
"""When the calls landing here began: no message is unsure, so any time will do."""


@pytest.fixture(scope="module")
def sessions(db: Engine) -> sessionmaker[Session]:
    upgrade(db)
    return make_sessions(db)


@pytest.fixture
def recorded(db: Engine) -> Iterator[tuple[sessionmaker[Session], list[int]]]:
    """Sessions on an engine of their own, and how many transactions it committed."""
    engine = create_engine(db.url)
    commits: list[int] = []
    event.listen(engine, "commit", lambda connection: commits.append(1))
    yield make_sessions(engine), commits
    engine.dispose()


def new_game(fake: FakeSlack, sessions: sessionmaker[Session]) -> int:
    """A game whose lobby shows version 1, with version 2 waiting in the outbox."""
    game_id, channel = new_delivery_game(fake, sessions)
    with transaction(sessions) as session:
        session.add(
            SlackMessage(game_id=game_id, surface="lobby", channel=channel, ts="1.0", version=1)
        )
        session.add(
            OutboxEntry(game_id=game_id, surface="lobby", version=2, channel=channel, text="x")
        )
    return game_id


def test_landings_that_arrive_together_are_recorded_in_one_transaction(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    recorded: tuple[sessionmaker[Session], list[int]],
) -> None:
    own_sessions, commits = recorded
    game_id = new_game(fake, sessions)
    first = Landing(game_id, "lobby", 2, NOW)
    others = [Landing(game_id, f"dm:{n}", 1, NOW, (f"D{n}", f"2.{n}")) for n in range(19)]

    record(own_sessions, [first, *others])

    assert len(commits) == 1
    with sessions() as session:
        shown = {
            m.surface: (m.ts, m.version)
            for m in session.scalars(select(SlackMessage).where(SlackMessage.game_id == game_id))
        }
        left = session.scalars(
            select(OutboxEntry.id).where(
                OutboxEntry.game_id == game_id, OutboxEntry.done_at.is_(None)
            )
        ).all()
    assert shown == {"lobby": ("1.0", 2)} | {f"dm:{n}": (f"2.{n}", 1) for n in range(19)}
    assert left == []


def test_a_landing_that_cannot_be_recorded_never_costs_the_others_theirs(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    recorded: tuple[sessionmaker[Session], list[int]],
) -> None:
    game_id = new_game(fake, sessions)
    first = Landing(game_id, "lobby", 2, NOW)
    gone = Landing(game_id + 1_000_000, "lobby", 1, NOW, ("C0GONE", "3.0"))  # no such game
    others = [Landing(game_id, f"dm:{n}", 1, NOW, (f"D{n}", f"2.{n}")) for n in range(5)]

    record(recorded[0], [first, *others[:2], gone, *others[2:]])

    with sessions() as session:
        surfaces = set(
            session.scalars(select(SlackMessage.surface).where(SlackMessage.game_id == game_id))
        )
    assert surfaces == {"lobby"} | {f"dm:{n}" for n in range(5)}
