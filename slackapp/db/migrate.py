"""Bring the schema up to date with Alembic, safely when several processes start at once."""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

from sqlalchemy import Engine, text

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = files("slackapp.migrations")
"""The repository's ``migrations/``, installed as ``slackapp.migrations``: found from the package
whatever the working directory, so a non-editable install migrates as well as a clone."""
MIGRATION_LOCK = 7_264_001  # any fixed number: the advisory lock that serialises upgrades
HEAD = "0019"
"""The newest migration's revision (a test holds it to the scripts' head). A database already
there is served without Alembic, whose import and set-up are a third of a second of every
start."""


def alembic_config() -> Config:
    """Alembic's configuration, built here rather than read from the clone's ``alembic.ini``."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("path_separator", "os")
    config.attributes["configure_logger"] = False
    return config


def at_head(engine: Engine) -> bool:
    """Whether the database's schema is at :data:`HEAD` (Alembic's own record of it says so)."""
    with engine.connect() as connection:
        if connection.execute(text("SELECT to_regclass('alembic_version')")).scalar() is None:
            return False
        versions = connection.execute(text("SELECT version_num FROM alembic_version")).scalars()
        return list(versions) == [HEAD]


def upgrade(engine: Engine) -> None:
    if at_head(engine):
        return
    from alembic import command

    config = alembic_config()
    # The lock is the transaction's, released by its commit or rollback: behind PgBouncer in
    # transaction mode a session's lock could stay behind on a server connection another
    # client then holds.
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
        connection.commit()
