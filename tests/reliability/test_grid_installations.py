"""Which installation the deliverer acts with, for workspaces in and out of Enterprise Grid
organisations, on slack_sdk's own store in PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk.oauth.installation_store import Installation
from sqlalchemy import Engine, create_engine

from slackapp.db.installations import installation_store
from slackapp.delivery.slack import InstalledClients, NotInstalled, WorkspaceId
from tests.databases import migrated_database

CLIENT_ID = "grid-installations-test"


def installed(enterprise_id: str | None, team_id: str | None, token: str) -> Installation:
    return Installation(
        app_id="A0001",
        enterprise_id=enterprise_id,
        team_id=team_id,
        user_id="UADMIN",
        bot_token=token,
        bot_id="B0001",
        bot_user_id="UBOT",
        bot_scopes="chat:write",
        is_enterprise_install=team_id is None,
    )


@pytest.fixture
def db(postgres: str) -> Iterator[Engine]:
    """A database of its own: installations in the end-to-end apps' shared one would make it
    an "Add to Slack" server's, and a single-workspace app started on it after would refuse."""
    engine = create_engine(migrated_database(postgres, "grid"))
    yield engine
    engine.dispose()


def test_each_workspace_is_served_by_its_own_installation(db: Engine) -> None:
    store = installation_store(db, CLIENT_ID)
    store.save(installed(None, "T0PLAIN", "xoxb-plain"))
    store.save(installed("E0GRID", "T0INGRID", "xoxb-in-grid"))
    store.save(installed("E0WIDE", None, "xoxb-org-wide"))
    clients = InstalledClients(store, "http://127.0.0.1:9/api/")

    def token(workspace: WorkspaceId) -> str | None:
        return clients(workspace).token

    assert token(WorkspaceId("T0PLAIN")) == "xoxb-plain"
    assert token(WorkspaceId("T0INGRID", "E0GRID")) == "xoxb-in-grid"
    # Installed on the whole organisation: every workspace of it, by the one installation.
    assert token(WorkspaceId("T0ANY", "E0WIDE")) == "xoxb-org-wide"
    assert token(WorkspaceId("T0OTHER", "E0WIDE")) == "xoxb-org-wide"
    for elsewhere in (
        WorkspaceId("T0INGRID"),  # the organisation's workspace, said to be in none
        WorkspaceId("T0INGRID", "E0OTHER"),  # in another organisation
        WorkspaceId("T0ANY", "E0GRID"),  # not installed on all of E0GRID
        WorkspaceId("T0PLAIN", "E0GRID"),
    ):
        with pytest.raises(NotInstalled):
            clients(elsewhere)
