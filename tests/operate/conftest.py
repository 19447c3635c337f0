"""Fixtures for installing and operating Varulv: real ``varulv serve`` processes against the fake
Slack, each kind of deployment on its own PostgreSQL database so their timers never meet."""

from __future__ import annotations

import contextlib
import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Unpack

import pytest
import requests
from sqlalchemy import Engine, create_engine

from slackapp.fakeslack import FakeSlack
from slackapp.serving import free_port
from tests.databases import fresh_database as fresh_database
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, AppProcess, PhaseLengths, start_app
from tests.e2e.driver import Table
from tests.waiting import PATIENCE

PEOPLE = {"U0ALVA": "alva", "U0BENGT": "bengt", "U0CARIN": "carin", "U0DORIS": "doris"}
OWNER = "U0OWNER"
"""The workspace's owner: may change any channel's table."""
INSTALL_LINK = re.compile(r'href="(https://slack\.com/oauth/v2/authorize\?[^"]+)"')


@dataclass
class Deployment:
    """One app process (or several) on one database, talking to one fake workspace."""

    fake: FakeSlack
    app: AppProcess
    db: Engine
    metrics_url: str | None = None
    """Where ``/metrics`` answers, when the deployment serves it (a port of its own)."""

    def table(self) -> Table:
        for user_id, name in PEOPLE.items():
            self.fake.add_user(user_id, name)
        return Table(self.fake, self.app, self.db)

    def owner(self) -> str:
        """The workspace's owner, as users.info says."""
        self.fake.set_role(OWNER, "owner")
        return OWNER

    def log_lines(self, app: AppProcess | None = None) -> list[dict[str, Any]]:
        """The app's log, each line decoded; a line that is not one JSON object fails."""
        lines = (app or self.app).log.read_text().splitlines()
        decoded = []
        for number, line in enumerate(lines, start=1):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                raise AssertionError(f"log line {number} is not JSON: {line!r}") from None
            assert isinstance(entry, dict), f"log line {number} is not an object: {line!r}"
            decoded.append(entry)
        return decoded


@pytest.fixture(scope="session")
def single_workspace(postgres: str) -> Iterator[Deployment]:
    """The app with one bot token, as a workspace's own deployment runs it."""
    with token_deployment(postgres, "single") as deployment:
        yield deployment


@contextlib.contextmanager
def token_deployment(postgres: str, purpose: str) -> Iterator[Deployment]:
    """The app with one bot token, on a database of its own, ``/metrics`` on a port of its
    own."""
    url = fresh_database(postgres, purpose)
    metrics_port = free_port()
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN], trigger_ttl=PATIENCE) as fake:
        app = start_app(fake, url, env={"VARULV_METRICS_PORT": str(metrics_port)})
        engine = create_engine(url)
        try:
            yield Deployment(fake, app, engine, f"http://127.0.0.1:{metrics_port}/metrics")
        finally:
            app.stop()
            engine.dispose()


@contextlib.contextmanager
def two_processes_on_one_database(
    postgres: str, purpose: str, late_landing: float | None = None
) -> Iterator[tuple[Deployment, AppProcess]]:
    """Two apps with one bot token on one database of their own: the first as a deployment
    (the stand-in, the app, the database), and the second beside it."""
    url = fresh_database(postgres, purpose)
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as fake:
        first = start_app(fake, url, late_landing=late_landing)
        second = start_app(fake, url, late_landing=late_landing)
        engine = create_engine(url)
        try:
            yield Deployment(fake, first, engine), second
        finally:
            first.stop()
            second.stop()
            engine.dispose()


@contextlib.contextmanager
def oauth_deployment(
    postgres: str,
    purpose: str,
    team: str,
    token_lifetime: int | None = None,
    enterprise_id: str | None = None,
    org_wide: bool = False,
    env: dict[str, str] | None = None,
    **lengths: Unpack[PhaseLengths],
) -> Iterator[Deployment]:
    """The app with OAuth credentials and no bot token, for the fake workspace ``team``, which
    starts with no valid token at all; ``token_lifetime``: the app has token rotation on, and
    its bot tokens expire that many seconds after Slack issues them; ``enterprise_id``: the
    workspace is in that Enterprise Grid organisation (``org_wide``: and the app is installed
    on all of it)."""
    url = fresh_database(postgres, purpose)
    with FakeSlack(
        SIGNING_SECRET,
        team_id=team,
        tokens=(),
        token_lifetime=token_lifetime,
        enterprise_id=enterprise_id,
        org_wide=org_wide,
        trigger_ttl=PATIENCE,  # a busy machine may open a form late
    ) as fake:
        port = free_port()
        app_env = {
            "SLACK_BOT_TOKEN": "",
            "SLACK_CLIENT_ID": fake.grants.client_id,
            "SLACK_CLIENT_SECRET": fake.grants.client_secret,
            "SLACK_REDIRECT_URI": f"http://127.0.0.1:{port}/slack/oauth_redirect",
            **(env or {}),
        }
        phases: PhaseLengths = {"night": 120, "vote": 120, **lengths}
        app = start_app(fake, url, env=app_env, port=port, **phases)
        engine = create_engine(url)
        try:
            yield Deployment(fake, app, engine)
        finally:
            app.stop()
            engine.dispose()


def install(deployment: Deployment) -> requests.Response:
    """An admin opens /slack/install, presses "Add to Slack", then "Allow" on Slack's page."""
    page = requests.get(f"{deployment.app.url}/slack/install", timeout=10)
    assert page.status_code == 200, page.text
    found = INSTALL_LINK.search(page.text)
    assert found, page.text
    authorize_url = html.unescape(found.group(1))
    assert "scope=chat:write,commands,im:write,users:read" in authorize_url
    back_to_app = deployment.fake.approve_install(authorize_url, user_id="UADMIN")
    # The state cookie is "Secure"; a browser sends it to a local http address, requests won't.
    state_cookie = page.headers["Set-Cookie"].split(";")[0]
    return requests.get(back_to_app, headers={"Cookie": state_cookie}, timeout=10)
