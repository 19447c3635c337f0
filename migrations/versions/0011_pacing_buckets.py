"""The rate limits' token buckets, shared by every process of a deployment, and the click a
message's version answers

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 22:10:00.000000

Each process paced its Web API calls alone, so two processes together went beyond Slack's
limits; one row per bucket, updated by one statement per call, paces them together. A version
that answers a click keeps the click's ``response_url``, through which it is redrawn without
spending the workspace's ``chat.update`` budget.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "pacing_buckets",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("free_from", sa.Float(), nullable=False),
        sa.Column("taken", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_pacing_buckets")),
        prefixes=["UNLOGGED"],  # a crash that empties it only lets a burst go again
    )
    op.add_column("outbox", sa.Column("response_url", sa.Text(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("outbox", "response_url")
    op.drop_table("pacing_buckets")
