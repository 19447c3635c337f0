"""A workspace's notices indexed by their own rows

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06 17:00:00.000000

`/varulv forget me` (which erases the person from the channels' notices) and the daily prune
(which deletes the notices as old as a pruned game) told a notice's outbox stream from a game's
by its having no game: each read the whole outbox, every game's entries of the retention days,
to find the few notices. On a database of 300 channels' 90 days (1.5 million entries, 1.8 GB),
EXPLAIN (ANALYZE, BUFFERS) gave forget me three such reads, 0.7 to 1.2 s and 225,000 buffers
each, and the prune two, 1.0 and 1.4 s. A notice's stream has one row whose surface is
``notice:…`` and a game's has none: those rows alone are indexed, by workspace and stream, so
a game's entries cost the index nothing. There forget me's four notice statements take 0.1 to
1.7 ms (at most 450 buffers) and the prune's search 4 ms: the index, then the notices'
entries by stream.

A release before notices named what they tell of (one whose newest migration is 0019 or 0020)
wrote a notice's row as a line, ``say:…``, in a stream no game carries: such a row and its
message as Slack has it are renamed ``notice:say:…``, so they are found as every notice is.
Finding them reads the outbox once (0.8 s there).

The index is built in the migration's transaction, not ``CONCURRENTLY`` (0022 says why):
building it reads the outbox (0.7 s there) while steps that write the outbox wait.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0023"
down_revision: str | Sequence[str] | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOTICE_ROW = sa.text("surface LIKE 'notice:%'")


def upgrade() -> None:
    """Upgrade schema."""
    op.execute(
        "WITH renamed AS ("
        " UPDATE outbox SET surface = 'notice:' || surface"
        " WHERE surface LIKE 'say:%'"
        " AND NOT EXISTS (SELECT FROM games WHERE games.id = outbox.stream)"
        " AND NOT EXISTS (SELECT FROM outbox AS noticed WHERE noticed.stream = outbox.stream"
        "  AND noticed.surface LIKE 'notice:%')"
        " RETURNING stream, surface)"
        " UPDATE messages SET surface = renamed.surface FROM renamed"
        " WHERE messages.stream = renamed.stream"
        " AND 'notice:' || messages.surface = renamed.surface"
    )
    op.create_index(
        "ix_outbox_notices", "outbox", ["team_id", "stream"], postgresql_where=NOTICE_ROW
    )


def downgrade() -> None:
    """Downgrade schema: the notices' rows renamed keep their names, which every release since
    0019 reads as a notice's."""
    op.drop_index("ix_outbox_notices", table_name="outbox", postgresql_where=NOTICE_ROW)
