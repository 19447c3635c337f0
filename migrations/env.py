"""Alembic's entry: migrate the database the app itself would use."""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from alembic.util import CommandError
from sqlalchemy import Connection, create_engine, pool, text

from slackapp.config import Settings, SettingsError
from slackapp.db.engine import database_url
from slackapp.db.migrate import MIGRATION_LOCK, SchemaAhead, refuse_a_newer_schema
from slackapp.db.models import Base
from slackapp.db.slack_tables import slack_metadata

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name)

# Our tables, and Slack's installation tables as slack_sdk defines them: autogenerate compares
# both with the database, so drift in either shows up in `alembic check`.
target_metadata = [Base.metadata, slack_metadata()]
OWN_TABLES = frozenset(name for metadata in target_metadata for name in metadata.tables)


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """Autogenerate looks only at our own tables, never at others sharing the database."""
    if type_ == "table":
        return name in OWN_TABLES
    return True


def url() -> str:
    given = config.get_main_option("sqlalchemy.url")
    if given:
        return given
    try:
        settings = Settings.from_env()
    except SettingsError as error:  # alembic says a CommandError in one line
        raise CommandError(str(error)) from None
    return database_url(settings.database_url, settings.data_dir)


def run_migrations_offline() -> None:
    context.configure(url=url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    given = config.attributes.get("connection")
    if given is not None:  # the app migrates on start, on a connection it holds a lock on
        migrate(given)
        return
    # The release step (`alembic upgrade head`) takes the lock a start that migrates takes
    # (slackapp.db.migrate), so the two never run one migration at once; it is the
    # transaction's, released by the commit.
    engine = create_engine(url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        try:
            refuse_a_newer_schema(connection, config)
        except SchemaAhead as error:  # alembic says a CommandError in one line
            raise CommandError(str(error)) from None
        migrate(connection)
        connection.commit()


def migrate(connection: Connection) -> None:
    context.configure(
        connection=connection, target_metadata=target_metadata, include_name=include_name
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
