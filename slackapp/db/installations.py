"""Slack installations and OAuth states, kept in the app's own PostgreSQL (multi-workspace mode).

The tables are slack_sdk's own definitions, built by its ``SQLAlchemyInstallationStore`` and
``SQLAlchemyOAuthStateStore``. Alembic creates them (migration 0002) instead of the stores'
``create_tables()``, and autogenerate compares them with :func:`slack_metadata`, so a slack_sdk
upgrade that changes them shows up in ``alembic check`` rather than at the first install.
"""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.oauth.installation_store import InstallationStore
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import Engine, MetaData, Text

from slackapp.db.engine import AUTOCOMMIT

INSTALLATIONS_TABLE = SQLAlchemyInstallationStore.default_installations_table_name
BOTS_TABLE = SQLAlchemyInstallationStore.default_bots_table_name
OAUTH_STATES_TABLE = SQLAlchemyOAuthStateStore.default_table_name
SLACK_TABLES = (INSTALLATIONS_TABLE, BOTS_TABLE, OAUTH_STATES_TABLE)

OAUTH_STATE_SECONDS = 10 * 60
"""How long an "Add to Slack" link stays usable: time enough to read Slack's consent page."""


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


def installation_store(
    engine: Engine, client_id: str, token_keys: Sequence[str] = ()
) -> InstallationStore:
    """slack_sdk's store in the app's database, its tokens encrypted with ``token_keys``
    (``VARULV_TOKEN_KEY``) when given (slackapp.db.tokens)."""
    from slackapp.db.tokens import SealedInstallationStore, TokenKeys

    store = SQLAlchemyInstallationStore(client_id=client_id, engine=engine)
    # Bolt looks the bot up on every request: outside a transaction (slackapp.db.engine).
    reading = engine.execution_options(**AUTOCOMMIT)
    finder = SQLAlchemyInstallationStore(client_id=client_id, engine=reading)
    return SealedInstallationStore(store, TokenKeys(token_keys) if token_keys else None, finder)


def oauth_state_store(engine: Engine) -> SQLAlchemyOAuthStateStore:
    return SQLAlchemyOAuthStateStore(expiration_seconds=OAUTH_STATE_SECONDS, engine=engine)
