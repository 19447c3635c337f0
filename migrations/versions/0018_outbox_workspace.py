"""Each outbox entry names its workspace

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05 19:30:00.000000

The deliverer finds a message's installation (its workspace and Grid organisation) from the
entry itself, so reading what is due joins no game row. Existing entries take their game's:
filling them in writes every entry once, with new entries waiting meanwhile.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0018"
down_revision: str | Sequence[str] | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("outbox", sa.Column("team_id", sa.String(length=32), nullable=True))
    op.add_column("outbox", sa.Column("enterprise_id", sa.String(length=32), nullable=True))
    op.execute(
        "UPDATE outbox SET team_id = games.team_id, enterprise_id = games.enterprise_id"
        " FROM games WHERE games.id = outbox.game_id"
    )
    op.alter_column("outbox", "team_id", nullable=False)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("outbox", "enterprise_id")
    op.drop_column("outbox", "team_id")
