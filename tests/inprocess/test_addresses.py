"""What the screens link when the deployment names it: the support contact on `/varulv help`
and the Home tab (``VARULV_SUPPORT_URL``), the published source with the referee file
(``VARULV_SOURCE_URL``); and the referee file the app serves itself."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

import slackapp.blocks.last as last_screen
from slackapp.asgi import environ
from slackapp.blocks.addresses import NO_ADDRESSES, Addresses
from slackapp.blocks.checking import get_the_referee
from slackapp.fakeslack import FakeSlack
from slackapp.referee_file import REFEREE_PATH, referee_archive
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_home import open_home
from tests.operate.conftest import Deployment
from tests.reliability.support import new_people

SUPPORT = "mailto:varulv-help@example.org"
SOURCE = "https://code.example.org/varulv"


@pytest.fixture
def addressed(app: InProcessApp) -> Iterator[InProcessApp]:
    app.varulv.channels.addresses = Addresses(support_url=SUPPORT, source_url=SOURCE)
    try:
        yield app
    finally:
        app.varulv.channels.addresses = NO_ADDRESSES


def test_help_links_the_support_contact_when_one_is_set(
    fake: FakeSlack, addressed: InProcessApp, db: Engine
) -> None:
    (person,) = new_people(fake, 1)
    table = Table(fake, addressed, db)
    table.command(person, "help")
    shown = table.ephemeral(person, "How to play Varulv")
    assert f"<{SUPPORT}|varulv-help@example.org>" in json.dumps(shown.blocks)

    addressed.varulv.channels.addresses = NO_ADDRESSES
    table.command(person, "help")
    again = fake.ephemerals(person, table.channel)[-1]
    assert "How to play Varulv" in again.rendered_text
    assert "Write to" not in again.rendered_text and SUPPORT not in json.dumps(again.blocks)


def test_the_home_tab_links_the_support_contact_when_one_is_set(
    fake: FakeSlack, addressed: InProcessApp, single_workspace: Deployment
) -> None:
    (viewer,) = new_people(fake, 1)
    home = open_home(single_workspace, viewer)
    assert f"<{SUPPORT}|varulv-help@example.org>" in json.dumps(home["blocks"])


def test_the_referee_is_fetched_from_the_published_source_or_the_app() -> None:
    with_source = get_the_referee(source_url=SOURCE)
    # Slack reads a bare < in mrkdwn as a link's start: it is written &lt;, shown as <
    assert SOURCE in with_source and "`python3 varulv_referee.pyz &lt; game.json`" in with_source
    without = get_the_referee()
    assert f"`{REFEREE_PATH}`" in without and "python3 varulv_referee.pyz" in without
    for said in (with_source, without):
        assert "pip install" not in said, "no package the project has not published"
    record = {"seats": ["a", "b", "c"], "fingerprint": "0000"}
    assert SOURCE in last_screen.game_json(record, source_url=SOURCE)


def test_the_app_serves_the_referee_file(app: InProcessApp) -> None:
    scope = {"method": "GET", "path": REFEREE_PATH, "headers": []}
    started: list[str] = []

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        started.append(status)

    served = b"".join(app.router(environ(scope, b""), start_response))
    assert started == ["200 OK"]
    assert served == referee_archive()
    with zipfile.ZipFile(io.BytesIO(served)) as archive:
        assert "__main__.py" in archive.namelist()
