"""Which workspace keeps a shared channel's table in an organisation-wide install

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06 10:00:00.000000

Where Varulv is installed on a whole Enterprise Grid organisation, a channel shared by several
of its workspaces has one table, kept under one workspace: the channel's home. A channel that
already has a table takes the workspace that keeps its standing table, else its open game, else
its latest game.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0020"
down_revision: str | Sequence[str] | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "channel_homes",
        sa.Column("enterprise_id", sa.String(length=32), nullable=False),
        sa.Column("channel_id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("enterprise_id", "channel_id", name=op.f("pk_channel_homes")),
    )
    op.execute(
        "INSERT INTO channel_homes (enterprise_id, channel_id, team_id)"
        " SELECT DISTINCT ON (enterprise_id, channel_id) enterprise_id, channel_id, team_id"
        " FROM ("
        "  SELECT enterprise_id, channel_id, team_id, 0 AS rank, 0 AS recency"
        "  FROM standing_tables WHERE enterprise_id IS NOT NULL"
        "  UNION ALL"
        "  SELECT enterprise_id, channel_id, team_id,"
        "   CASE WHEN phase IN ('lobby', 'night', 'day', 'vote') THEN 1 ELSE 2 END, -id"
        "  FROM games WHERE enterprise_id IS NOT NULL"
        " ) AS kept ORDER BY enterprise_id, channel_id, rank, recency"
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("channel_homes")
