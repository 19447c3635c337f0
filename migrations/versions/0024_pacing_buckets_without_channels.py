"""The channels' posting buckets gone from pacing_buckets

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06 16:00:00.000000

Releases up to some at 0019 paced a channel's posts in ``pacing_buckets`` too, a row a channel
(``post:`` and its id). Posts are paced in the memory of the process delivering them
now, so nothing reads those rows again, and nothing but erasing a workspace would delete them:
they are deleted here. The table is unlogged, so this writes nothing to the WAL.
"""

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0024"
down_revision: str | Sequence[str] | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.execute("DELETE FROM pacing_buckets WHERE key LIKE 'post:%'")


def downgrade() -> None:
    """Downgrade schema: nothing; a release that paces posts here makes their rows again."""
