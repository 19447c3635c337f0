"""A refresh token Slack refuses for good (spent by a refresh whose answer was lost): tried
once by one process, never again by it nor by any other on the same database; and once the old
token has expired, the workspace is as good as uninstalled for the deliverer, and a person's
click is answered that Varulv must be reinstalled, through the click's ``response_url``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from slack_bolt import BoltContext, BoltResponse
from slack_sdk import WebClient
from slack_sdk.oauth.installation_store import Installation
from slack_sdk.oauth.token_rotation import TokenRotator
from sqlalchemy import Engine, create_engine, text

from slackapp.authorize import REINSTALL, Refresher, answer_reinstall, from_store
from slackapp.db.installations import installation_store
from slackapp.delivery.slack import InstalledClients, NotInstalled, WorkspaceId
from slackapp.fakeslack import FakeSlack
from slackapp.fakeslack.models import Call
from tests.databases import migrated_database

TEAM = "T0REFUSED"
INSTALL_URL = "https://varulv.example/slack/install"


@pytest.fixture
def db(postgres: str) -> Iterator[Engine]:
    engine = create_engine(migrated_database(postgres, "refused"))
    yield engine
    engine.dispose()


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack("refused-secret", team_id=TEAM, tokens=(), token_lifetime=3600) as slack:
        slack.add_user("UADMIN", "admin")  # who installed Varulv
        yield slack


def installed_with_a_spent_refresh_token(fake: FakeSlack, expires_at: float) -> Installation:
    """What the store holds after a crash lost a refresh's answer: Slack took this refresh
    token (it knows it no more) and its bot token lives until ``expires_at``."""
    token = fake.grants.mint_bot_token(TEAM)
    spent = fake.grants.mint_refresh_token(TEAM)
    assert fake.grants.redeem_refresh_token(spent) == TEAM  # the lost refresh
    return Installation(
        app_id="A0001",
        team_id=TEAM,
        user_id="UADMIN",
        bot_token=token,
        bot_id="B0001",
        bot_user_id="UBOT",
        bot_scopes="chat:write",
        bot_refresh_token=spent,
        bot_token_expires_at=int(expires_at),
    )


def refresher(fake: FakeSlack, db: Engine) -> Refresher:
    """One process's refresher, as ``slackapp.app.build`` makes it."""
    store = installation_store(db, fake.grants.client_id)
    client = WebClient(base_url=fake.api_url)
    rotator = TokenRotator(
        client_id=fake.grants.client_id, client_secret=fake.grants.client_secret, client=client
    )
    return Refresher(store, rotator, fake.api_url, INSTALL_URL)


def refreshes(calls: list[Call]) -> list[Call]:
    return [call for call in calls if call.params.get("grant_type") == "refresh_token"]


def test_a_refused_refresh_token_is_tried_once_by_one_process_only(
    fake: FakeSlack, db: Engine
) -> None:
    first, second = refresher(fake, db), refresher(fake, db)
    first.store.save(installed_with_a_spent_refresh_token(fake, time.time() + 1800))
    first_clients = InstalledClients(first.store, fake.api_url, refresher=first)
    second_clients = InstalledClients(second.store, fake.api_url, refresher=second)
    workspace = WorkspaceId(TEAM)

    for _ in range(3):  # the old token still works: the deliverer goes on with it
        assert first_clients(workspace).auth_test()["ok"]
        assert second_clients(workspace).auth_test()["ok"]
    (tried,) = refreshes(fake.calls)
    assert tried.response["error"] == "invalid_refresh_token"
    with db.connect() as connection:
        marked = connection.execute(text("SELECT team_id, error FROM reinstalls_needed")).all()
    assert [tuple(row) for row in marked] == [(TEAM, "invalid_refresh_token")]
    told = json.dumps(fake.home_view("UADMIN"))
    assert "Varulv must be reinstalled here" in told and INSTALL_URL in told, "the installer"


