"""The in-process tier: the app built in this process on a database of its own, the fake
Slack answering its Web API calls, and the test as its clock (see ``harness``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine

from slackapp.fakeslack import UNLIMITED, FakeSlack
from tests.databases import migrated_database
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET
from tests.inprocess.harness import InProcessApp, tracked_answers
from tests.operate.conftest import Deployment
from tests.waiting import PATIENCE


@pytest.fixture(scope="session")
def database_url(postgres: str) -> str:
    return migrated_database(postgres, "inprocess")


@pytest.fixture(scope="session")
def db(database_url: str) -> Iterator[Engine]:
    engine = create_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def fake() -> Iterator[FakeSlack]:
    # The app here is unpaced on a clock nobody moves (pacing has tests of its own), and the
    # whole run plays in this one workspace: Slack's limits would only hold its games back.
    # A form's trigger lives as long as the tests' patience, not Slack's 3 s: a busy machine
    # may open a form late, and the expiry has a test of its own (test_fakeslack).
    with FakeSlack(
        SIGNING_SECRET, tokens=[BOT_TOKEN], limits=UNLIMITED, trigger_ttl=PATIENCE
    ) as slack:
        yield slack


@pytest.fixture(scope="session")
def app(fake: FakeSlack, database_url: str) -> Iterator[InProcessApp]:
    with (
        tracked_answers(),
        InProcessApp(fake, database_url, SIGNING_SECRET, BOT_TOKEN).serving() as served,
    ):
        yield served


@pytest.fixture(scope="session")
def single_workspace(fake: FakeSlack, app: InProcessApp, db: Engine) -> Deployment:
    """The in-process app as the one-workspace deployment the operating tests play against."""
    return Deployment(fake, app, db)  # type: ignore[arg-type]  # an app in process, no log file
