"""each game's Enterprise Grid org and opening command, and when a mark was clicked

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 12:20:00.000000

Written from the models and checked with ``alembic check``.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("games", sa.Column("enterprise_id", sa.String(length=32), nullable=True))
    op.add_column("games", sa.Column("opened_by_trigger", sa.String(length=255), nullable=True))
    op.add_column(
        "seats", sa.Column("heard_enough_at", sa.Numeric(precision=17, scale=6), nullable=True)
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("seats", "heard_enough_at")
    op.drop_column("games", "opened_by_trigger")
    op.drop_column("games", "enterprise_id")
