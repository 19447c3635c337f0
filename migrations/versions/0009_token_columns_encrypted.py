"""Slack tokens as unbounded text, encrypted when VARULV_TOKEN_KEY is set

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 19:20:00.000000

An encrypted token (``fernet:…``) is longer than slack_sdk's 200 characters. With
``VARULV_TOKEN_KEY`` set when it runs, the tokens already stored are encrypted; without it they
stay as they are, and ``varulv rotate-token-key`` encrypts them once the key is set.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from slackapp.config import token_keys_from_env
from slackapp.db.slack_tables import TOKEN_COLUMNS

# revision identifiers, used by Alembic.
revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    from slackapp.db.tokens import TokenKeys, reseal_all

    for table, columns in TOKEN_COLUMNS.items():
        for column in columns:
            op.alter_column(table, column, existing_type=sa.String(length=200), type_=sa.Text())
    keys = token_keys_from_env()
    if keys:
        reseal_all(op.get_bind(), TokenKeys(keys))


def downgrade() -> None:
    """Downgrade schema: the tokens decrypted (which needs the key) to fit 200 characters."""
    from slackapp.db.tokens import NO_KEY, TokenKeyError, TokenKeys, any_sealed, reseal_all

    keys = token_keys_from_env()
    if keys:
        reseal_all(op.get_bind(), TokenKeys(keys), to_plain_text=True)
    elif any_sealed(op.get_bind()):
        raise TokenKeyError(NO_KEY)
    for table, columns in TOKEN_COLUMNS.items():
        for column in columns:
            op.alter_column(table, column, existing_type=sa.Text(), type_=sa.String(length=200))
