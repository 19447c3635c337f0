"""A person's seats found by an index

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 19:00:00.000000

A name learned from Slack (a newcomer's look-up, and every ``user_change`` in the workspace),
the App Home and "forget me" each look for the seats of one person. Without an index on
``seats.user_id`` each read every seat of the retention period (2.4 ms at 25,000 seats, and
growing with them). A plain ``CREATE INDEX``: it holds off seat writes while it builds, during
the release (66 ms for 100,000 seats on a two-core machine).
"""

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_index(op.f("ix_seats_user_id"), "seats", ["user_id"])


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index(op.f("ix_seats_user_id"), table_name="seats")
