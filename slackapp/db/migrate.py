"""Bring the schema up to date with Alembic, safely when several processes start at once."""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, text

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = files("slackapp.migrations")
"""The repository's ``migrations/``, installed as ``slackapp.migrations``: found from the package
whatever the working directory, so a non-editable install migrates as well as a clone."""
MIGRATION_LOCK = 7_264_001  # any fixed number: the advisory lock that serialises upgrades
HEAD = "0024"
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


class SchemaAhead(RuntimeError):
    """The database was migrated by a newer release, to a revision this one does not have; the
    message is one line that says how to go back."""


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
        refuse_a_newer_schema(connection, config)
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
        connection.commit()


def refuse_a_newer_schema(connection: Connection, config: Config) -> None:
    """Raise :class:`SchemaAhead` when a newer release migrated the database, to a revision
    this one does not have: nothing here can serve or migrate it."""
    ahead = _unknown_revision(connection, config)
    if ahead is not None:
        raise SchemaAhead(
            f"the database's schema is at revision {ahead}, which this release does not "
            f"have (its newest is {HEAD}): a newer release migrated it. Serve it with that "
            f"release, or first run `alembic downgrade {HEAD}` with that release"
        )


def _unknown_revision(connection: Connection, config: Config) -> str | None:
    """The database's revision when this release's migrations do not have it (a newer release
    put it there), else None."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    if connection.execute(text("SELECT to_regclass('alembic_version')")).scalar() is None:
        return None
    scripts = ScriptDirectory.from_config(config)
    for version in connection.execute(text("SELECT version_num FROM alembic_version")).scalars():
        try:
            scripts.get_revision(version)
        except CommandError:
            return str(version)
    return None
