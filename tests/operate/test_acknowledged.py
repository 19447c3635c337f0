"""Two ``varulv serve`` processes on one database, the first killed with ``kill -9`` in a
burst: every ``/varulv`` it acknowledged was committed first, and every click it acknowledged
and had not yet stepped is carried out by the survivor, once, even when Slack delivers one
again.

The first process's steps are held where a real one would be slow: a ``/varulv`` waits on a
table the test keeps uncommitted in its channel (the one-open-table index), unacknowledged, a
*Start* waits on Slack opening its people's DMs, and a click behind it waits in its game's
lane, acknowledged.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from sqlalchemy import Engine, TextClause, text

from slackapp.db.engine import make_sessions
from slackapp.fakeslack import FakeSlack, SignedRequest
from slackapp.game import machine as m
from slackapp.services.uow import new_table
from tests.databases import WAITING_TO_OPEN
from tests.e2e.conftest import AppProcess
from tests.e2e.driver import Table
from tests.operate.conftest import PEOPLE, Deployment, two_processes_on_one_database
from tests.reliability.support import (
    LOBBY,
    Held,
    boards,
    new_people,
    signed_command,
)

pytestmark = pytest.mark.long(20)

ALVA, BENGT, CARIN, DORIS = PEOPLE
RETRY = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
PENDING = text("SELECT count(*) FROM inbox WHERE done_at IS NULL")
LENGTHS = m.Lengths(120, 300, 120)
STILL_OPENING = text(
    "SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
    " AND datname = current_database() AND query ILIKE '%INSERT INTO games%'"
    " AND pid <> pg_backend_pid()"
)
"""Tables still being opened: a killed process's insert runs on until it ends."""


@pytest.fixture
def two_processes(postgres: str) -> Iterator[tuple[Deployment, AppProcess]]:
    with two_processes_on_one_database(postgres, "acknowledged") as both:
        yield both


RECORDED = text(
    "SELECT count(DISTINCT messages.stream) FROM messages JOIN games ON games.id = stream"
    " WHERE games.channel_id = ANY(:channels)"
)
UNSENT = text(
    "SELECT count(*) FROM outbox JOIN games ON games.id = stream"
    " WHERE games.channel_id = ANY(:channels) AND outbox.done_at IS NULL"
)


def recorded(db: Engine, channels: list[str]) -> bool:
    """Whether every channel's lobby is posted and its ``ts`` recorded, nothing left to send."""
    with db.connect() as connection:
        shown = connection.scalar(RECORDED, {"channels": channels})
        unsent = connection.scalar(UNSENT, {"channels": channels})
        return bool(shown == len(channels) and unsent == 0)


def scalar(db: Engine, query: TextClause) -> int:
    with db.connect() as connection:
        return int(connection.scalar(query) or 0)


def test_every_acknowledged_varulv_of_a_burst_is_stepped_once_after_a_kill(
    two_processes: tuple[Deployment, AppProcess],
) -> None:
    deployment, second = two_processes
    fake, first, db = deployment.fake, deployment.app, deployment.db
    people = new_people(fake, 12)
    channels = [f"C0ACK{n:04d}" for n in range(len(people))]
    for channel in channels:
        fake.add_channel(channel, channel.lower())
    since = len(fake.calls)
    held, free = channels[::2], channels[1::2]
    commands = {
        channel: signed_command(fake, user, channel)
        for user, channel in zip(people, channels, strict=True)
    }
    waiting = Table(fake, first, db)
    with make_sessions(db)() as holding, ThreadPoolExecutor(len(commands)) as senders:
        holding.begin()
        for channel in held:  # the test's own tables, uncommitted: the commands wait on them
            assert (
                new_table(holding, fake.identity.team_id, channel, LENGTHS, "U0TEST", "test")
                is not None
            )
        answers = {
            channel: senders.submit(answer, fake, command, first.events_url)
            for channel, command in commands.items()
        }
        waiting.wait(lambda: recorded(db, free) or None, "the free lobbies")
        waiting.wait(lambda: scalar(db, WAITING_TO_OPEN) or None, "the held tables to wait")
        assert all(answers[channel].result() == 200 for channel in free)
        assert not any(answers[channel].done() for channel in held), "held: not acknowledged"
        first.kill()
        holding.rollback()
        waiting.wait(lambda: scalar(db, STILL_OPENING) == 0 or None, "the killed inserts to end")
        unanswered = [channel for channel in held if answers[channel].result() != 200]
    assert unanswered == held, "the kill cut every held command off before its acknowledgement"
    # Slack sends one of the acknowledged ones again, as the same command, to the survivor.
    assert fake.send(commands[free[0]], second.events_url, headers=RETRY).status_code == 200

    survivor = Table(fake, second, db)
    survivor.wait(lambda: recorded(db, free) or None, "every acknowledged lobby")
    for user, channel in zip(people, channels, strict=True):
        with db.connect() as connection:
            hosts = list(
                connection.execute(
                    text("SELECT host_user_id FROM games WHERE channel_id = :c"), {"c": channel}
                ).scalars()
            )
        if channel in free:
            assert hosts == [user], f"the acknowledged /varulv in {channel} stepped, once"
        else:  # the database may finish what the killed process asked of it: once, if at all
            assert hosts in ([], [user]), f"at most one table in {channel}"
        if hosts:
            survivor.wait(functools.partial(lobby_recorded, db, channel), f"its lobby, {channel}")
        assert boards(fake, since, channel, LOBBY) == len(hosts), f"one lobby a table, {channel}"
        assert fake.ephemerals(user, channel) == [], "nobody told of their own table"
    assert scalar(db, PENDING) == 0, "a /varulv is never written down: it commits first"


def lobby_recorded(db: Engine, channel: str) -> bool | None:
    return recorded(db, [channel]) or None


def answer(fake: FakeSlack, command: SignedRequest, url: str) -> int | None:
    """The status the app answered ``command`` with, or None if it never answered."""
    try:
        return fake.send(command, url).status_code
    except requests.RequestException:
        return None


def test_a_click_waiting_in_its_lane_at_a_kill_is_carried_out(
    two_processes: tuple[Deployment, AppProcess],
) -> None:
    deployment, second = two_processes
    fake, first, db = deployment.fake, deployment.app, deployment.db
    table = deployment.table()
    lobby = table.seat_people(ALVA, [BENGT, CARIN])  # in the first process
    assert scalar(db, PENDING) == 0
    # Slack takes its time opening the people's DMs: the Start holds the game's lane.
    opening = Held(fake, "conversations.open", applied=False)
    with opening:
        table.click(ALVA, lobby, "Start")
        assert opening.reached.wait(30), "the Start asks Slack for the DMs"
        table.click(DORIS, lobby, "Join")  # waits in the lane behind the Start
        assert scalar(db, PENDING) == 2, "both clicks acknowledged, neither stepped"
        first.kill()
    table.app = second
    table.wait(lambda: scalar(db, PENDING) == 0 or None, "both clicks carried out")
    table.wait(lambda: table.game()["phase"] == "night" or None, "the night, by the survivor")
    seated = [seat["user_id"] for seat in table.seats()]
    if DORIS not in seated:  # the Start went first: she is told the game has begun
        table.wait(lambda: fake.ephemerals(DORIS) or None, "doris told")
    posted = table.posted
    table.wait(lambda: all(f"dm:{user}" in posted() for user in seated) or None, "every card")
