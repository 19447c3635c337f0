"""outbox, messages and delivery leases; seats know who is unreachable

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 09:14:29.177174

The ts of every message already posted moves from ``games.board_ts`` and ``seats.dm_ts`` into
``messages`` (as version 0, which any new picture supersedes) before those columns go, and back
again on a downgrade.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "delivery_leases",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_delivery_leases_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_delivery_leases")),
    )
    op.create_table(
        "messages",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("surface", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=32), nullable=False),
        sa.Column("ts", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_messages_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("game_id", "surface", name=op.f("pk_messages")),
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("surface", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(length=32), nullable=True),
        sa.Column("user_id", sa.String(length=32), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("blocks", sa.JSON(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "due_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("failure", sa.String(length=64), nullable=True),
        sa.CheckConstraint(
            "channel IS NOT NULL OR user_id IS NOT NULL", name=op.f("ck_outbox_has_address")
        ),
        sa.CheckConstraint("version >= 1", name=op.f("ck_outbox_version_positive")),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_outbox_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
        sa.UniqueConstraint(
            "game_id", "surface", "version", name=op.f("uq_outbox_game_id_surface_version")
        ),
    )
    op.create_index(op.f("ix_outbox_game_id"), "outbox", ["game_id"], unique=False)
    op.create_index(
        "ix_outbox_undelivered",
        "outbox",
        ["due_at"],
        unique=False,
        postgresql_where=sa.text("done_at IS NULL"),
    )
    op.add_column(
        "seats",
        sa.Column("reachable", sa.Boolean(), server_default=sa.text("true"), nullable=False),
    )
    # Hand-written: keep the messages already posted, so games running across the upgrade
    # redraw them in place.
    op.execute(
        "INSERT INTO messages (game_id, surface, channel, ts, version) "
        "SELECT id, CASE phase WHEN 'day' THEN 'day' WHEN 'vote' THEN 'vote' "
        "WHEN 'over' THEN 'reveal' ELSE 'lobby' END, channel_id, board_ts, 0 "
        "FROM games WHERE board_ts IS NOT NULL"
    )
    op.execute(
        "INSERT INTO messages (game_id, surface, channel, ts, version) "
        "SELECT game_id, 'dm:' || user_id, dm_channel, dm_ts, 0 FROM seats "
        "WHERE dm_ts IS NOT NULL AND dm_channel IS NOT NULL AND user_id IS NOT NULL"
    )
    op.drop_column("games", "board_ts")
    op.drop_column("seats", "dm_ts")


def downgrade() -> None:
    """Downgrade schema."""
    op.add_column("seats", sa.Column("dm_ts", sa.VARCHAR(length=32), nullable=True))
    op.add_column("games", sa.Column("board_ts", sa.VARCHAR(length=32), nullable=True))
    op.execute(
        "UPDATE seats SET dm_ts = messages.ts FROM messages "
        "WHERE messages.game_id = seats.game_id AND messages.surface = 'dm:' || seats.user_id"
    )
    op.execute(
        "UPDATE games SET board_ts = messages.ts FROM messages "
        "WHERE messages.game_id = games.id AND messages.surface = CASE games.phase "
        "WHEN 'day' THEN 'day' WHEN 'vote' THEN 'vote' WHEN 'over' THEN 'reveal' "
        "ELSE 'lobby' END"
    )
    op.drop_column("seats", "reachable")
    op.drop_index(
        "ix_outbox_undelivered", table_name="outbox", postgresql_where=sa.text("done_at IS NULL")
    )
    op.drop_index(op.f("ix_outbox_game_id"), table_name="outbox")
    op.drop_table("outbox")
    op.drop_table("messages")
    op.drop_table("delivery_leases")
