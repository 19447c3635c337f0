"""Two app processes on one database, clicks at the same instant, and Slack's redeliveries:
every phase change happens once, every ballot counts, and one command opens one table."""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import Engine, text

from slackapp.fakeslack import FakeSlack, SignedRequest
from slackapp.game import Card
from tests.e2e.conftest import AppProcess, start_app
from tests.e2e.driver import Table
from tests.reliability.support import (
    DAY,
    LOBBY,
    REVEAL,
    VOTE,
    assert_nothing_posted_twice,
    ballot_button,
    boards,
    conversations,
    journal,
    new_people,
    send_together,
    signed_click,
    signed_command,
)

pytestmark = pytest.mark.long(13)

EVERY_PHASE_ONCE = {"lobby": 1, "night": 1, "day": 1, "vote": 1, "over": 1}
RETRY = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}


@pytest.fixture(scope="module")
def pair(fake: FakeSlack, database_url: str) -> Iterator[tuple[AppProcess, AppProcess]]:
    """Two ``varulv serve`` processes on the same database (phases end by clicks)."""
    first = start_app(fake, database_url)
    second = start_app(fake, database_url)
    try:
        yield first, second
    finally:
        first.stop()
        second.stop()


class EitherProcess(Table):
    """A table whose commands and clicks go to the two processes in turn."""

    def __init__(self, fake: FakeSlack, apps: tuple[AppProcess, AppProcess], db: Engine) -> None:
        super().__init__(fake, apps[0], db)
        self._turns = itertools.cycle(apps)

    @property  # type: ignore[override]  # Table's plain attribute, here the next process
    def app(self) -> AppProcess:
        return next(self._turns)

    @app.setter
    def app(self, value: AppProcess) -> None:
        pass  # set by Table.__init__; the turns decide


def logged_once(table: Table, apps: list[AppProcess]) -> Counter[str]:
    """How often the processes together logged each phase change of the game, once every one
    is logged once. A line is written just after its commit, which others may already see:
    wait for it a while (a busy machine may take a few seconds)."""
    with contextlib.suppress(AssertionError):
        table.wait(
            lambda: journal(apps, table.game_id()) == EVERY_PHASE_ONCE or None,
            "each phase change in the log",
        )
    return journal(apps, table.game_id())


def delivered_at_once(fake: FakeSlack, sends: list[tuple[SignedRequest, str]]) -> None:
    assert send_together(fake, sends) == [200] * len(sends)


