"""Standing tables and regulars: the rows, read as the engine's :class:`Schedule` and back."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, time
from typing import NamedTuple

from sqlalchemy import ColumnElement, and_, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from slackapp.db.models import Regular, StandingTable
from slackapp.game.schedule import Schedule, next_opening


def schedule_of(row: StandingTable, zone: str | None = None) -> Schedule:
    """The row's schedule; in ``zone`` instead of its own, when given (raises BadSchedule
    for a zone this machine does not know)."""
    weekdays = frozenset(day for day in range(7) if row.weekdays & (1 << day))
    at = time(row.minute_of_day // 60, row.minute_of_day % 60)
    return Schedule(
        weekdays=weekdays, at=at, zone=zone or row.zone, lobby_minutes=row.lobby_minutes
    )


def get(session: Session, team_id: str, channel_id: str) -> StandingTable | None:
    return session.get(StandingTable, (team_id, channel_id))


def elsewhere(
    session: Session, team_id: str, channel_id: str, limit: int
) -> tuple[list[StandingTable], int]:
    """Up to ``limit`` of the workspace's standing tables in other channels (the paused ones
    first, then by channel), and how many there are in all."""
    found = session.execute(
        select(StandingTable, func.count().over())  # the count before the limit, in one read
        .where(StandingTable.team_id == team_id, StandingTable.channel_id != channel_id)
        .order_by(StandingTable.paused.is_(None), StandingTable.channel_id)
        .limit(limit)
    ).all()
    return [row for row, _ in found], int(found[0][1]) if found else 0


def save(
    session: Session,
    team_id: str,
    channel_id: str,
    owner: str,
    schedule: Schedule,
    now: datetime,
    enterprise_id: str | None = None,
) -> StandingTable:
    """Keep the channel's schedule (replacing any), armed for its first opening after ``now``;
    ``enterprise_id``: the workspace's Enterprise Grid organisation, which its tables keep."""
    values = {
        "enterprise_id": enterprise_id,
        "weekdays": sum(1 << day for day in schedule.weekdays),
        "minute_of_day": schedule.at.hour * 60 + schedule.at.minute,
        "zone": schedule.zone,
        "lobby_minutes": schedule.lobby_minutes,
        "next_at": next_opening(schedule, now),
        "owner_user_id": owner,
        "paused": None,
    }
    session.execute(
        insert(StandingTable)
        .values(team_id=team_id, channel_id=channel_id, **values)
        .on_conflict_do_update(index_elements=["team_id", "channel_id"], set_=values)
    )
    row = session.get(StandingTable, (team_id, channel_id), populate_existing=True)
    assert row is not None
    return row


def remove(session: Session, team_id: str, channel_id: str) -> bool:
    done = session.execute(
        delete(StandingTable).where(
            StandingTable.team_id == team_id, StandingTable.channel_id == channel_id
        )
    )
    return bool(done.rowcount)  # type: ignore[attr-defined]


def _due(now: datetime) -> ColumnElement[bool]:
    return and_(StandingTable.paused.is_(None), StandingTable.next_at <= now)


def due(session: Session, now: datetime) -> list[StandingTable]:
    """Running schedules armed at or before ``now``, locked; rows another process holds are
    skipped (it is firing them)."""
    return list(
        session.scalars(
            select(StandingTable)
            .where(_due(now))
            .order_by(StandingTable.next_at)
            .with_for_update(skip_locked=True)
        )
    )


def lock_due(
    session: Session, team_id: str, channel_id: str, now: datetime
) -> StandingTable | None:
    """The channel's schedule, locked, if it runs and is armed at or before ``now``; None if
    it is not (fired, moved, paused or removed meanwhile), or another process holds it."""
    return session.scalars(
        select(StandingTable)
        .where(StandingTable.team_id == team_id, StandingTable.channel_id == channel_id, _due(now))
        .with_for_update(skip_locked=True)
    ).first()


class Lobby(NamedTuple):
    """A lobby a standing table opened, whose time is up."""

    team_id: str
    channel_id: str
    game_id: int


