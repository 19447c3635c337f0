"""Standing tables: each channel's schedule opens its lobby by itself, once per opening.

The timers' sweep calls :meth:`StandingTables.sweep` every few seconds in every process that
keeps the timers. It locks the due schedules (skipping rows another process holds), lets the
engine's :func:`~slackapp.game.schedule.wake` decide, opens at most one lobby per opening and
arms the next opening, all in one transaction: so an opening fires once however many processes
wake, and a restart between arming and firing loses nothing, since the armed instant is a row.
Should that transaction fail, each due schedule is fired in a transaction of its own, so one
that fails holds no other back: it stays due, and each sweep tries it again while its lobby may
still open. A lobby whose closing fails is left open and tried again at each sweep; the others
close.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

import slackapp.blocks.schedule as schedule_screen
from slackapp.blocks.words import words
from slackapp.blocks.wrapup import wrap_up_text
from slackapp.db import games, history, standing, streams
from slackapp.db.engine import first_line, outside_transaction, transaction
from slackapp.db.models import Game, SeasonWrapUp, StandingTable
from slackapp.delivery.outbox import enqueue
from slackapp.game import machine as m
from slackapp.game.effects import Say
from slackapp.game.schedule import BadSchedule, Schedule, after_a_fault, wake
from slackapp.game.seasons import season_to_wrap_up, wrap_up
from slackapp.logs import database_down, log_context
from slackapp.services.game import GameService
from slackapp.services.uow import Kick, new_table, utc_now

log = logging.getLogger(__name__)


class StandingTables:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        lengths: m.Lengths,
        deliverer: Kick,
        game_service: GameService,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self.sessions = sessions
        self.lengths = lengths
        """A channel's phase lengths, until it sets its own."""
        self.deliverer = deliverer
        """Kicked once a standing table's lobby is in the outbox."""
        self.game_service = game_service
        """Closes a lobby whose time is up, as any step of its game."""
        self.now = now
        self._failing_to_open: set[Channel] = set()
        """The channels whose opening failed here and has not gone through since, and the
        lobbies (games) whose closing did: an ERROR the first time, DEBUG while it keeps
        failing."""
        self._failing_to_close: set[int] = set()

    def sweep(self) -> list[int]:
        """Open the lobbies that are due and close those whose time is up; the games opened."""
        opened = self.open_due()
        self.close_due()
        return opened

    def open_due(self) -> list[int]:
        """Open the lobby of each standing table that is due; the games opened.

        Every due table is fired in one transaction. Should that fail, it is rolled back and
        each table is fired in a transaction of its own (:meth:`_open_each`), so one that
        cannot be opened never holds the others back."""
        now = self.now()
        due: list[Channel] = []
        fired: list[Fired] = []
        try:
            with transaction(self.sessions) as session:
                rows = standing.due(session, now)
                due = [(row.team_id, row.channel_id) for row in rows]
                for row in rows:
                    with log_context(team_id=row.team_id, channel_id=row.channel_id):
                        fired.append(self._fire(session, row, now))
        except Exception as error:
            if not due or database_down(error):
                raise  # no table's own fault: the timers log it, and the next sweep tries again
            # Each table's own failure is logged as it is opened alone.
            log.debug(
                "opening %d due standing tables together failed (%s); each is opened alone",
                len(due),
                first_line(error),
            )
            fired = self._open_each(due, now)
        else:
            for each in fired:
                each.log()
        self._failing_to_open -= {(each.team_id, each.channel_id) for each in fired}
        opened = [each.game_id for each in fired if each.game_id is not None]
        for game_id in opened:
            self.deliverer.kick(game_id)
        return opened

    def _open_each(self, due: list[Channel], now: datetime) -> list[Fired]:
        """Fire each of the ``due`` standing tables in a transaction of its own; one that
        fails is rolled back alone (:meth:`_failed`)."""
        fired = []
        for team_id, channel_id in due:
            with log_context(team_id=team_id, channel_id=channel_id):
                try:
                    with transaction(self.sessions) as session:
                        row = standing.lock_due(session, team_id, channel_id, now)
                        if row is None:  # fired or changed meanwhile, or another process's
                            continue
                        done = self._fire(session, row, now)
                except Exception as error:
                    if database_down(error):  # every table would fail: the next sweep
                        log.exception("opening a standing table failed; the next sweep tries again")
                        break
                    self._failed(team_id, channel_id, now, error)
                    continue
                done.log()
                fired.append(done)
        return fired

    def _failed(self, team_id: str, channel_id: str, now: datetime, error: Exception) -> None:
        """Opening the channel's standing table failed with ``error``, alone. It stays due,
        and the next sweep tries again while its lobby may still open; one whose schedule
        cannot be read is armed for later (:func:`~slackapp.game.schedule.after_a_fault`)."""
        try:
            with transaction(self.sessions) as session:
                row = standing.lock_due(session, team_id, channel_id, now)
                if row is None:  # fired or changed meanwhile, or another process's
                    return
                try:
                    schedule: Schedule | None = standing.schedule_of(row)
                except BadSchedule:  # e.g. its zone is no longer in this machine's database
                    schedule = None
                again = after_a_fault(schedule, now)
                if again is not None:
                    row.next_at = again
        except Exception as stuck:
            log.error(
                "opening the standing table failed, and so did reading its schedule (%s); the "
                "next sweep tries again",
                first_line(stuck),
                exc_info=error,
            )
            return
        if again is not None:
            log.error(
                "opening the standing table failed, and its schedule cannot be read; it is "
                "tried again at %s",
                again.isoformat(),
                exc_info=error,
            )
        elif (team_id, channel_id) in self._failing_to_open:
            log.debug("opening the standing table failed again", exc_info=error)
        else:
            self._failing_to_open.add((team_id, channel_id))
            log.error(
                "opening the standing table failed; each sweep tries again while its lobby "
                "may still open",
                exc_info=error,
            )

    def _fire(self, session: Session, row: StandingTable, now: datetime) -> Fired:
        schedule = standing.schedule_of(row)
        woke = wake(schedule, row.next_at, now)
        row.next_at = woke.rearm
        where = (row.team_id, row.channel_id)
        if woke.opening is None:
            return Fired(*where, None, "standing table missed its opening")
        if games.open_in(session, row.team_id, row.channel_id) is not None:
            return Fired(*where, None, "standing table skipped: a game is running")
        table = new_table(
            session,
            row.team_id,
            row.channel_id,
            self.lengths,
            row.owner_user_id,
            "",
            seat_host=False,
            enterprise_id=row.enterprise_id,
        )
        if table is None:  # a /varulv racing in keeps the channel's one table
            return Fired(*where, None, "standing table skipped: a table was just opened")
        game, opened = table
        regulars = standing.regulars(session, row.team_id, row.channel_id)
        spoken = words(opened.state.language)
        say = Say(schedule_screen.invitation(schedule, regulars, spoken))
        enqueue(session.connection(), game, (*opened.effects, say))
        row.lobby_game_id = game.id
        row.lobby_closes_at = woke.opening + schedule.lobby_length
        return Fired(*where, game.id, "standing table opened")

    def close_due(self) -> list[int]:
        """Close each standing table's lobby whose time is up (a started game goes on); the
        games stepped. One whose step fails is left open and tried again at the next sweep;
        the others are closed."""
        with outside_transaction(self.sessions) as session:
            due = standing.lobbies_to_close(session, self.now())
        closed = []
        for lobby in due:
            with log_context(
                team_id=lobby.team_id, channel_id=lobby.channel_id, game_id=lobby.game_id
            ):
                try:
                    self.game_service.act(lobby.game_id, m.CloseLobby())
                    with transaction(self.sessions) as session:
                        standing.lobby_closed(session, lobby)
                except Exception as error:
                    if database_down(error):  # every lobby would fail: the next sweep
                        raise
                    if lobby.game_id in self._failing_to_close:
                        log.debug("closing the standing table's lobby failed again", exc_info=True)
                    else:
                        self._failing_to_close.add(lobby.game_id)
                        log.exception(
                            "closing the standing table's lobby failed; each sweep tries again"
                        )
                    continue
            self._failing_to_close.discard(lobby.game_id)
            closed.append(lobby.game_id)
        return closed


