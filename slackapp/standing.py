"""Standing tables: each channel's schedule opens its lobby by itself, once per opening.

The timers' sweep calls :meth:`StandingTables.sweep` every few seconds in every process. It
locks the due schedules (skipping rows another process holds), lets the engine's
:func:`~slackapp.game.schedule.wake` decide, opens at most one lobby per opening and arms the
next opening, all in one transaction: so an opening fires once however many processes wake,
and a restart between arming and firing loses nothing, since the armed instant is a row.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db import games, standing
from slackapp.db.engine import transaction
from slackapp.db.models import Game, StandingTable
from slackapp.delivery.outbox import enqueue
from slackapp.game import machine as m
from slackapp.game.schedule import Schedule, wake
from slackapp.logs import log_context
from slackapp.steps import Steps, new_table, utc_now

log = logging.getLogger(__name__)


def invitation(schedule: Schedule, regulars: list[str]) -> str:
    """The line that goes with a standing table's lobby: the regulars, mentioned."""
    line = (
        f"Fika time: the standing table is open for {schedule.lobby_minutes} minutes. "
        "Press *Join* to play."
    )
    if regulars:
        line += " " + " ".join(f"<@{user}>" for user in regulars)
    return line


class StandingTables:
    def __init__(self, steps: Steps, now: Callable[[], datetime] = utc_now) -> None:
        self.steps = steps
        self.sessions: sessionmaker[Session] = steps.sessions
        self.now = now

    def sweep(self) -> list[int]:
        """Open the lobbies that are due and close those whose time is up; the games opened."""
        opened = self.open_due()
        self.close_due()
        return opened

    def open_due(self) -> list[int]:
        now = self.now()
        opened: list[int] = []
        with transaction(self.sessions) as session:
            for row in standing.due(session, now):
                with log_context(team_id=row.team_id, channel_id=row.channel_id):
                    game_id = self._fire(session, row, now)
                if game_id is not None:
                    opened.append(game_id)
        for game_id in opened:
            self.steps.deliverer.kick(game_id)
        return opened

    def _fire(self, session: Session, row: StandingTable, now: datetime) -> int | None:
        schedule = standing.schedule_of(row)
        woke = wake(schedule, row.next_at, now)
        row.next_at = woke.rearm
        if woke.opening is None:
            log.info("standing table missed its opening")
            return None
        if games.open_in(session, row.team_id, row.channel_id) is not None:
            log.info("standing table skipped: a game is running")
            return None
        try:
            with session.begin_nested():  # a /varulv racing in keeps the channel's one table
                game, opened = new_table(
                    session,
                    row.team_id,
                    row.channel_id,
                    self.steps.lengths,
                    row.owner_user_id,
                    "",
                    seat_host=False,
                )
                regulars = standing.regulars(session, row.team_id, row.channel_id)
                say = m.Say(invitation(schedule, regulars))
                enqueue(session, game, (*opened.effects, say))
        except IntegrityError:
            log.info("standing table skipped: a table was just opened")
            return None
        row.lobby_game_id = game.id
        row.lobby_closes_at = woke.opening + schedule.lobby_length
        log.info("standing table opened", extra={"game_id": game.id})
        return game.id

    def close_due(self) -> list[int]:
        """Close each standing table's lobby whose time is up (a started game goes on)."""
        with transaction(self.sessions) as session:
            due = standing.lobbies_to_close(session, self.now())
        for game_id in due:
            self.steps.act(game_id, m.CloseLobby())
        return due


def pause_for_channel_of(sessions: sessionmaker[Session], game_id: int, error: str) -> None:
    """Slack refuses to post in a game's channel for good: the channel's standing table stops
    opening tables there until someone sets it again."""
    with transaction(sessions) as session:
        game = session.get(Game, game_id)
        if game is not None and standing.pause(session, game.team_id, game.channel_id, error):
            with log_context(team_id=game.team_id, channel_id=game.channel_id):
                log.info("standing table paused", extra={"error": error})
