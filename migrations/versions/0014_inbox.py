"""Requests acknowledged and not yet carried out

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 06:00:00.000000

Before Varulv tells Slack it has a command or a click, the request is written here in one
autocommit statement, claimed by the process that took it (``holder`` until ``until``); the
step that carries it out marks it done in its own transaction. A process that dies leaves its
requests pending and claimable by any other (``slackapp.inbox``). ``request_key`` (a digest of
the request's body) makes a redelivered request the same row. A done row keeps only its key, for
as long as Slack may still redeliver it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "inbox",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("request_key", sa.String(length=255), nullable=True),
        sa.Column("body", sa.JSON(), nullable=True),
        sa.Column("headers", sa.JSON(), nullable=True),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "received_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbox")),
        sa.UniqueConstraint("request_key", name=op.f("uq_inbox_request_key")),
    )
    op.create_index(
        "ix_inbox_pending",
        "inbox",
        ["holder"],
        unique=False,
        postgresql_where=sa.text("done_at IS NULL"),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index(
        "ix_inbox_pending", table_name="inbox", postgresql_where=sa.text("done_at IS NULL")
    )
    op.drop_table("inbox")
