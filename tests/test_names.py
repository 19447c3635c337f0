"""``Names`` against PostgreSQL and the Slack stand-in: the names *Start* deals under (kept ones
still fresh as they are, the rest asked of Slack in one go with one client and kept in one
statement), the Home tab's refresh of a stale kept name, and a failure that ends the asking."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk import WebClient
from sqlalchemy import Connection, Engine, event, insert, select

from slackapp.db.engine import make_engine, make_sessions
from slackapp.db.people import PEOPLE
from slackapp.fakeslack import FakeSlack
from slackapp.fakeslack.webapi import Answerer, ApiAnswer, ApiRequest
from slackapp.names import NAME_LOOKUP_SECONDS, NAME_REFRESH, Names, lookup_client
from tests.databases import migrated_database

NOW = datetime(2026, 12, 4, 9, tzinfo=UTC)
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
TOKEN = "xoxb-names"
TEAM = "T0NAMES"


@pytest.fixture
def engine(postgres: str) -> Iterator[Engine]:
    engine = make_engine(migrated_database(postgres, "names"))
    yield engine
    engine.dispose()


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack(SECRET, team_id=TEAM, tokens=[TOKEN]) as running:
        yield running


@pytest.fixture
def slack(fake: FakeSlack) -> WebClient:
    return lookup_client(WebClient(token=TOKEN, base_url=fake.api_url, timeout=30))


def keep(engine: Engine, user: str, name: str, fetched_at: datetime) -> None:
    with engine.begin() as connection:
        connection.execute(
            insert(PEOPLE).values(team_id=TEAM, user_id=user, name=name, fetched_at=fetched_at)
        )


def kept(engine: Engine, user: str) -> tuple[str, datetime] | None:
    with engine.connect() as connection:
        row = connection.execute(
            select(PEOPLE.c.name, PEOPLE.c.fetched_at).where(
                PEOPLE.c.team_id == TEAM, PEOPLE.c.user_id == user
            )
        ).first()
    return None if row is None else (row.name, row.fetched_at)


def asked(fake: FakeSlack) -> list[str]:
    return [str(call.params.get("user")) for call in fake.calls_to("users.info")]


def test_the_lookup_client_acts_as_the_app_with_a_short_timeout_and_no_waiting(
    slack: WebClient, fake: FakeSlack
) -> None:
    assert (slack.token, slack.base_url) == (TOKEN, fake.api_url)
    assert slack.timeout == NAME_LOOKUP_SECONDS
    assert not [h for h in slack.retry_handlers if "RateLimit" in type(h).__name__]


def test_start_asks_the_unknown_and_the_stale_in_one_go_and_keeps_them_in_one_statement(
    engine: Engine, fake: FakeSlack, slack: WebClient
) -> None:
    fresh, stale, new, nameless = "U0FRESH", "U0STALE", "U0NEW", "U0NAMELESS"
    gone = "U0GONE"  # not in the workspace (any more): Slack says so of them alone
    keep(engine, fresh, "Kept Fresh", NOW - NAME_REFRESH + timedelta(minutes=1))
    keep(engine, stale, "Kept Stale", NOW - NAME_REFRESH)
    fake.add_user(fresh, "fresh", display_name="Fresh Now")
    fake.add_user(stale, "stale", display_name="", real_name="Stale Renamed")
    fake.add_user(new, "new", display_name="Newcomer")
    fake.add_user(nameless, "nameless", display_name="", real_name="")
    keeps: list[str] = []

    def seen(_c: Connection, _cursor: object, statement: str, *_: object) -> None:
        if statement.startswith("INSERT INTO people"):
            keeps.append(statement)

    names = Names(make_sessions(engine), lambda: NOW)
    event.listen(engine, "before_cursor_execute", seen)
    try:
        dealt = names.at_start(slack, TEAM, [fresh, gone, stale, new, nameless])
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert dealt == {fresh: "Kept Fresh", stale: "Stale Renamed", new: "Newcomer"}
    assert asked(fake) == [gone, stale, new, nameless], "a fresh kept name is not asked again"
    assert len(keeps) == 1, keeps
    assert kept(engine, stale) == ("Stale Renamed", NOW)
    assert kept(engine, new) == ("Newcomer", NOW)
    assert kept(engine, fresh) == ("Kept Fresh", NOW - NAME_REFRESH + timedelta(minutes=1))
    assert kept(engine, nameless) is None, "a profile with no name gives none to keep"
    assert kept(engine, gone) is None


def test_the_first_failure_ends_the_asking_and_keeps_what_was_learned(
    engine: Engine, fake: FakeSlack, slack: WebClient
) -> None:
    first, second, third = "U0FIRST", "U0SECOND", "U0THIRD"
    for user in (first, second, third):
        fake.add_user(user, user.lower(), display_name=f"Name {user}")
    keep(engine, third, "Old Third", NOW - 2 * NAME_REFRESH)
    names = Names(make_sessions(engine), lambda: NOW)
    answered = 0

    def throttle_the_second(request: ApiRequest, answer: Answerer) -> ApiAnswer:
        nonlocal answered
        if request.method != "users.info":
            return answer(request)
        answered += 1
        if answered == 2:
            return ApiAnswer({"ok": False, "error": "ratelimited"}, 429, {"Retry-After": "30"})
        return answer(request)

    fake.api.hooks.append(throttle_the_second)
    dealt = names.at_start(slack, TEAM, [first, second, third])
    assert asked(fake) == [first, second], "no call after the first refusal, none waited out"
    assert dealt == {first: f"Name {first}", third: "Old Third"}
    assert kept(engine, first) == (f"Name {first}", NOW)
    assert kept(engine, second) is None


def test_the_home_tab_refreshes_a_stale_kept_name_only(
    engine: Engine, fake: FakeSlack, slack: WebClient
) -> None:
    fresh, stale, stranger = "U0HFRESH", "U0HSTALE", "U0HNEVER"
    for user in (fresh, stale, stranger):
        fake.add_user(user, user.lower(), display_name=f"Now {user}")
    keep(engine, fresh, "Fresh", NOW - timedelta(hours=1))
    keep(engine, stale, "Stale", NOW - NAME_REFRESH - timedelta(hours=1))
    names = Names(make_sessions(engine), lambda: NOW)
    for user in (fresh, stale, stranger):
        names.refresh(slack, TEAM, user)
    assert asked(fake) == [stale], "only a stale kept name is asked again"
    assert kept(engine, stale) == (f"Now {stale}", NOW)
    assert kept(engine, fresh) == ("Fresh", NOW - timedelta(hours=1))
    assert kept(engine, stranger) is None, "no name is kept for someone who never played"
