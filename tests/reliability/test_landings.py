"""Recording what Slack took: landings a drain found together share a statement, and one that
cannot be recorded never costs the others theirs."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, create_engine, event, select
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import make_sessions, transaction
from slackapp.db.migrate import upgrade
from slackapp.db.models import DeliveryLease, OutboxEntry, SlackMessage
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
def recorded(db: Engine) -> Iterator[tuple[sessionmaker[Session], list[str]]]:
    """Sessions on an engine of their own, and the statements it ran (a transaction's COMMIT
    included)."""
    engine = create_engine(db.url)
    statements: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    event.listen(engine, "commit", lambda connection: statements.append("COMMIT"))
    yield make_sessions(engine), statements
    engine.dispose()


def new_game(fake: FakeSlack, sessions: sessionmaker[Session]) -> int:
    """A game whose lobby shows version 1, with version 2 waiting in the outbox."""
    game_id, channel = new_delivery_game(fake, sessions)
    with transaction(sessions) as session:
        session.add(
            SlackMessage(stream=game_id, surface="lobby", channel=channel, ts="1.0", version=1)
        )
        session.add(
            OutboxEntry(
                stream=game_id,
                team_id=fake.identity.team_id,
                surface="lobby",
                version=2,
                channel=channel,
                text="x",
            )
        )
    return game_id


def test_landings_that_arrive_together_are_recorded_in_one_statement(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    recorded: tuple[sessionmaker[Session], list[str]],
) -> None:
    own_sessions, statements = recorded
    game_id = new_game(fake, sessions)
    first = Landing(game_id, "lobby", 2, NOW)
    others = [Landing(game_id, f"dm:{n}", 1, NOW, (f"D{n}", f"2.{n}")) for n in range(19)]

    record(own_sessions, [first, *others])

    assert len(statements) == 1, statements
    with sessions() as session:
        shown = {
            m.surface: (m.ts, m.version)
            for m in session.scalars(select(SlackMessage).where(SlackMessage.stream == game_id))
        }
        left = session.scalars(
            select(OutboxEntry.id).where(
                OutboxEntry.stream == game_id, OutboxEntry.done_at.is_(None)
            )
        ).all()
    assert shown == {"lobby": ("1.0", 2)} | {f"dm:{n}": (f"2.{n}", 1) for n in range(19)}
    assert left == []


def test_a_landing_that_cannot_be_recorded_never_costs_the_others_theirs(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    recorded: tuple[sessionmaker[Session], list[str]],
) -> None:
    game_id = new_game(fake, sessions)
    first = Landing(game_id, "lobby", 2, NOW)
    gone = Landing(game_id + 1_000_000, "lobby", 1, NOW, ("C0GONE", "3.0"))  # no such game
    others = [Landing(game_id, f"dm:{n}", 1, NOW, (f"D{n}", f"2.{n}")) for n in range(5)]

    record(recorded[0], [first, *others[:2], gone, *others[2:]])

    with sessions() as session:
        surfaces = set(
            session.scalars(select(SlackMessage.surface).where(SlackMessage.stream == game_id))
        )
    assert surfaces == {"lobby"} | {f"dm:{n}" for n in range(5)}


def test_a_game_let_go_with_its_landing_is_still_due_only_for_what_the_landing_left(
    fake: FakeSlack, sessions: sessionmaker[Session]
) -> None:
    """The statement reads the outbox as it was before its own landings; what they made done
    must not count as still due, and what they left must."""
    finished, unfinished = new_game(fake, sessions), new_game(fake, sessions)
    with transaction(sessions) as session:
        session.add(
            OutboxEntry(
                stream=unfinished,
                team_id=fake.identity.team_id,
                surface="day",
                version=1,
                channel="C1",
                text="y",
            )
        )
        for game_id in (finished, unfinished):
            session.add(DeliveryLease(stream=game_id, holder="me", until=NOW + timedelta(hours=1)))
    landings = [Landing(game_id, "lobby", 2, NOW) for game_id in (finished, unfinished)]

    still_due = record(sessions, landings, "me", [finished, unfinished], datetime.now(UTC))

    assert still_due == [unfinished]
    with sessions() as session:
        leased = select(DeliveryLease.stream).where(
            DeliveryLease.stream.in_([finished, unfinished])
        )
        assert session.scalars(leased).all() == []


def test_only_the_holders_own_leases_are_let_go(
    fake: FakeSlack, sessions: sessionmaker[Session]
) -> None:
    mine, theirs = new_game(fake, sessions), new_game(fake, sessions)
    with transaction(sessions) as session:
        session.add(DeliveryLease(stream=mine, holder="me", until=NOW + timedelta(hours=1)))
        session.add(DeliveryLease(stream=theirs, holder="them", until=NOW + timedelta(hours=1)))

    record(sessions, [], "me", [mine, theirs], datetime.now(UTC))

    with sessions() as session:
        left = session.scalars(
            select(DeliveryLease.stream).where(DeliveryLease.stream.in_([mine, theirs]))
        ).all()
    assert left == [theirs]
