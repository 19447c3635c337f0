"""A channel's revealed games indexed by channel and when they were decided; wrap-ups by game

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06 15:00:00.000000

`/varulv last`, the season's records (`/varulv score`, the Home tab, the wrap-ups) and a
season's last game asked for a channel's revealed games with no index to find them by: each
read every game the deployment keeps (the retention days' worth of every channel of every
workspace), a few milliseconds per ten thousand. Indexed by workspace, channel and the instant
decided (newest first, as they are read), only for revealed games, so it grows with those alone
and a game costs an index entry once, when it is revealed.

Deleting a game (the daily prune, an erased workspace) set the ``game_id`` of the season
wrap-up naming it to NULL, which read every wrap-up ever posted, once per game: indexed too.

Both are built in the migration's transaction, not ``CONCURRENTLY``: the upgrade holds its
advisory lock for its transaction, which a concurrent build would have to end. Building them
reads the games (retention bounds them: tens of thousands of rows, tens of milliseconds) and the
wrap-ups, while steps that write a game wait that long.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0022"
down_revision: str | Sequence[str] | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REVEALED = sa.text("phase = 'over'")


def upgrade() -> None:
    """Upgrade schema."""
    op.create_index(
        "ix_games_revealed_by_channel",
        "games",
        [
            "team_id",
            "channel_id",
            sa.text("finished_at DESC NULLS LAST"),
            sa.text("id DESC"),
        ],
        postgresql_where=REVEALED,
    )
    op.create_index(
        op.f("ix_season_wrap_ups_game_id"), "season_wrap_ups", ["game_id"], unique=False
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index(op.f("ix_season_wrap_ups_game_id"), table_name="season_wrap_ups")
    op.drop_index("ix_games_revealed_by_channel", table_name="games", postgresql_where=REVEALED)
