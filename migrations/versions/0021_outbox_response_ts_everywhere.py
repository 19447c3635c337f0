"""The outbox's response_ts, on a database 0012 was run on before it added that column

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06 12:00:00.000000

Revision 0012 added ``outbox.response_ts`` only from a later change of it on. A database that a
release of that time had migrated to 0012 has no such column, and every later revision went
past it: every step that writes the outbox then fails on it (every deadline, and ending a game
by hand), and ``alembic check`` reports the column missing. Added where it is missing; a
database that has it is left as it is.
"""

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0021"
down_revision: str | Sequence[str] | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.execute("ALTER TABLE outbox ADD COLUMN IF NOT EXISTS response_ts VARCHAR(32)")


def downgrade() -> None:
    """Downgrade schema: nothing; 0012's downgrade drops the column."""