def voting_table(
    fake: FakeSlack, pair: tuple[AppProcess, AppProcess], db: Engine, seats: int
) -> tuple[Table, list[str]]:
    people = new_people(fake, seats)
    table = EitherProcess(fake, pair, db)
    table.seat_people(people[0], people[1:])
    table.start(people[0])
    table.play_night(people)
    table.wait_for_phase("day")
    table.heard_enough(people[: seats // 2 + 1])
    table.wait_for_phase("vote")
    return table, people


def test_twenty_ballots_in_the_same_instant_all_count_and_reveal_once(
    fake: FakeSlack, pair: tuple[AppProcess, AppProcess], db: Engine
) -> None:
    tables = [voting_table(fake, pair, db, seats=10) for _ in range(2)]
    since = len(fake.calls)
    sends: list[tuple[SignedRequest, str]] = []
    for table, people in tables:
        for index, user in enumerate(people):
            target = people[(index + 1) % len(people)]
            own = table.ballot(user)
            ballot = signed_click(fake, user, own, ballot_button(own, target))
            sends.append((ballot, pair[len(sends) % 2].events_url))

    delivered_at_once(fake, sends)

    for table, people in tables:
        table.wait_for_phase("over")
        outcome = table.stored_outcome_matches_referee()
        assert outcome["tally"] == {user: 1 for user in people}, "every ballot counted, once"
        assert boards(fake, since, table.channel, REVEAL) == 1
        for user in people:
            table.ephemeral(user, "Your ballot")
        last = [u for u in people if "reveal is up" in fake.ephemerals(u)[-1].rendered_text]
        assert len(last) == 1, "exactly one ballot was the last one"
        assert logged_once(table, list(pair)) == EVERY_PHASE_ONCE


def test_phase_ending_clicks_delivered_to_both_processes_at_once_change_the_phase_once(
    fake: FakeSlack, pair: tuple[AppProcess, AppProcess], db: Engine
) -> None:
    first, second = pair
    anna, bo, cia = people = new_people(fake, 3)
    table = EitherProcess(fake, pair, db)
    since = len(fake.calls)
    table.seat_people(anna, [bo, cia])
    table.arrange_deal(lambda dealt, center: dealt[cia] is not Card.TROUBLEMAKER)  # one click
    table.start(anna)
    table.play_night([anna, bo])

    dm = table.dm(cia)
    last_choice = signed_click(fake, cia, dm, dm.buttons()[0].action_id)
    delivered_at_once(fake, [(last_choice, first.events_url), (last_choice, second.events_url)])
    table.wait_for_phase("day")

    board = table.board("Heard enough")
    heard = [
        signed_click(fake, u, board, board.button("Heard enough").action_id) for u in (anna, bo)
    ]
    delivered_at_once(fake, [(heard[0], first.events_url), (heard[1], second.events_url)])
    table.wait_for_phase("vote")

    table.vote({anna: "Nobody"})
    own = {user: table.ballot(user) for user in (bo, cia)}
    last_two = [signed_click(fake, u, own[u], ballot_button(own[u], "nobody")) for u in (bo, cia)]
    delivered_at_once(fake, [(last_two[0], first.events_url), (last_two[1], second.events_url)])
    table.wait_for_phase("over")

    outcome = table.stored_outcome_matches_referee()
    assert outcome["tally"] == {"nobody": 3}
    for message in (LOBBY, DAY, VOTE, REVEAL):
        assert boards(fake, since, table.channel, message) == 1
    assert_nothing_posted_twice(fake, since, conversations(fake, table, people))
    assert logged_once(table, list(pair)) == EVERY_PHASE_ONCE


def test_deadlines_and_clicks_race_in_two_processes(
    fake: FakeSlack, database_url: str, db: Engine, pair: tuple[AppProcess, AppProcess]
) -> None:
    """Three games at once on two processes with two-second phases: people click on either
    process while both processes' timers end phases; each phase still changes exactly once.
    The pair of this module's other tests serves the same database, and its timers race for
    these deadlines too: the journal is every process's."""
    apps: tuple[AppProcess, ...] = (start_app(fake, database_url, night=2, day=2, vote=2),)
    apps += (start_app(fake, database_url, night=2, day=2, vote=2),)
    try:
        since = len(fake.calls)

        def play(number: int) -> tuple[Table, list[str]]:
            people = new_people(fake, 3)
            table = EitherProcess(fake, (apps[number % 2], apps[1 - number % 2]), db)
            table.seat_people(people[0], people[1:])
            table.start(people[0])
            for user in people[: number + 1]:  # some choose before dawn, some are too late
                dm = table.dm(user)
                if dm.buttons() and table.game()["phase"] == "night":
                    fake.click(user, dm, dm.buttons()[0].action_id)
            table.wait_for_phase("over")
            return table, people

        with ThreadPoolExecutor(3) as pool:
            played = list(pool.map(play, range(3)))

        for table, people in played:
            table.stored_outcome_matches_referee()
            for message in (LOBBY, DAY, VOTE, REVEAL):
                assert boards(fake, since, table.channel, message) == 1, message
            assert_nothing_posted_twice(fake, since, conversations(fake, table, people))
            assert logged_once(table, [*apps, *pair]) == EVERY_PHASE_ONCE
    finally:
        for app in apps:
            app.stop()


def test_a_redelivered_slash_command_opens_one_table_and_says_nothing_twice(
    fake: FakeSlack, pair: tuple[AppProcess, AppProcess], db: Engine
) -> None:
    anna, bo = new_people(fake, 2)
    table = Table(fake, pair[0], db)
    since = len(fake.calls)
    command = signed_command(fake, anna, table.channel)

    assert fake.send(command, pair[0].events_url).status_code == 200
    table.lobby()
    # Slack saw no answer in time and sends the very same command again, here to the other process.
    assert fake.send(command, pair[1].events_url, headers=RETRY).status_code == 200
    # And once more, racing a third delivery on both processes at once.
    assert send_together(fake, [(command, app.events_url) for app in pair], RETRY) == [200, 200]

    table.click(bo, table.lobby(), "Join")  # anything the retries said would have come first
    table.wait(lambda: len(table.seats()) == 2 or None, "bo seated")
    with db.connect() as connection:
        games = connection.execute(
            text("SELECT count(*) FROM games WHERE channel_id = :c"), {"c": table.channel}
        ).scalar_one()
    assert games == 1
    assert boards(fake, since, table.channel, LOBBY) == 1
    assert fake.ephemerals(anna, table.channel) == [], "the retries told anna nothing"


def test_a_redelivery_whose_first_delivery_was_lost_opens_the_table(
    fake: FakeSlack, pair: tuple[AppProcess, AppProcess], db: Engine
) -> None:
    (anna,) = new_people(fake, 1)
    table = Table(fake, pair[0], db)
    since = len(fake.calls)
    command = signed_command(fake, anna, table.channel)
    # The first delivery never reached the app; only Slack's retry does.
    assert fake.send(command, pair[1].events_url, headers=RETRY).status_code == 200
    table.lobby()
    assert boards(fake, since, table.channel, LOBBY) == 1


def test_two_people_typing_the_command_at_once_open_one_table(
    fake: FakeSlack, pair: tuple[AppProcess, AppProcess], db: Engine
) -> None:
    anna, bo = new_people(fake, 2)
    table = Table(fake, pair[0], db)
    since = len(fake.calls)
    commands = [signed_command(fake, u, table.channel) for u in (anna, bo)]
    assert send_together(
        fake, [(commands[0], pair[0].events_url), (commands[1], pair[1].events_url)]
    ) == [200, 200]
    table.lobby()
    answered = table.wait(
        lambda: [u for u in (anna, bo) if fake.ephemerals(u, table.channel)] or None,
        "an answer to the command that came second",
    )
    assert len(answered) == 1
    assert "already" in fake.ephemerals(answered[0], table.channel)[0].rendered_text
    assert boards(fake, since, table.channel, LOBBY) == 1
