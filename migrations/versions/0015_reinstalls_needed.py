"""The workspaces that must reinstall Varulv, their token refresh refused for good

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05 06:10:00.000000

Slack spends a refresh token when it is used: a new pair lost to a crash leaves the workspace
with a token that dies within hours and nothing to refresh it with. The workspace is marked
here, so every process stops trying the spent refresh token and answers its people that Varulv
must be reinstalled, until a reinstall deletes the row.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "reinstalls_needed",
        sa.Column("enterprise_id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("refresh_token_sha256", sa.String(length=64), nullable=False),
        sa.Column("error", sa.String(length=100), nullable=False),
        sa.Column(
            "since", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.PrimaryKeyConstraint("enterprise_id", "team_id", name=op.f("pk_reinstalls_needed")),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("reinstalls_needed")
