"""a language per channel, and each game's language

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 22:30:00.000000

Written from the models and checked with ``alembic check``. Every channel and game stored so far
speaks English, the one language there was.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    for table in ("channel_settings", "games"):
        op.add_column(
            table,
            sa.Column("language", sa.String(length=8), server_default="en", nullable=False),
        )
    op.create_check_constraint(
        op.f("ck_channel_settings_language_known"),
        "channel_settings",
        "language IN ('en', 'sv')",
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_constraint(
        op.f("ck_channel_settings_language_known"), "channel_settings", type_="check"
    )
    for table in ("games", "channel_settings"):
        op.drop_column(table, "language")
