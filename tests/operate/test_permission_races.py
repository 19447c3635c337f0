"""Two ``web`` processes on one database: a member's ``/varulv stop`` racing other people's
lobbies, and a standing table's opening, stops none of them. A stop is decided for the game
open when it asks and again on that game's locked row, so "nothing was open when I asked"
never ends a game opened since."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import cycle

import pytest
from sqlalchemy import text

from tests.e2e.conftest import AppProcess
from tests.e2e.driver import Table
from tests.operate.conftest import (
    OWNER,
    PEOPLE,
    Deployment,
    two_processes_on_one_database,
)
from tests.reliability.support import send_together, signed_command
from tests.waiting import until

pytestmark = pytest.mark.long(20)

ALVA, BENGT, CARIN, _ = PEOPLE
ROUNDS = 16
STOPS_A_ROUND = 3


@pytest.fixture(scope="module")
def two_processes(postgres: str) -> Iterator[tuple[Deployment, AppProcess]]:
    with two_processes_on_one_database(postgres, "races") as both:
        yield both


def games_in(table: Table) -> list[dict[str, object]]:
    with table.db.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT id, host_user_id, phase, ended_by FROM games "
                "WHERE channel_id = :channel ORDER BY id"
            ),
            {"channel": table.channel},
        ).mappings()
        return [dict(row) for row in rows]


def answers_to(table: Table, user: str) -> int:
    return len(table.fake.ephemerals(user, table.channel))


def until_games(table: Table, count: int) -> None:
    until(lambda: len(games_in(table)) >= count, f"{count} games in the channel")


def until_answers(table: Table, user: str, count: int) -> None:
    until(lambda: answers_to(table, user) >= count, f"{count} answers to {user}")


def test_a_members_stops_racing_other_peoples_lobbies_stop_none(
    two_processes: tuple[Deployment, AppProcess],
) -> None:
    deployment, second = two_processes
    fake, first = deployment.fake, deployment.app
    table = deployment.table()
    host, member = ALVA, BENGT
    urls = cycle([first.events_url, second.events_url])
    for round_ in range(ROUNDS):
        opened = len(games_in(table))
        answered = answers_to(table, member)
        opening = signed_command(fake, host, table.channel)
        stops = [signed_command(fake, member, table.channel, "stop") for _ in range(STOPS_A_ROUND)]
        # The lobby opens in one process while the member's stops land in both, at once.
        sends = [(opening, next(urls))] + [(stop, next(urls)) for stop in stops]
        assert send_together(fake, sends) == [200] * len(sends)
        until_games(table, opened + 1)
        until_answers(table, member, answered + STOPS_A_ROUND)
        lobby = games_in(table)[-1]
        assert lobby["host_user_id"] == host
        assert (lobby["phase"], lobby["ended_by"]) == ("lobby", None), f"round {round_}"
        table.app = first if round_ % 2 else second
        table.command(host, "stop")  # the host ends their own lobby
        until(lambda: games_in(table)[-1]["phase"] == "cancelled", "the host's stop")
    ended = [game["ended_by"] for game in games_in(table)]
    assert ended == [host] * ROUNDS, "every lobby was ended by its host, none by the member"
    told = [m.rendered_text for m in fake.ephemerals(member, table.channel)]
    assert len(told) == ROUNDS * STOPS_A_ROUND
    assert not [line for line in told if "You stopped" in line or "You cancelled" in line], told


def test_a_members_stops_racing_a_standing_tables_opening_stop_it_not(
    two_processes: tuple[Deployment, AppProcess],
) -> None:
    deployment, second = two_processes
    fake, first = deployment.fake, deployment.app
    table = deployment.table()
    owner, member = deployment.owner(), CARIN
    with deployment.db.begin() as connection:  # as an admin's schedule leaves it, now due
        connection.execute(
            text(
                "INSERT INTO standing_tables (team_id, channel_id, weekdays, minute_of_day, "
                "zone, lobby_minutes, next_at, owner_user_id) SELECT :team, :channel, 127, "
                "extract(hour FROM at) * 60 + extract(minute FROM at), 'UTC', 30, "
                "at AT TIME ZONE 'UTC', :owner "
                "FROM (SELECT date_trunc('minute', now() AT TIME ZONE 'UTC') AS at) AS opening"
            ),
            {"team": fake.identity.team_id, "channel": table.channel, "owner": owner},
        )
    urls = cycle([first.events_url, second.events_url])
    after_opening = 0
    bursts = 0
    # The member keeps stopping, in bursts landing in both processes at once, until well after
    # the lobby opened by itself.
    while after_opening < 3:
        answered = answers_to(table, member)
        stops = [signed_command(fake, member, table.channel, "stop") for _ in range(STOPS_A_ROUND)]
        sends = [(stop, next(urls)) for stop in stops]
        assert send_together(fake, sends) == [200] * len(sends)
        bursts += 1
        until_answers(table, member, answered + STOPS_A_ROUND)
        if games_in(table):
            after_opening += 1
        assert bursts < 1000, "the standing table never opened"
    (lobby,) = games_in(table)
    assert lobby["host_user_id"] == OWNER
    assert (lobby["phase"], lobby["ended_by"]) == ("lobby", None)
    told = [m.rendered_text for m in fake.ephemerals(member, table.channel)]
    assert f"Only <@{OWNER}> (the game's host" in told[-1], told[-1]
