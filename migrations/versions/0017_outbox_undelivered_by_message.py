"""The outbox's undelivered entries indexed by their message, not by when they fall due

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 14:30:00.000000

Every step and every drain looks up undelivered entries of a few games (a message's newest
version and its retries as the step adds one, a drain's read, a landing's record). The partial
index on undelivered entries was ordered by ``due_at``, and PostgreSQL chose it for those
look-ups too whenever its statistics said few entries were undelivered: in a storm (a thousand
deadlines due together) that is every entry due, so each look-up read them all. Ordered by
game, message and version, the index serves the look-ups by their game; the sweep, the
readiness check and ``/metrics``, which ask for entries by ``due_at``, read every undelivered
entry instead, ``due_at`` included in the index: a few thousand in a storm, a few milliseconds,
every second or so, against a look-up for every step and every landing. The plain indexes
on ``outbox.game_id`` and ``seats.game_id`` repeated the first column of their tables' unique
keys. Building the index reads the outbox once, with new entries waiting meanwhile.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0017"
down_revision: str | Sequence[str] | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNDELIVERED = sa.text("done_at IS NULL")


def upgrade() -> None:
    """Upgrade schema."""
    op.drop_index("ix_outbox_undelivered", table_name="outbox", postgresql_where=UNDELIVERED)
    op.create_index(
        "ix_outbox_undelivered",
        "outbox",
        ["game_id", "surface", "version"],
        postgresql_include=["due_at"],
        postgresql_where=UNDELIVERED,
    )
    op.drop_index(op.f("ix_outbox_game_id"), table_name="outbox")
    op.drop_index(op.f("ix_seats_game_id"), table_name="seats")


def downgrade() -> None:
    """Downgrade schema."""
    op.create_index(op.f("ix_seats_game_id"), "seats", ["game_id"], unique=False)
    op.create_index(op.f("ix_outbox_game_id"), "outbox", ["game_id"], unique=False)
    op.drop_index("ix_outbox_undelivered", table_name="outbox", postgresql_where=UNDELIVERED)
    op.create_index("ix_outbox_undelivered", "outbox", ["due_at"], postgresql_where=UNDELIVERED)