def test_once_the_old_token_expired_nothing_is_sent_and_a_click_is_answered(
    fake: FakeSlack, db: Engine
) -> None:
    one = refresher(fake, db)
    one.store.save(installed_with_a_spent_refresh_token(fake, time.time() - 1))
    with pytest.raises(NotInstalled):
        InstalledClients(one.store, fake.api_url, refresher=one)(WorkspaceId(TEAM))

    context = BoltContext()
    authorized = from_store(one.store, one)(enterprise_id=None, team_id=TEAM, context=context)
    assert authorized is not None and authorized.bot_token is None, "no token to act with"
    assert INSTALL_URL in context[REINSTALL]

    answered: list[dict[str, object]] = []
    context["respond"] = lambda **answer: answered.append(answer)
    click = {"type": "block_actions", "actions": [{"action_id": "join"}]}
    went_on: list[bool] = []

    def go_on() -> BoltResponse:
        went_on.append(True)
        return BoltResponse(status=200)

    response = answer_reinstall(click, context, go_on)
    assert (response.status, went_on) == (200, []), "the click goes no further"
    (said,) = answered
    assert said["response_type"] == "ephemeral" and said["replace_original"] is False
    words = str(said["text"])
    assert "Varulv must be reinstalled here" in words and INSTALL_URL in words
    command = answer_reinstall({"command": "/varulv"}, context, lambda: BoltResponse(status=200))
    assert command.status == 200 and "must be reinstalled" in str(command.body)
    assert len(refreshes(fake.calls)) == 1


def test_every_admin_and_owner_finds_the_notice_on_the_home_tab(
    fake: FakeSlack, db: Engine
) -> None:
    members = [f"U{number:04d}" for number in range(450)]  # three pages of users.list
    for member in members:
        fake.add_user(member)
    admins = [members[3], members[250], members[449]]
    for admin, role in zip(admins, ("admin", "owner", "primary_owner"), strict=True):
        fake.set_role(admin, role)
    one = refresher(fake, db)
    one.store.save(installed_with_a_spent_refresh_token(fake, time.time() + 1800))
    assert InstalledClients(one.store, fake.api_url, refresher=one)(WorkspaceId(TEAM)).auth_test()

    def told(user: str) -> bool:
        return INSTALL_URL in json.dumps(fake.home_view(user))

    fake.wait_for(lambda: all(told(user) for user in ["UADMIN", *admins]), what="the admins")
    assert not any(told(member) for member in members if member not in admins)
    published = [call.params["user_id"] for call in fake.calls_to("views.publish")]
    assert sorted(published) == sorted(["UADMIN", *admins]), "each once"
    listed = fake.calls_to("users.list")
    assert len(listed) == 3 and all(call.response["ok"] for call in listed)
    assert len(refreshes(fake.calls)) == 1


def test_a_closed_modal_and_a_click_nothing_can_answer_go_no_further(
    fake: FakeSlack, db: Engine
) -> None:
    one = refresher(fake, db)
    one.store.save(installed_with_a_spent_refresh_token(fake, time.time() - 1))
    context = BoltContext()
    from_store(one.store, one)(enterprise_id=None, team_id=TEAM, context=context)
    went_on: list[bool] = []

    def go_on() -> BoltResponse:
        went_on.append(True)
        return BoltResponse(status=200)

    closed = {"type": "view_closed", "view": {"type": "modal", "private_metadata": "C0FIKA"}}
    in_a_modal = {
        "type": "block_actions",
        "user": {"id": "UADMIN"},
        "container": {"type": "view", "view_id": "V0001"},
        "view": {"id": "V0001", "type": "modal"},
        "actions": [{"action_id": "join"}],
    }
    for body in (closed, in_a_modal):
        answered = answer_reinstall(body, context, go_on)
        assert (answered.status, answered.body, went_on) == (200, "", [])
    submitted = {"type": "view_submission", "view": {"type": "modal", "private_metadata": "C0FIKA"}}
    answered = answer_reinstall(submitted, context, go_on)
    update = json.loads(answered.body)
    assert update["response_action"] == "update" and update["view"]["type"] == "modal"
    assert INSTALL_URL in json.dumps(update["view"]) and went_on == []
