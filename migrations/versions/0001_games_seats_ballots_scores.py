"""games seats ballots scores

Revision ID: 0001
Revises:
Create Date: 2026-11-29 12:29:57.712852

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("channel_id", sa.String(length=32), nullable=False),
        sa.Column("host_user_id", sa.String(length=32), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("center", sa.JSON(), nullable=True),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=True),
        sa.Column("night_seconds", sa.Integer(), nullable=False),
        sa.Column("day_seconds", sa.Integer(), nullable=False),
        sa.Column("vote_seconds", sa.Integer(), nullable=False),
        sa.Column("bots_allowed", sa.Boolean(), nullable=False),
        sa.Column("board_ts", sa.String(length=32), nullable=True),
        sa.Column("outcome", sa.JSON(), nullable=True),
        sa.Column("ended_by", sa.String(length=32), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "deadline IS NOT NULL OR phase NOT IN ('night', 'day', 'vote')",
            name=op.f("ck_games_timed_phase_has_deadline"),
        ),
        sa.CheckConstraint(
            "phase IN ('lobby', 'night', 'day', 'vote', 'over', 'cancelled', 'stopped')",
            name=op.f("ck_games_phase_known"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
    )
    op.create_index(
        "ix_games_open_deadline",
        "games",
        ["deadline"],
        unique=False,
        postgresql_where=sa.text("phase IN ('lobby', 'night', 'day', 'vote')"),
    )
    op.create_index(
        "uq_games_one_open_per_channel",
        "games",
        ["team_id", "channel_id"],
        unique=True,
        postgresql_where=sa.text("phase IN ('lobby', 'night', 'day', 'vote')"),
    )
    op.create_table(
        "scores",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("channel_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("team_id", "channel_id", "user_id", name=op.f("pk_scores")),
    )
    op.create_table(
        "seats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=True),
        sa.Column("bot_name", sa.String(length=32), nullable=True),
        sa.Column("display_name", sa.String(length=80), nullable=False),
        sa.Column("dealt", sa.String(length=16), nullable=True),
        sa.Column("dm_channel", sa.String(length=32), nullable=True),
        sa.Column("dm_ts", sa.String(length=32), nullable=True),
        sa.Column("night_choice", sa.JSON(), nullable=True),
        sa.Column("pending_target", sa.String(length=32), nullable=True),
        sa.Column("confirmed", sa.Boolean(), nullable=False),
        sa.Column("heard_enough", sa.Boolean(), nullable=False),
        sa.CheckConstraint(
            "(user_id IS NULL) <> (bot_name IS NULL)", name=op.f("ck_seats_person_or_bot")
        ),
        sa.CheckConstraint(
            "position >= 0 AND position < 10", name=op.f("ck_seats_position_in_table")
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_seats_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seats")),
        sa.UniqueConstraint("game_id", "bot_name", name=op.f("uq_seats_game_id_bot_name")),
        sa.UniqueConstraint("game_id", "position", name=op.f("uq_seats_game_id_position")),
        sa.UniqueConstraint("game_id", "user_id", name=op.f("uq_seats_game_id_user_id")),
    )
    op.create_index(op.f("ix_seats_game_id"), "seats", ["game_id"], unique=False)
    op.create_table(
        "ballots",
        sa.Column("seat_id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("voter_key", sa.String(length=32), nullable=False),
        sa.Column("target", sa.String(length=32), nullable=False),
        sa.Column(
            "cast_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.Column("clicked_at", sa.Numeric(precision=17, scale=6), nullable=True),
        sa.CheckConstraint("target <> voter_key", name=op.f("ck_ballots_not_for_oneself")),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_ballots_game_id_games"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["seat_id"], ["seats.id"], name=op.f("fk_ballots_seat_id_seats"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("seat_id", name=op.f("pk_ballots")),
    )
    op.create_index(op.f("ix_ballots_game_id"), "ballots", ["game_id"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index(op.f("ix_ballots_game_id"), table_name="ballots")
    op.drop_table("ballots")
    op.drop_index(op.f("ix_seats_game_id"), table_name="seats")
    op.drop_table("seats")
    op.drop_table("scores")
    op.drop_index(
        "uq_games_one_open_per_channel",
        table_name="games",
        postgresql_where=sa.text("phase IN ('lobby', 'night', 'day', 'vote')"),
    )
    op.drop_index(
        "ix_games_open_deadline",
        table_name="games",
        postgresql_where=sa.text("phase IN ('lobby', 'night', 'day', 'vote')"),
    )
    op.drop_table("games")
