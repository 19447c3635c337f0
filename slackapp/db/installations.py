"""Slack installations and OAuth states, kept in the app's own PostgreSQL (multi-workspace mode):
slack_sdk's stores over its own tables (slackapp.db.slack_tables), and the workspaces whose token
refresh Slack refused for good.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from slack_sdk.oauth.installation_store import InstallationStore
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import Engine, delete, func, select
from sqlalchemy.dialects.postgresql import insert

from slackapp.db.engine import AUTOCOMMIT
from slackapp.db.models import ReinstallNeeded
from slackapp.db.tokens import SealedInstallationStore, TokenKeys

OAUTH_STATE_SECONDS = 10 * 60
"""How long an "Add to Slack" link stays usable: time enough to read Slack's consent page."""


def installation_store(
    engine: Engine, client_id: str, token_keys: Sequence[str] = ()
) -> InstallationStore:
    """slack_sdk's store in the app's database, its tokens encrypted with ``token_keys``
    (``VARULV_TOKEN_KEY``) when given (slackapp.db.tokens)."""
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


REDELIVERY_LEEWAY_SECONDS = 10.0
"""How far ahead of Slack's clock this machine's may run when it stamps an installation: an
uninstall Slack stamped up to this much before the installation kept (as this machine stamped
it) is still acted on, so a real uninstall soon after an install is not taken for a late one."""


def outlived(
    store: InstallationStore,
    enterprise_id: str | None,
    team_id: str | None,
    org_wide: bool,
    event_time: object,
) -> bool:
    """Whether the workspace's installation kept now was made after Slack's event of
    ``event_time`` (seconds) that tells of removing Varulv: Slack delivers an event it saw no
    answer to again, minutes later, so an uninstall or a revoked token that arrives after the
    workspace added Varulv again is of the installation it removed, not of the new one."""
    if not isinstance(event_time, int | float) or isinstance(event_time, bool):
        return False
    bot = store.find_bot(
        enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=org_wide
    )
    return bot is not None and bot.installed_at > event_time + REDELIVERY_LEEWAY_SECONDS


def reinstalled(engine: Engine, enterprise_id: str | None, team_id: str | None) -> None:
    """The workspace installed Varulv again: it no longer needs a reinstall."""
    with engine.begin() as connection:
        connection.execute(
            delete(ReinstallNeeded).where(
                ReinstallNeeded.enterprise_id == (enterprise_id or ""),
                ReinstallNeeded.team_id == (team_id or ""),
            )
        )
