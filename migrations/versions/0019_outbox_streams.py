"""The outbox, its messages and its leases keyed by stream, not by game

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05 20:00:00.000000

An outbox stream is a game's messages (its id is the game's) or a channel's notice, which
needs no game (an id of its own from the games' sequence). The column that was ``game_id``
is the stream now, in ``outbox``, ``messages`` and ``delivery_leases``, and no foreign key
ties it to a game: a game's entries are deleted with the game by the code that deletes it.
Renames and dropped constraints only: nothing is rewritten.
"""

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0019"
down_revision: str | Sequence[str] | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("outbox", "messages", "delivery_leases")


def upgrade() -> None:
    """Upgrade schema."""
    for table in TABLES:
        op.drop_constraint(f"fk_{table}_game_id_games", table, type_="foreignkey")
        op.alter_column(table, "game_id", new_column_name="stream")
    op.execute(
        "ALTER TABLE outbox RENAME CONSTRAINT uq_outbox_game_id_surface_version"
        " TO uq_outbox_stream_surface_version"
    )


def downgrade() -> None:
    """Downgrade schema: a notice's entries, which have no game, are deleted."""
    op.execute(
        "ALTER TABLE outbox RENAME CONSTRAINT uq_outbox_stream_surface_version"
        " TO uq_outbox_game_id_surface_version"
    )
    for table in TABLES:
        op.execute(
            f"DELETE FROM {table} WHERE NOT EXISTS"
            f" (SELECT FROM games WHERE games.id = {table}.stream)"
        )
        op.alter_column(table, "stream", new_column_name="game_id")
        op.create_foreign_key(
            f"fk_{table}_game_id_games", table, "games", ["game_id"], ["id"], ondelete="CASCADE"
        )
