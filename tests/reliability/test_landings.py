"""Recording what Slack took: landings that arrive together share a transaction, and one that
cannot be recorded never costs the others theirs."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, create_engine, event, exc, select, text
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import make_sessions, transaction
from slackapp.db.migrate import upgrade
from slackapp.db.models import OutboxEntry, SlackMessage
from slackapp.delivery.landings import Landing, Landings
from slackapp.fakeslack import FakeSlack
from tests.reliability.test_delivery import new_game as new_delivery_game
from tests.waiting import until

NOW = datetime.now(UTC)
"""When the calls landing here began: no message is unsure, so any time will do."""


@pytest.fixture(scope="module")
def sessions(db: Engine) -> sessionmaker[Session]:
    upgrade(db)
    return make_sessions(db)


@pytest.fixture
def recorded(db: Engine) -> Iterator[tuple[Landings, list[int]]]:
    """Landings on an engine of their own, and how many transactions it committed."""
    engine = create_engine(db.url)
    commits: list[int] = []
    event.listen(engine, "commit", lambda connection: commits.append(1))
    yield Landings(make_sessions(engine)), commits
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


def wait_for(condition: Callable[[], bool]) -> None:
    until(condition, "the landings to queue", every=0.01)


def record_while_the_first_waits(
    db: Engine, landings: Landings, first: Landing, others: list[Landing]
) -> dict[Landing, BaseException | None]:
    """The first landing's transaction waits on a row lock while the others land."""
    outcome: dict[Landing, BaseException | None] = {}

    def record(landing: Landing) -> None:
        try:
            landings.record(landing)
            outcome[landing] = None
        except BaseException as error:
            outcome[landing] = error

    with db.connect() as blocker:
        blocker.execute(
            text("SELECT 1 FROM messages WHERE game_id = :g AND surface = 'lobby' FOR UPDATE"),
            {"g": first.game_id},
        )
        threads = [threading.Thread(target=record, args=(first,))]
        threads[0].start()
        wait_for(lambda: landings._writing)
        threads += [threading.Thread(target=record, args=(each,)) for each in others]
        for thread in threads[1:]:
            thread.start()
        wait_for(lambda: len(landings._landed) == len(others))
        blocker.commit()
    for thread in threads:
        thread.join(30)
    return outcome


def test_landings_that_arrive_together_are_recorded_in_one_transaction(
    fake: FakeSlack,
    db: Engine,
    sessions: sessionmaker[Session],
    recorded: tuple[Landings, list[int]],
) -> None:
    landings, commits = recorded
    game_id = new_game(fake, sessions)
    first = Landing(game_id, "lobby", 2, NOW)
    others = [Landing(game_id, f"dm:{n}", 1, NOW, (f"D{n}", f"2.{n}")) for n in range(19)]

    outcome = record_while_the_first_waits(db, landings, first, others)

    assert outcome == {landing: None for landing in [first, *others]}
    assert len(commits) == 2  # the first alone, then the nineteen that landed meanwhile
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
    db: Engine,
    sessions: sessionmaker[Session],
    recorded: tuple[Landings, list[int]],
) -> None:
    game_id = new_game(fake, sessions)
    first = Landing(game_id, "lobby", 2, NOW)
    landings = recorded[0]
    gone = Landing(game_id + 1_000_000, "lobby", 1, NOW, ("C0GONE", "3.0"))  # no such game
    others = [Landing(game_id, f"dm:{n}", 1, NOW, (f"D{n}", f"2.{n}")) for n in range(5)]

    outcome = record_while_the_first_waits(db, landings, first, [*others[:2], gone, *others[2:]])

    assert isinstance(outcome.pop(gone), exc.IntegrityError)
    assert outcome == {landing: None for landing in [first, *others]}
    with sessions() as session:
        surfaces = set(
            session.scalars(select(SlackMessage.surface).where(SlackMessage.game_id == game_id))
        )
    assert surfaces == {"lobby"} | {f"dm:{n}" for n in range(5)}
