"""standing tables, regulars, seasons, and when each game was decided

Revision ID: 0005
Revises: 0004_people
Create Date: 2026-12-01 10:50:00.000000

Written from the models and checked with ``alembic check``. Games decided before this
revision have no ``finished_at``; they count as finished when their row last changed.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004_people"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("games", sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE games SET finished_at = updated_at WHERE phase = 'over'")
    op.create_table(
        "standing_tables",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("channel_id", sa.String(length=32), nullable=False),
        sa.Column("weekdays", sa.Integer(), nullable=False),
        sa.Column("minute_of_day", sa.Integer(), nullable=False),
        sa.Column("zone", sa.String(length=64), nullable=False),
        sa.Column("lobby_minutes", sa.Integer(), nullable=False),
        sa.Column("next_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("owner_user_id", sa.String(length=32), nullable=False),
        sa.Column("paused", sa.String(length=64), nullable=True),
        sa.Column("lobby_game_id", sa.Integer(), nullable=True),
        sa.Column("lobby_closes_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "lobby_minutes BETWEEN 2 AND 60",
            name=op.f("ck_standing_tables_lobby_minutes_in_bounds"),
        ),
        sa.CheckConstraint(
            "minute_of_day BETWEEN 0 AND 1439",
            name=op.f("ck_standing_tables_minute_of_day_in_day"),
        ),
        sa.CheckConstraint(
            "weekdays > 0 AND weekdays < 128", name=op.f("ck_standing_tables_weekdays_chosen")
        ),
        sa.ForeignKeyConstraint(
            ["lobby_game_id"],
            ["games.id"],
            name=op.f("fk_standing_tables_lobby_game_id_games"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("team_id", "channel_id", name=op.f("pk_standing_tables")),
    )
    op.create_index(
        "ix_standing_tables_next_at",
        "standing_tables",
        ["next_at"],
        unique=False,
        postgresql_where=sa.text("paused IS NULL"),
    )
    op.add_column(
        "channel_settings",
        sa.Column("season", sa.String(length=8), server_default="month", nullable=False),
    )
    op.create_check_constraint(
        op.f("ck_channel_settings_season_known"),
        "channel_settings",
        "season IN ('month', 'quarter')",
    )
    op.create_table(
        "season_wrap_ups",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("channel_id", sa.String(length=32), nullable=False),
        sa.Column("season", sa.String(length=16), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column(
            "posted_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_season_wrap_ups_game_id_games"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("team_id", "channel_id", "season", name=op.f("pk_season_wrap_ups")),
    )
    op.create_table(
        "regulars",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("channel_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column(
            "since", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.PrimaryKeyConstraint("team_id", "channel_id", "user_id", name=op.f("pk_regulars")),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("regulars")
    op.drop_table("season_wrap_ups")
    op.drop_constraint(op.f("ck_channel_settings_season_known"), "channel_settings", type_="check")
    op.drop_column("channel_settings", "season")
    op.drop_index(
        "ix_standing_tables_next_at",
        table_name="standing_tables",
        postgresql_where=sa.text("paused IS NULL"),
    )
    op.drop_table("standing_tables")
    op.drop_column("games", "finished_at")
