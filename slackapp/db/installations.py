"""Slack installations and OAuth states, kept in the app's own PostgreSQL (multi-workspace mode).

The tables are slack_sdk's own definitions, built by its ``SQLAlchemyInstallationStore`` and
``SQLAlchemyOAuthStateStore``. Alembic creates them (migration 0002) instead of the stores'
``create_tables()``, and autogenerate compares them with :func:`slack_metadata`, so a slack_sdk
upgrade that changes them shows up in ``alembic check`` rather than at the first install.
"""

from __future__ import annotations

from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import Engine, MetaData

INSTALLATIONS_TABLE = SQLAlchemyInstallationStore.default_installations_table_name
BOTS_TABLE = SQLAlchemyInstallationStore.default_bots_table_name
OAUTH_STATES_TABLE = SQLAlchemyOAuthStateStore.default_table_name
SLACK_TABLES = (INSTALLATIONS_TABLE, BOTS_TABLE, OAUTH_STATES_TABLE)

OAUTH_STATE_SECONDS = 10 * 60
"""How long an "Add to Slack" link stays usable: time enough to read Slack's consent page."""


def slack_metadata() -> MetaData:
    """The three tables exactly as slack_sdk defines them (no naming convention of ours)."""
    metadata = MetaData()
    SQLAlchemyInstallationStore.build_installations_table(metadata, INSTALLATIONS_TABLE)
    SQLAlchemyInstallationStore.build_bots_table(metadata, BOTS_TABLE)
    SQLAlchemyOAuthStateStore.build_oauth_states_table(metadata, OAUTH_STATES_TABLE)
    return metadata


def installation_store(engine: Engine, client_id: str) -> SQLAlchemyInstallationStore:
    return SQLAlchemyInstallationStore(client_id=client_id, engine=engine)


def oauth_state_store(engine: Engine) -> SQLAlchemyOAuthStateStore:
    return SQLAlchemyOAuthStateStore(expiration_seconds=OAUTH_STATE_SECONDS, engine=engine)
