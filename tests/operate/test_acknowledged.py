"""Two ``varulv serve`` processes on one database, the first killed with ``kill -9`` while it
holds commands and clicks it acknowledged and has not yet stepped: the survivor carries out
every one of them, once, even when Slack delivers one of them again.

The first process's steps are held where a real one would be slow: a ``/varulv`` waits on a
table the test keeps uncommitted in its channel (the one-open-table index), a *Start* waits
on Slack opening its people's DMs, and a click behind it waits in its game's lane.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, TextClause, text

from slackapp.db.engine import make_sessions
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
    send_together,
    signed_command,
)

pytestmark = pytest.mark.long(20)

ALVA, BENGT, CARIN, DORIS = PEOPLE
RETRY = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
PENDING = text("SELECT count(*) FROM inbox WHERE done_at IS NULL")
DONE = text("SELECT count(*) FROM inbox WHERE done_at IS NOT NULL")
LENGTHS = m.Lengths(120, 300, 120)


@pytest.fixture
def two_processes(postgres: str) -> Iterator[tuple[Deployment, AppProcess]]:
    with two_processes_on_one_database(postgres, "acknowledged") as both:
        yield both


RECORDED = text(
    "SELECT count(DISTINCT messages.game_id) FROM messages JOIN games ON games.id = game_id"
    " WHERE games.channel_id = ANY(:channels)"
)
UNSENT = text(
    "SELECT count(*) FROM outbox JOIN games ON games.id = game_id"
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
    commands = [
        signed_command(fake, user, channel) for user, channel in zip(people, channels, strict=True)
    ]
    waiting = Table(fake, first, db)
    with make_sessions(db)() as holding:
        holding.begin()
        for channel in held:  # the test's own tables, uncommitted: the commands wait on them
            assert (
                new_table(holding, fake.identity.team_id, channel, LENGTHS, "U0TEST", "test")
                is not None
            )
        statuses = send_together(fake, [(command, first.events_url) for command in commands])
        assert statuses == [200] * len(commands), "every /varulv acknowledged"
        # Their lobbies posted and recorded (a post the kill cut short of its record is made
        # again, a crash's one repeat: not what this test is about).
        waiting.wait(lambda: recorded(db, free) or None, "the free lobbies")
        waiting.wait(lambda: scalar(db, WAITING_TO_OPEN) or None, "the held tables to wait")
        assert scalar(db, PENDING) == len(held), "the held commands acknowledged, not stepped"
        first.kill()
        # Slack sends one of them again, to the survivor, which has it already.
        retried = commands[0]
        assert fake.send(retried, second.events_url, headers=RETRY).status_code == 200
        holding.rollback()

    survivor = Table(fake, second, db)
    survivor.wait(
        lambda: all(fake.messages(channel) for channel in channels) or None,
        "every acknowledged /varulv's lobby",
    )
    survivor.wait(lambda: scalar(db, PENDING) == 0 or None, "every request done")
    for user, channel in zip(people, channels, strict=True):
        with db.connect() as connection:
            hosts = connection.execute(
                text("SELECT host_user_id FROM games WHERE channel_id = :c"), {"c": channel}
            ).scalars()
            assert list(hosts) == [user], f"one table in {channel}, the command's"
        assert boards(fake, since, channel, LOBBY) == 1, f"one lobby in {channel}"
        assert fake.ephemerals(user, channel) == [], "nobody told of their own table"
    assert scalar(db, DONE) == len(commands), "the retry is the same request"


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
