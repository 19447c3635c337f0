"""Bring the schema up to date with Alembic, safely when several processes start at once."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, text

ALEMBIC_INI = Path(__file__).resolve().parents[2] / "alembic.ini"
MIGRATION_LOCK = 7_264_001  # any fixed number: the advisory lock that serialises upgrades


def upgrade(engine: Engine) -> None:
    config = Config(str(ALEMBIC_INI))
    config.attributes["configure_logger"] = False
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        try:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            connection.commit()
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
            connection.commit()
