"""Until when a message's screen may still change under a call of unknown outcome

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05 06:30:00.000000

A ``chat.update`` that timed out or lost its connection may still be applied by Slack after the
client gave up, over a newer version sent meanwhile. ``messages.unsure_until`` is when such a
call can no longer land: a landing before then leaves the message due again at that time, so
the newest version is always the last one Slack applies. Null: what Slack shows is known.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("messages", sa.Column("unsure_until", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("messages", "unsure_until")
