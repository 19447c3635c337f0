"""The kept name a step reads (``Names.name_for``) spares the look-up after it: a person whose
kept name is fresh is not asked of Slack again, nor read again, when they sit down."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from slack_sdk import WebClient
from sqlalchemy import Engine, insert

from slackapp.db.engine import make_engine, make_sessions
from slackapp.db.people import PEOPLE
from slackapp.names import NAME_REFRESH, Names
from tests.databases import migrated_database

NOW = datetime(2026, 12, 4, 9, tzinfo=UTC)
TEAM = "T0NAMES"
NOWHERE = WebClient(token="xoxb-none", base_url="http://127.0.0.1:9/")
"""Nothing answers there: a look-up that starts fails at once, and is only counted."""


@pytest.fixture
def engine(postgres: str) -> Iterator[Engine]:
    engine = make_engine(migrated_database(postgres, "names"))
    yield engine
    engine.dispose()


def names_with(engine: Engine, user: str, fetched_at: datetime) -> tuple[Names, Counting]:
    with engine.begin() as connection:
        connection.execute(
            insert(PEOPLE).values(team_id=TEAM, user_id=user, name="Kept", fetched_at=fetched_at)
        )
    return waiting_names(engine, after_seconds=3600)


def seat(engine: Engine, names: Names, user: str) -> str:
    """A step seats the person under the name it reads, then the listener says they sat down."""
    with engine.connect() as connection:
        name = names.name_for(connection, TEAM, user, "handle")
    names.sat_down(NOWHERE, TEAM, user, "handle")
    return name


def test_a_fresh_kept_name_is_neither_asked_nor_read_again(engine: Engine) -> None:
    names, lookups = names_with(engine, "U0FRESH", NOW - NAME_REFRESH + timedelta(minutes=1))
    assert seat(engine, names, "U0FRESH") == "Kept"
    names.settle()
    assert lookups.begun == 0, "no look-up at all"


def test_a_stale_kept_name_is_asked_again(engine: Engine) -> None:
    names, lookups = names_with(engine, "U0STALE", NOW - NAME_REFRESH)
    try:
        assert seat(engine, names, "U0STALE") == "Kept", "sat down under it meanwhile"
        names.settle(["U0STALE"])
        assert lookups.begun == 1, "asked again"
    finally:
        names.stop()


class Counting(ThreadPoolExecutor):
    """The look-ups' thread, counting the look-ups begun."""

    def __init__(self) -> None:
        super().__init__(1, thread_name_prefix="names")
        self.begun = 0
        self.first = threading.Event()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.begun += 1
        self.first.set()
        return super().submit(fn, *args, **kwargs)


def waiting_names(engine: Engine, after_seconds: float) -> tuple[Names, Counting]:
    names = Names(make_sessions(engine), lambda *_: None, lambda: NOW, after_seconds)
    lookups = Counting()
    names.lookups = lookups
    return names, lookups


def test_a_look_up_waits_for_the_click_to_show_and_start_begins_it_at_once(
    engine: Engine,
) -> None:
    names, lookups = waiting_names(engine, after_seconds=3600)
    try:
        assert seat(engine, names, "U0WAITS") == "handle"
        assert lookups.begun == 0, "the look-up waits"
        names.settle(["U0WAITS"])  # as Start does: it returns once the look-up is over
        assert lookups.begun == 1, "begun at once"
    finally:
        names.stop()


def test_a_waiting_look_up_begins_by_itself(engine: Engine) -> None:
    names, lookups = waiting_names(engine, after_seconds=0.01)
    try:
        seat(engine, names, "U0BEGINS")
        assert lookups.first.wait(timeout=60), "the look-up began"
        names.settle(["U0BEGINS"])  # over before the test is: it logs that Slack is away
    finally:
        names.stop()


def test_a_look_up_still_waiting_when_the_process_stops_never_begins(engine: Engine) -> None:
    names, lookups = waiting_names(engine, after_seconds=3600)
    seat(engine, names, "U0STOPS")
    names.stop()
    names.settle(["U0STOPS"])
    assert lookups.begun == 0


def test_a_look_up_that_cannot_begin_as_the_process_stops_keeps_no_start_waiting(
    engine: Engine,
) -> None:
    names, lookups = waiting_names(engine, after_seconds=3600)
    seat(engine, names, "U0LATE")
    lookups.shutdown()  # the process is stopping as Start begins the look-up
    settling = threading.Thread(target=names.settle, args=(["U0LATE"], 3600), daemon=True)
    settling.start()
    settling.join(timeout=60)
    assert not settling.is_alive(), "Start waits for a look-up that never runs"
    names.stop()
