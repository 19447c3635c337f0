"""Retention: the details of ended games are deleted once they are old, daily and by
``varulv prune``; what people earned stays.

A game that ended (revealed, cancelled or stopped) more than ``VARULV_RETENTION_DAYS`` ago
(default 90) is deleted with its seats, cards, night choices, ballots and messages, and so is
a channel's notice written that long ago (``db.streams``). Kept: the
channels' scores, their settings and schedules, the seasons' wrap-ups, and every game its
season may still count (a revealed game is kept until the season it was decided in has ended
and its wrap-up was due, even when that is later than the retention days). A running game is
never touched, however old.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import Engine, delete, func, select
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db import history
from slackapp.db.engine import transaction
from slackapp.db.models import Game
from slackapp.db.streams import delete_strays, delete_streams, notices_before
from slackapp.game import machine as m
from slackapp.game.seasons import season_to_wrap_up

if TYPE_CHECKING:
    from slackapp.config import Settings

log = logging.getLogger(__name__)

PRUNE_EVERY = timedelta(days=1)
BATCH = 500
"""Games deleted per transaction, so that a first prune of years of games holds no lock long."""


@dataclass(frozen=True)
class Pruned:
    games: int
    kept_for_their_season: int


def prune(sessions: sessionmaker[Session], now: datetime, days: int) -> Pruned:
    """Delete the ended games older than ``days`` that no season still counts."""
    cutoff = now - timedelta(days=days)
    ended = func.coalesce(Game.finished_at, Game.updated_at)
    open_phases = [phase.value for phase in m.OPEN_PHASES]
    deleted = kept = 0
    after_id = 0
    with transaction(sessions) as session:
        # Found first and deleted by stream, as the games are: a statement that chose them
        # itself would be planned for as many as PostgreSQL guesses, and read the whole outbox
        # for a guess of thousands.
        old = session.scalars(notices_before(cutoff)).all()
        for at in range(0, len(old), BATCH):
            delete_streams(session, list(old[at : at + BATCH]))
        delete_strays(session, now)
    while True:
        with transaction(sessions) as session:
            rows = session.execute(
                select(Game.id, Game.team_id, Game.channel_id, Game.phase, ended)
                .where(Game.phase.not_in(open_phases), ended < cutoff, Game.id > after_id)
                .order_by(Game.id)
                .limit(BATCH)
                .with_for_update(skip_locked=True)
            ).all()
            if not rows:
                return Pruned(deleted, kept)
            after_id = rows[-1].id
            bounds: dict[tuple[str, str], datetime] = {}
            doomed = []
            for row in rows:
                if row.phase == m.Phase.OVER.value:
                    channel = (row.team_id, row.channel_id)
                    if channel not in bounds:
                        bounds[channel] = _counted_from(session, *channel, now)
                    if row[4] >= bounds[channel]:
                        kept += 1
                        continue
                doomed.append(row.id)
            if doomed:
                delete_streams(session, doomed)
                session.execute(delete(Game).where(Game.id.in_(doomed)))
                deleted += len(doomed)


def _counted_from(session: Session, team_id: str, channel_id: str, now: datetime) -> datetime:
    """The first instant whose revealed games the channel's seasons may still count: the start
    of the season whose wrap-up may still be due."""
    length, zone = history.season_rules(session, team_id, channel_id)
    return season_to_wrap_up(now, length, zone).starts(zone)


class Retention:
    """The scheduler's daily prune: each sweep (slackapp.timers) asks, and once a day it runs.
    Several processes may each prune the same day: a game is deleted once, whoever locks it."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        days: int,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.sessions = sessions
        self.days = days
        self.now = now
        self._last: datetime | None = None

    def sweep(self) -> Pruned | None:
        now = self.now()
        if self._last is not None and now - self._last < PRUNE_EVERY:
            return None
        self._last = now
        pruned = prune(self.sessions, now, self.days)
        if pruned.games:
            log.info(
                "pruned ended games older than %d days", self.days, extra={"count": pruned.games}
            )
        return pruned


def prune_command(engine: Engine, settings: Settings) -> str:
    """``varulv prune``: what it did, for a person."""
    days = settings.retention_days
    pruned = prune(sessionmaker(engine), datetime.now(UTC), days)
    kept = (
        f"; {pruned.kept_for_their_season} older ones are kept until their season is final"
        if pruned.kept_for_their_season
        else ""
    )
    return f"pruned {pruned.games} games that ended more than {days} days ago{kept}"
