"""each standing table's Enterprise Grid org, and channels open to everyone to change

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 19:00:00.000000

Written from the models and checked with ``alembic check``.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column(
        "standing_tables", sa.Column("enterprise_id", sa.String(length=32), nullable=True)
    )
    op.add_column(
        "channel_settings",
        sa.Column("open_to_everyone", sa.Boolean(), server_default=sa.false(), nullable=False),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("channel_settings", "open_to_everyone")
    op.drop_column("standing_tables", "enterprise_id")