def lobbies_to_close(session: Session, now: datetime) -> list[Lobby]:
    """Lobbies a standing table opened whose time is up. Each row names its lobby until
    :func:`lobby_closed` says it was closed, so a close that failed is tried again."""
    rows = session.execute(
        select(StandingTable.team_id, StandingTable.channel_id, StandingTable.lobby_game_id)
        .where(StandingTable.lobby_game_id.is_not(None), StandingTable.lobby_closes_at <= now)
        .order_by(StandingTable.lobby_closes_at)
    ).all()
    return [
        Lobby(team_id, channel_id, game_id)
        for team_id, channel_id, game_id in rows
        if game_id is not None
    ]


def lobby_closed(session: Session, lobby: Lobby) -> None:
    """The standing table's lobby was closed (or had started): its row names it no longer."""
    session.execute(
        update(StandingTable)
        .where(
            StandingTable.team_id == lobby.team_id,
            StandingTable.channel_id == lobby.channel_id,
            StandingTable.lobby_game_id == lobby.game_id,
        )
        .values(lobby_game_id=None, lobby_closes_at=None)
    )


def pause(session: Session, team_id: str, channel_id: str, why: str) -> str | None:
    """Pause the channel's standing table, if it has one that runs: who set it, or None."""
    row = session.get(StandingTable, (team_id, channel_id), with_for_update=True)
    if row is None or row.paused is not None:
        return None
    row.paused = why[:64]
    return row.owner_user_id


UNINSTALLED = "app_uninstalled"
"""Why a workspace's standing tables are paused while Varulv is not installed there: each
would open a lobby that no token can show. Installing Varulv again lets them run."""
MENDED_BY_INSTALLING = frozenset(
    {
        UNINSTALLED,
        "account_inactive",
        "invalid_auth",
        "not_authed",
        "token_revoked",
        "missing_scope",
        "team_access_not_granted",
    }
)
"""What a new installation mends: a table paused for one of these (Slack refusing a token
the uninstall had just revoked, say) runs again once Varulv is installed again."""


def _of_workspace(team_id: str | None, enterprise_id: str | None) -> ColumnElement[bool]:
    """The workspace's standing tables; with ``team_id`` None, those of every workspace of the
    organisation ``enterprise_id``."""
    if team_id is None:
        return StandingTable.enterprise_id == (enterprise_id or "")
    return StandingTable.team_id == team_id


def pause_uninstalled(session: Session, team_id: str | None, enterprise_id: str | None) -> int:
    """Pause the running standing tables of a workspace that removed Varulv; how many."""
    paused = session.execute(
        update(StandingTable)
        .where(_of_workspace(team_id, enterprise_id), StandingTable.paused.is_(None))
        .values(paused=UNINSTALLED)
    )
    return int(paused.rowcount)  # type: ignore[attr-defined]


def resume_installed(session: Session, team_id: str | None, enterprise_id: str | None) -> int:
    """Let the standing tables paused by :func:`pause_uninstalled`, or by a refused token,
    run again, once Varulv is installed there again; how many. Each opens next at its next
    time (an opening missed meanwhile is not made up)."""
    resumed = session.execute(
        update(StandingTable)
        .where(
            _of_workspace(team_id, enterprise_id),
            StandingTable.paused.in_(MENDED_BY_INSTALLING),
        )
        .values(paused=None)
    )
    return int(resumed.rowcount)  # type: ignore[attr-defined]


def regulars(session: Session, team_id: str, channel_id: str) -> list[str]:
    return list(
        session.scalars(
            select(Regular.user_id)
            .where(Regular.team_id == team_id, Regular.channel_id == channel_id)
            .order_by(Regular.since, Regular.user_id)
        )
    )


def toggle_regular(session: Session, team_id: str, channel_id: str, user_id: str) -> bool:
    """Mark or unmark "I usually play"; True when the person is now marked."""
    gone = session.execute(
        delete(Regular).where(
            Regular.team_id == team_id,
            Regular.channel_id == channel_id,
            Regular.user_id == user_id,
        )
    )
    if gone.rowcount:  # type: ignore[attr-defined]
        return False
    session.execute(
        insert(Regular)
        .values(team_id=team_id, channel_id=channel_id, user_id=user_id)
        .on_conflict_do_nothing()
    )
    return True


def channels_of_regular(session: Session, teams: Sequence[str], user_id: str) -> list[str]:
    return list(
        session.scalars(
            select(Regular.channel_id)
            .where(Regular.team_id.in_(teams), Regular.user_id == user_id)
            .order_by(Regular.channel_id)
        )
    )
