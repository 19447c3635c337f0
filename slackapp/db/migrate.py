"""Bring the schema up to date with Alembic, safely when several processes start at once."""

from __future__ import annotations

from importlib.resources import files

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, text

MIGRATIONS = files("slackapp.migrations")
"""The repository's ``migrations/``, installed as ``slackapp.migrations``: found from the package
whatever the working directory, so a non-editable install migrates as well as a clone."""
MIGRATION_LOCK = 7_264_001  # any fixed number: the advisory lock that serialises upgrades


def alembic_config() -> Config:
    """Alembic's configuration, built here rather than read from the clone's ``alembic.ini``."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("path_separator", "os")
    config.attributes["configure_logger"] = False
    return config


def upgrade(engine: Engine) -> None:
    config = alembic_config()
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        try:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            connection.commit()
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
            connection.commit()
