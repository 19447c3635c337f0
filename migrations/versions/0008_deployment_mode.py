"""which kind of server the database belongs to (single workspace or "Add to Slack")

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 19:10:00.000000

Written from the models and checked with ``alembic check``. The row is written by the first
``varulv serve`` (slackapp.db.deployment), from what the database holds.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "deployment",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(length=8), nullable=False),
        sa.Column(
            "claimed_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint("id = 1", name=op.f("ck_deployment_one_row")),
        sa.CheckConstraint("mode IN ('single', 'multi')", name=op.f("ck_deployment_mode_known")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deployment")),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("deployment")