Channel = tuple[str, str]
"""A channel: its workspace's id and its own."""


@dataclass(frozen=True)
class Fired:
    """What a standing table that was due did, once committed: the lobby it opened, if any."""

    team_id: str
    channel_id: str
    game_id: int | None
    said: str

    def log(self) -> None:
        with log_context(team_id=self.team_id, channel_id=self.channel_id):
            log.info(self.said, extra={} if self.game_id is None else {"game_id": self.game_id})


WRAP_UP_SECONDS = 60.0
"""How often a process looks for seasons that ended: a wrap-up may wait that long."""
RECENT_DAYS = 100
"""Channels with a game decided this recently may have a season (up to a quarter) to wrap up."""


class SeasonWrapUps:
    """When a channel's season ends, its wrap-up is posted once, by whichever process first
    writes the season's row (the post goes out with the row, through the outbox)."""

    def __init__(self, sessions: sessionmaker[Session], now: Callable[[], datetime] = utc_now):
        self.sessions = sessions
        self.now = now
        self._last_look: datetime | None = None
        self._failing: set[Channel] = set()
        """Channels whose wrap-up failed here and has not gone through since."""

    def sweep(self) -> list[int]:
        now = self.now()
        if (
            self._last_look is not None
            and (now - self._last_look).total_seconds() < WRAP_UP_SECONDS
        ):
            return []
        self._last_look = now
        return self.post_due(now)

    def post_due(self, now: datetime) -> list[int]:
        """Post every wrap-up due at ``now``; the games whose messages carry them."""
        with outside_transaction(self.sessions) as session:
            channels = session.execute(
                select(Game.team_id, Game.channel_id)
                .where(
                    Game.phase == m.Phase.OVER.value,
                    Game.finished_at >= now - timedelta(days=RECENT_DAYS),
                )
                .distinct()
            ).all()
        self._failing &= {(team_id, channel_id) for team_id, channel_id in channels}
        posted = []
        for team_id, channel_id in channels:
            with log_context(team_id=team_id, channel_id=channel_id):
                try:
                    game_id = self._post(team_id, channel_id, now)
                except Exception as error:
                    if database_down(error):  # every channel would fail: the next sweep
                        raise
                    self._failed((team_id, channel_id))
                    continue
            self._failing.discard((team_id, channel_id))
            if game_id is not None:
                posted.append(game_id)
        return posted

    def _failed(self, channel: Channel) -> None:
        """One channel's wrap-up failed: the others go on, and it is tried again at the next
        sweep; an ERROR the first time, then DEBUG while it keeps failing."""
        if channel in self._failing:
            log.debug("a season's wrap-up failed again", exc_info=True)
            return
        self._failing.add(channel)
        log.exception("a season's wrap-up failed; the other channels' go on")

    def _post(self, team_id: str, channel_id: str, now: datetime) -> int | None:
        with transaction(self.sessions) as session:
            length, zone = history.season_rules(session, team_id, channel_id)
            season = season_to_wrap_up(now, length, zone)
            if session.get(SeasonWrapUp, (team_id, channel_id, season.key)) is not None:
                return None
            records = history.season_records(session, team_id, channel_id, season, zone)
            wrap = wrap_up(season, records)
            last = history.last_finished_in(session, team_id, channel_id, season, zone)
            if wrap is None or last is None:
                return None
            claimed = session.execute(
                insert(SeasonWrapUp)
                .values(team_id=team_id, channel_id=channel_id, season=season.key, game_id=last)
                .on_conflict_do_nothing()
                .returning(SeasonWrapUp.season)
            ).first()
            if claimed is None:  # another process posted it
                return None
            connection = session.connection()
            game = games.lock(connection, last)
            assert game is not None
            said = wrap_up_text(wrap, words(game.state.language))
            enqueue(connection, game, (Say(said),))
            log.info("season wrapped up", extra={"game_id": last})
        return last


def pause_for_channel_of(sessions: sessionmaker[Session], stream: int, error: str) -> str | None:
    """Slack refuses to post in the channel of an outbox stream (a game's, or a notice's) for
    good: the channel's standing table stops opening tables there until someone sets it
    again. Who set it, when this paused it."""
    with transaction(sessions) as session:
        game = session.get(Game, stream)
        where = (game.team_id, game.channel_id) if game else streams.channel_of(session, stream)
        owner = None if where is None else standing.pause(session, *where, error)
    if where is not None and owner is not None:
        with log_context(team_id=where[0], channel_id=where[1]):
            log.info("standing table paused", extra={"error": error})
    return owner
