"""Slack's installation tables, kept in the app's own PostgreSQL (multi-workspace mode).

The tables are slack_sdk's own definitions, built by its ``SQLAlchemyInstallationStore`` and
``SQLAlchemyOAuthStateStore``. Alembic creates them (migration 0002) instead of the stores'
``create_tables()``, and autogenerate compares them with :func:`slack_metadata`, so a slack_sdk
upgrade that changes them shows up in ``alembic check`` rather than at the first install.
"""

from __future__ import annotations

from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import MetaData, Text

INSTALLATIONS_TABLE = SQLAlchemyInstallationStore.default_installations_table_name
BOTS_TABLE = SQLAlchemyInstallationStore.default_bots_table_name
OAUTH_STATES_TABLE = SQLAlchemyOAuthStateStore.default_table_name
SLACK_TABLES = (INSTALLATIONS_TABLE, BOTS_TABLE, OAUTH_STATES_TABLE)


TOKEN_COLUMNS = {
    INSTALLATIONS_TABLE: ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token"),
    BOTS_TABLE: ("bot_token", "bot_refresh_token"),
}
"""Where the tokens are; unbounded text here (migration 0009), as an encrypted token is longer
than slack_sdk's 200 characters allow."""


def slack_metadata() -> MetaData:
    """The three tables as slack_sdk defines them (no naming convention of ours), but for the
    token columns' width."""
    metadata = MetaData()
    installations = SQLAlchemyInstallationStore.build_installations_table(
        metadata, INSTALLATIONS_TABLE
    )
    bots = SQLAlchemyInstallationStore.build_bots_table(metadata, BOTS_TABLE)
    SQLAlchemyOAuthStateStore.build_oauth_states_table(metadata, OAUTH_STATES_TABLE)
    for table in (installations, bots):
        for column in TOKEN_COLUMNS[table.name]:
            table.c[column].type = Text()
    return metadata
