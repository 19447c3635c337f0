"""Which version of a message is its last word, and which copy a click was on

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 12:30:00.000000

Many tables in one workspace share Slack's ``chat.update`` budget. A version that ends its
phase (dawn, the vote closed, a person's night at dawn) takes the next turn however far off;
a board that still counts takes one only while the burst keeps room for those. Rows written
before this are counters (false): they are redrawn as boards were before. A click's
``response_url`` keeps the ``ts`` of the copy it was on, and is used only on that copy.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column(
        "outbox", sa.Column("settles", sa.Boolean(), server_default=sa.false(), nullable=False)
    )
    op.add_column("outbox", sa.Column("response_ts", sa.String(length=32), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("outbox", "response_ts")
    op.drop_column("outbox", "settles")
