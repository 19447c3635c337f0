"""Slack installations and OAuth states, kept in the app's own PostgreSQL (multi-workspace mode).

The tables are slack_sdk's own definitions, built by its ``SQLAlchemyInstallationStore`` and
``SQLAlchemyOAuthStateStore``. Alembic creates them (migration 0002) instead of the stores'
``create_tables()``, and autogenerate compares them with :func:`slack_metadata`, so a slack_sdk
upgrade that changes them shows up in ``alembic check`` rather than at the first install.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from slack_sdk.oauth.installation_store import InstallationStore
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import Engine, MetaData, Text, delete, func, select
from sqlalchemy.dialects.postgresql import insert

from slackapp.db.engine import AUTOCOMMIT
from slackapp.db.models import ReinstallNeeded

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


# --- workspaces whose token refresh Slack refused for good -------------------------------------


def token_digest(refresh_token: str | None) -> str:
    """What is kept of a refused refresh token: its SHA-256, never the token."""
    return hashlib.sha256((refresh_token or "").encode()).hexdigest()


def mark_reinstall_needed(
    engine: Engine,
    enterprise_id: str | None,
    team_id: str | None,
    refresh_token: str | None,
    error: str,
) -> bool:
    """Mark the workspace as needing a reinstall, its ``refresh_token`` refused; whether this
    call marked it (False when another process had marked it for the same token already)."""
    values = {
        "enterprise_id": enterprise_id or "",
        "team_id": team_id or "",
        "refresh_token_sha256": token_digest(refresh_token),
        "error": error[:100],
    }
    inserting = insert(ReinstallNeeded).values(**values)
    statement = inserting.on_conflict_do_update(
        index_elements=[ReinstallNeeded.enterprise_id, ReinstallNeeded.team_id],
        set_={**values, "since": func.now()},
        where=ReinstallNeeded.refresh_token_sha256 != inserting.excluded.refresh_token_sha256,
    ).returning(ReinstallNeeded.team_id)
    with engine.begin() as connection:
        return connection.execute(statement).first() is not None


def reinstall_needed(
    engine: Engine, enterprise_id: str | None, team_id: str | None, refresh_token: str | None
) -> bool:
    """Whether the workspace is marked, for this very refresh token (a reinstall stores another,
    so a mark left behind by a failed clean-up never stops a reinstalled workspace)."""
    query = select(ReinstallNeeded.team_id).where(
        ReinstallNeeded.enterprise_id == (enterprise_id or ""),
        ReinstallNeeded.team_id == (team_id or ""),
        ReinstallNeeded.refresh_token_sha256 == token_digest(refresh_token),
    )
    with engine.connect() as connection:
        return connection.execute(query).first() is not None


def reinstalled(engine: Engine, enterprise_id: str | None, team_id: str | None) -> None:
    """The workspace installed Varulv again: it no longer needs a reinstall."""
    with engine.begin() as connection:
        connection.execute(
            delete(ReinstallNeeded).where(
                ReinstallNeeded.enterprise_id == (enterprise_id or ""),
                ReinstallNeeded.team_id == (team_id or ""),
            )
        )
