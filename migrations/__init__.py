"""Alembic migrations, shipped inside the package as ``slackapp.migrations``."""
