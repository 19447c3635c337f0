"""Slack throttling the app, and PostgreSQL going away under it: the game is unharmed, people
are told clearly when something could not be done, and the app recovers on its own."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from sqlalchemy import Engine, create_engine

from slackapp.db.engine import sqlalchemy_url, temporary_postgres
from slackapp.fakeslack import FakeSlack
from slackapp.listeners.ack import SLACK_UNAVAILABLE, UNAVAILABLE
from tests import faults
from tests.e2e.conftest import AppProcess, start_app
from tests.e2e.driver import Table
from tests.reliability.support import (
    DAY,
    assert_nothing_posted_twice,
    boards,
    conversations,
    new_people,
    running_app,
)

pytestmark = pytest.mark.long(16)


def throttled(fake: FakeSlack, since: int, method: str) -> int:
    return sum(call.status == 429 for call in fake.calls[since:] if call.method == method)


def test_slack_throttling_is_waited_out_and_the_game_goes_on(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    anna, bo, cia = people = new_people(fake, 3)
    with running_app(fake, database_url) as app:
        table = Table(fake, app, db)
        since = len(fake.calls)
        table.seat_people(anna, [bo, cia])
        faults.rate_limit(fake, "conversations.open", times=1, retry_after=1)
        table.start(anna)
        table.play_night([anna, bo])
        faults.rate_limit(fake, "chat.postMessage", times=2, retry_after=1)  # the day board's post
        table.play_night([cia])
        table.wait_for_phase("day")

        assert throttled(fake, since, "conversations.open") == 1
        assert throttled(fake, since, "chat.postMessage") == 2
        assert boards(fake, since, table.channel, DAY) == 1, "posted once, after the waits"
        table.heard_enough([anna, bo])
        table.vote({anna: "Nobody", bo: "Nobody", cia: "Nobody"})
        table.wait_for_phase("over")
        table.stored_outcome_matches_referee()
        assert_nothing_posted_twice(fake, since, conversations(fake, table, people))


def test_throttling_beyond_the_retries_fails_the_step_clearly_and_harms_nothing(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    anna, bo, cia = new_people(fake, 3)
    with running_app(fake, database_url) as app:
        table = Table(fake, app, db)
        table.seat_people(anna, [bo, cia])
        faults.rate_limit(fake, "conversations.open", times=2, retry_after=0)  # a try, a retry
        table.click(anna, table.lobby(), "Start")

        table.ephemeral(anna, SLACK_UNAVAILABLE)
        assert table.game()["phase"] == "lobby", "nothing changed"
        assert fake.find_message(table.channel, "can't send a private message") is None, (
            "Slack's throttling is not blamed on a person's settings"
        )
        table.start(anna)  # Slack takes calls again: the same table starts
        table.play_night([anna, bo, cia])
        table.wait_for_phase("day")


# -- PostgreSQL going away ----------------------------------------------------------------------


class Postgres:
    """A PostgreSQL server of this test's own, to stop and start under a running app."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.url = str(server.get_uri())

    def stop(self) -> None:
        self.server.stop()  # pg_ctl stop -w, fast mode: open connections are cut

    def start(self) -> None:
        self.server.ensure_postgres_running()  # same folder, same socket: the same URL


@pytest.fixture
def own_postgres() -> Iterator[Postgres]:
    with temporary_postgres("varulv-restart-pg-") as server:
        yield Postgres(server)


def test_postgres_restarting_under_the_app_costs_only_the_requests_in_that_moment(
    fake: FakeSlack, own_postgres: Postgres
) -> None:
    anna, bo, cia = new_people(fake, 3)
    app = start_app(fake, own_postgres.url)
    db = create_engine(sqlalchemy_url(own_postgres.url), pool_pre_ping=True)
    try:
        table = Table(fake, app, db)
        table.seat_people(anna, [bo, cia])
        table.start(anna)
        table.play_night([anna])
        dm = table.dm(bo)

        own_postgres.stop()
        table.click(bo, dm, dm.buttons()[0].text)  # acknowledged, but it cannot be stored
        table.ephemeral(bo, UNAVAILABLE)
        table.command(cia, "score")
        table.ephemeral(cia, UNAVAILABLE)
        assert requests.get(f"{app.url}/readyz", timeout=5).status_code == 503
        assert requests.get(f"{app.url}/healthz", timeout=5).status_code == 200, "alive"
        assert fake.message(dm.channel, dm.ts).buttons(), "bo may still make the choice"

        own_postgres.start()
        table.wait(lambda: ready(app) or None, "the app to reach the database again")
        assert app.process.poll() is None, "the same process, never restarted"
        table.play_night([bo, cia])
        table.wait_for_phase("day")
        table.heard_enough([anna, bo])
        table.vote({anna: "Nobody", bo: "Nobody", cia: "Nobody"})
        table.wait_for_phase("over")
        table.stored_outcome_matches_referee()

        # One ERROR per process when the outage starts, one line when it ends, nothing else.
        errors = table.wait(lambda: _outage_logged(app.log.read_text()), "the outage's end logged")
        assert all(count == 1 for count in errors.values()), errors
    finally:
        app.stop()
        db.dispose()


def ready(app: AppProcess) -> bool:
    """Whether ``/readyz`` says the app reaches its database; a slow answer is a "not yet"."""
    try:
        return requests.get(f"{app.url}/readyz", timeout=5).status_code == 200
    except requests.Timeout:
        return False


def _outage_logged(log: str) -> Counter[int] | None:
    """The ERROR lines of each process, once every process that logged one has logged the
    database's return; every ERROR line must be the outage's start."""
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    errors = [line for line in lines if line["level"] in ("ERROR", "CRITICAL")]
    for line in errors:
        assert line["message"].startswith("the database is unreachable"), line
        assert "error" not in line, "no traceback"
    back = {line["pid"] for line in lines if "database is reachable again" in line["message"]}
    by_process = Counter(line["pid"] for line in errors)
    return by_process if by_process and set(by_process) <= back else None


def test_a_channel_that_stops_taking_posts_ends_its_game_and_the_host_is_told_why(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    anna, bo, cia = new_people(fake, 3)
    with running_app(fake, database_url) as app:
        table = Table(fake, app, db)
        table.seat_people(anna, [bo, cia])
        table.start(anna)
        faults.set_unreachable(fake, table.channel, "not_in_channel")  # the bot was removed from it
        dm = table.dm(bo)
        table.click(bo, dm, dm.buttons()[-1].text)  # the night board's redraw fails for good
        table.wait_for_phase("stopped")
        told = table.wait(
            lambda: next(
                (m for m in fake.dm_messages(anna) if "no longer post" in m.rendered_text), None
            ),
            "the host told privately",
        )
        assert "not_in_channel" in told.rendered_text
        table.wait(  # the others' night messages say so
            lambda: (
                any("this game has ended" in m.rendered_text for m in fake.dm_messages(cia)) or None
            ),
            "cia's night message to end",
        )
        assert table.game()["outcome"] is None, "no one scores"

        faults.set_unreachable(fake, table.channel, "")  # invited back: the channel is free again
        table.command(anna)
        table.wait(lambda: table.game()["phase"] == "lobby" or None, "a new table")
        assert "Join" in str(table.lobby().blocks)
