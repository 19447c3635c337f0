"""Many workspaces: a request is authorized from the installation store, never by asking Slack,
so a slow or failing ``auth.test`` neither delays an acknowledgement nor makes Varulv claim it is
not installed; a workspace that did uninstall it is still told so."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from slackapp.fakeslack.webapi import ApiAnswer, ApiRequest
from tests.operate.conftest import PEOPLE, Deployment, install, oauth_deployment
from tests.reliability.support import signed_command

TEAM = "T0AUTHZ"
ALVA, BENGT, _, _ = PEOPLE


@pytest.fixture(scope="module")
def installed(postgres: str) -> Iterator[Deployment]:
    with oauth_deployment(postgres, "authorize", TEAM) as deployment:
        assert install(deployment).status_code == 200
        yield deployment


@pytest.fixture
def auth_test_broken(installed: Deployment) -> Iterator[list[float]]:
    """``auth.test`` answers nothing until the test is over, then an HTTP 500: longer than
    Slack's three seconds, as a struggling Slack can be. The times it was called."""
    fake = installed.fake
    original = fake.api.handle
    called: list[float] = []
    over = threading.Event()

    def handle(request: ApiRequest) -> ApiAnswer:
        if request.method != "auth.test":
            return original(request)
        called.append(time.monotonic())
        over.wait(60)  # held until the test ends (a bound only for a test that hangs)
        return ApiAnswer({"ok": False, "error": "internal_error"}, status=500)

    fake.api.handle = handle  # type: ignore[method-assign]  # replaced for the test, put back after
    try:
        yield called
    finally:
        over.set()
        fake.api.handle = original  # type: ignore[method-assign]  # as it was


def test_a_command_is_acknowledged_and_answered_while_auth_test_fails(
    installed: Deployment, auth_test_broken: list[float]
) -> None:
    table = installed.table()
    help_command = signed_command(installed.fake, ALVA, table.channel, "help")
    # Answered (in its acknowledgement) long before auth.test is, at the test's end.
    answer = installed.fake.send(help_command, installed.app.events_url)
    assert answer.status_code == 200
    table.ephemeral(ALVA, "least comfortable arguing out loud")  # help, with this channel's lengths
    table.command(BENGT)  # a step that acts with the workspace's token, after the ack
    table.lobby()
    assert auth_test_broken == [], "no request waited for auth.test"
    assert not [
        fake_message
        for fake_message in installed.fake.ephemerals(BENGT)
        if "isn't installed" in fake_message.rendered_text
    ]


def test_a_workspace_that_uninstalled_varulv_is_told_so(
    installed: Deployment, auth_test_broken: list[float]
) -> None:
    table = installed.table()  # Slack's events go to this deployment, alone or after another
    assert installed.fake.app_uninstalled().status_code == 200  # acknowledged, then handled

    def forgotten() -> bool:
        with installed.db.connect() as connection:
            left: int = connection.execute(text("SELECT count(*) FROM slack_bots")).scalar_one()
        return left == 0

    table.wait(lambda: forgotten() or None, "the installation forgotten")
    table.command(ALVA)
    told = table.ephemeral(ALVA, "isn't installed in this workspace").rendered_text
    install_page = f"{installed.app.url}/slack/install"
    assert told == (
        f"Varulv isn't installed in this workspace. A workspace admin can add it: {install_page}"
    ), "where to add it again, as the reinstall answer says"
