"""The inbox on PostgreSQL, by a clock the test moves: a request is done exactly when the step
that carries it commits, a second run of it rolls back, Slack's redelivery of it is the same
row, and a request whose holder died or whose claim lapsed is handed to Bolt again."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest
from slack_bolt import BoltRequest, BoltResponse
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import make_sessions, outside_transaction, transaction
from slackapp.delivery import leases
from slackapp.inbox import CLAIM_SECONDS, REPLAYED, AlreadyCarriedOut, Inbox
from tests.databases import migrated_database

COMMAND = {"command": "/varulv", "text": "", "team_id": "T1", "response_url": "https://x/r"}


class Clock:
    def __init__(self) -> None:
        self.at = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture(scope="module")
def engine(postgres: str) -> Iterator[Engine]:
    made = create_engine(migrated_database(postgres, "inbox"))
    with made.begin() as connection:
        connection.execute(text("CREATE TABLE stepped (request text)"))
    yield made
    made.dispose()


@pytest.fixture
def sessions(engine: Engine) -> sessionmaker[Session]:
    return make_sessions(engine)


def request(trigger: str, headers: dict[str, str] | None = None) -> BoltRequest:
    body = {**COMMAND, "trigger_id": trigger}
    given: dict[str, str | Sequence[str]] = {**(headers or {})}
    return BoltRequest(body=body, headers=given, mode="socket_mode")


def step(sessions: sessionmaker[Session], trigger: str) -> None:
    """A step: it writes, and commits."""
    with transaction(sessions) as session:
        session.execute(text("INSERT INTO stepped VALUES (:t)"), {"t": trigger})


def stepped(sessions: sessionmaker[Session], trigger: str) -> int:
    with outside_transaction(sessions) as session:
        found = session.scalar(
            text("SELECT count(*) FROM stepped WHERE request = :t"), {"t": trigger}
        )
        return int(found or 0)


def state(sessions: sessionmaker[Session], row: int) -> tuple[bool, bool, str]:
    """(done, body kept, holder)"""
    with outside_transaction(sessions) as session:
        done, body, holder = session.execute(
            text("SELECT done_at IS NOT NULL, body IS NOT NULL, holder FROM inbox WHERE id = :r"),
            {"r": row},
        ).one()
        return bool(done), bool(body), str(holder)


def test_a_step_marks_its_request_done_in_its_own_commit_and_a_second_run_rolls_back(
    sessions: sessionmaker[Session],
) -> None:
    inbox = Inbox(sessions, Clock())
    row = inbox.record(request("1.step"))
    assert row is not None
    assert state(sessions, row) == (False, True, inbox.holder)
    with inbox.carrying(row):
        with transaction(sessions) as session:  # a read's commit is not the step
            session.execute(text("SELECT count(*) FROM stepped"))
        assert state(sessions, row)[0] is False
        step(sessions, "1.step")
        assert state(sessions, row) == (True, False, inbox.holder), "done with the step, body gone"
        step(sessions, "1.step")  # a later commit of the same work is its own
    # Another process carrying out the same request (it thought this one dead) cannot commit.
    other = Inbox(sessions, Clock())
    with pytest.raises(AlreadyCarriedOut), other.carrying(row):
        step(sessions, "1.step")
    assert stepped(sessions, "1.step") == 2, "the second run's step rolled back"


def test_a_work_that_commits_nothing_is_done_when_it_returns(
    sessions: sessionmaker[Session],
) -> None:
    inbox = Inbox(sessions, Clock())
    row = inbox.record(request("2.help"))
    assert row is not None
    with inbox.carrying(row):
        with outside_transaction(sessions) as session:
            session.execute(text("SELECT 1"))
        assert state(sessions, row)[0] is False
    assert state(sessions, row)[0] is True


def test_slacks_redelivery_of_a_request_is_the_same_row(sessions: sessionmaker[Session]) -> None:
    inbox = Inbox(sessions, Clock())
    assert inbox.record(request("3.twice")) is not None
    retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    assert inbox.record(request("3.twice", retry)) is None, "pending: the first is carried out"
    assert Inbox(sessions, Clock()).record(request("3.twice", retry)) is None, "in any process"


def dead_holder() -> str:
    """A holder of this pid space whose process has exited."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return f"{leases.pid_space()}:{gone.stdout.strip()}:deadbeef"


class Bolt:
    """What the sweep hands requests to: Bolt's dispatch, here writing them down."""

    def __init__(self) -> None:
        self.requests: list[BoltRequest] = []

    def dispatch(self, request: BoltRequest) -> BoltResponse:
        self.requests.append(request)
        return BoltResponse(status=200, body="")


def test_a_dead_holders_request_is_taken_over_at_once_and_handed_to_bolt_again(
    sessions: sessionmaker[Session],
) -> None:
    clock = Clock()
    dead = Inbox(sessions, clock, holder=dead_holder())
    timestamp = {"X-Slack-Request-Timestamp": "1764900000"}
    row = dead.record(request("4.dead", timestamp))
    assert row is not None
    survivor, bolt = Inbox(sessions, clock), Bolt()
    survivor.start(bolt.dispatch)
    survivor.stop()  # swept by hand below, not by its thread
    taken = survivor.sweep()
    assert taken >= 1
    (replayed,) = [each for each in bolt.requests if each.context.get(REPLAYED) == row]
    assert replayed.body["trigger_id"] == "4.dead"
    assert replayed.headers["x-slack-request-timestamp"] == ["1764900000"]
    assert state(sessions, row)[2] == survivor.holder
    assert survivor.sweep() == 0, "held by the survivor now, renewed"


def test_another_hosts_request_is_taken_over_once_its_claim_lapses(
    sessions: sessionmaker[Session],
) -> None:
    clock = Clock()
    elsewhere = Inbox(sessions, clock, holder="another-host~0123456789ab:4242:cafe")
    row = elsewhere.record(request("5.elsewhere"))
    assert row is not None
    survivor, bolt = Inbox(sessions, clock), Bolt()
    survivor.start(bolt.dispatch)
    survivor.stop()
    survivor.sweep()
    assert not [each for each in bolt.requests if each.context.get(REPLAYED) == row], "alive"
    clock.at += timedelta(seconds=CLAIM_SECONDS + 0.1)
    survivor.sweep()
    assert [each for each in bolt.requests if each.context.get(REPLAYED) == row], "lapsed"


def test_a_request_still_being_carried_out_keeps_its_claim_however_long_it_takes(
    sessions: sessionmaker[Session],
) -> None:
    """The sweep renews the claims of the requests this process holds: one that waits in its
    game's lane, or runs long, is never taken over by another process meanwhile."""
    clock = Clock()
    busy = Inbox(sessions, clock)
    row = busy.record(request("6.long"))
    assert row is not None
    other, bolt = Inbox(sessions, clock, holder="another-host~0123456789ab:4343:beef"), Bolt()
    other.start(bolt.dispatch)
    other.stop()  # swept by hand below, not by its thread
    for _ in range(3):  # a long wait in the lane, renewed every sweep
        clock.at += timedelta(seconds=CLAIM_SECONDS * 0.75)
        busy.sweep()
        other.sweep()
    assert not [each for each in bolt.requests if each.context.get(REPLAYED) == row]
    assert state(sessions, row) == (False, True, busy.holder)
