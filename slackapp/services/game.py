"""The game service: every step of a game the listeners and the timers run.

Each step is the unit of work's (``slackapp.services.uow``): one short transaction that
decides, stores and writes the outbox. After the commit this hands what the step showed to
the deliverer and arms or disarms the game's timer, and answers the person who acted. What
*Start* asks of Slack (the people's private message channels and names) comes from the glue
it is given, never from here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from slack_sdk import WebClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

import slackapp.blocks.lobby as lobby_screen
from slackapp import metrics
from slackapp.blocks.ids import STALE
from slackapp.blocks.permissions import refused as refused_text
from slackapp.blocks.said import said
from slackapp.blocks.screen import Screen
from slackapp.blocks.words import ENGLISH, Words, words
from slackapp.db import games, standing
from slackapp.db.channels import channel_choice, choice_in, table_team
from slackapp.db.engine import first_line, outside_transaction, transaction
from slackapp.db.games import GAMES, StoredGame
from slackapp.db.models import Game
from slackapp.delivery.copies import Copy
from slackapp.delivery.deliverer import Taken
from slackapp.delivery.outbox import enqueue
from slackapp.dms import DirectMessages
from slackapp.game import faults
from slackapp.game import machine as m
from slackapp.game.effects import PersonalBallotView
from slackapp.game.lines import Language, Line, Message
from slackapp.game.permissions import Change
from slackapp.game.settings import kept_of
from slackapp.logs import database_down, log_context
from slackapp.names import AsksNames, Names
from slackapp.permits import AdminFlags, channel_standing, checked, refusal_under_lock
from slackapp.services import opening
from slackapp.services.uow import (
    DEADLINE_BATCH,
    Committed,
    HandsOver,
    Kick,
    Permit,
    Take,
    Workspace,
    commit_due,
    commit_give_up,
    commit_step,
    in_words,
    kept_name,
    new_game,
    new_table,
    utc_now,
)
from slackapp.turns import OpensDirectMessages

log = logging.getLogger(__name__)

START_TRIES = 3


class Alarm(Protocol):
    def arm(self, game_id: int, at: datetime) -> None: ...
    def disarm(self, game_id: int) -> None: ...


@dataclass(frozen=True)
class Refused:
    """Why a read has nothing for the person: the machine's line, and the words to say it in
    (the game's, or its channel's when the game is gone)."""

    line: Line
    words: Words

    @property
    def text(self) -> str:
        return said(self.line, self.words)


class FailingDeadlines:
    """The games whose deadline step failed in this process and has not gone through since
    (:class:`slackapp.game.faults.Failing`); shared by the timers' threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._games: dict[int, faults.Failing] = {}

    def failed(self, game_id: int, deadline: datetime, at: datetime) -> faults.Failing:
        """The game's step at ``deadline`` failed at ``at``: how it has been failing. Games
        not tried again for long are forgotten."""
        with self._lock:
            self._games = {
                other: failing
                for other, failing in self._games.items()
                if not failing.forgotten(at)
            }
            failing = faults.failed(self._games.get(game_id), deadline, at)
            self._games[game_id] = failing
            return failing

    def __contains__(self, game_id: object) -> bool:
        """Whether the game's step failed and has not gone through since."""
        with self._lock:
            return game_id in self._games

    def went_through(self, game_ids: list[int]) -> None:
        """The games' steps went through, or they were given up: they count from nothing."""
        with self._lock:
            if self._games:  # the usual case: nothing ever failed
                for game_id in game_ids:
                    self._games.pop(game_id, None)


class GameService:
    """Every step of a game the listeners and the timers run, wired to the deliverer, the
    timers, and the Slack glue *Start* needs."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        lengths: m.Lengths,
        deliverer: Kick,
        alarm: Alarm,
        now: Callable[[], datetime] = utc_now,
        names: Names | None = None,
        dms: DirectMessages | None = None,
    ) -> None:
        self.sessions = sessions
        self.lengths = lengths
        """A new channel's phase lengths, until it sets its own."""
        self.deliverer = deliverer
        self.alarm = alarm
        self.now = now
        self.names = Names(sessions, now) if names is None else names
        """The names *Start* deals the cards under, asked of Slack when unknown or stale."""
        self.dms = DirectMessages() if dms is None else dms
        """The people's private message channels, opened at *Start*."""
        self.failing = FailingDeadlines()
        """The games whose deadline step failed in this process, and since when."""

    @property
    def take(self) -> Take | None:
        """How a step takes its games' delivery in its own transaction, when the deliverer
        runs in this process."""
        return self.deliverer.take if isinstance(self.deliverer, HandsOver) else None

    def _taken(self, session: Session, game_ids: list[int]) -> Taken | None:
        take = self.take
        return None if take is None else take(session.connection(), game_ids)

    def _show(self, game_ids: list[int], taken: Taken | None = None) -> None:
        """After the commit: the games whose leases the step took go to the deliverer, which
        sends what they show at once; else the deliverer is kicked to claim them. A game's
        outbox stream is its id."""
        if taken is not None and isinstance(self.deliverer, HandsOver):
            self.deliverer.hand_over(taken)
            return
        for game_id in game_ids:
            self.deliverer.kick(game_id)

    def _after(self, done: Committed | None, asking: Workspace | None = None) -> str | None:
        if done is None:
            return self.gone(asking)
        if done.shown:
            self._show([done.game_id], done.taken)
        self._rearm(done)
        return done.answer

    def act(
        self,
        game_id: int,
        event: m.Event,
        asking: Workspace | None = None,
        clicked: Copy | None = None,
        permit: Permit | None = None,
    ) -> str | None:
        """A person's command on a game, from the workspace ``asking`` (and, for a click, the
        copy of the message ``clicked``); the answer for them. ``permit``: see
        :func:`commit_step`."""
        done = commit_step(
            self.sessions,
            game_id,
            event,
            self.now,
            asking=asking,
            clicked=clicked,
            take=self.take,
            permit=permit,
        )
        return self._after(done, asking)

    def report(self, game_id: int, event: m.Event) -> None:
        """The deliverer's news that Slack refused something for good."""
        self._after(commit_step(self.sessions, game_id, event, self.now, take=self.take))

    def deadline(self, game_id: int) -> bool:
        """A timer woke for the game; True if it moved. A game another transaction holds is
        left to it (it catches up with the clock too), so no timer thread waits on a game's
        lock (on its lease's row at most, for a claim's short transaction).

        A step that fails is tried again by the next sweep; one that has failed every time
        for :data:`~slackapp.game.faults.FAULT_GRACE` gives the game up (:meth:`_failed`). A
        failure because the database is away counts for nothing, and is raised."""
        try:
            done = commit_step(
                self.sessions, game_id, m.Deadline(), self.now, skip_locked=True, take=self.take
            )
        except Exception as error:
            if database_down(error):
                raise
            return self._failed(game_id, error)
        if done is None:  # no such game, or another transaction holds it
            return False
        self.failing.went_through([game_id])
        self._after(done)
        return bool(done.shown)

    def deadlines_due(self, limit: int = DEADLINE_BATCH) -> int:
        """Step a batch of the games whose deadline has passed; how many were found (fewer
        than ``limit``: none is left that no other transaction holds).

        Should one game's step fail, the batch is rolled back and its games are stepped one
        by one (:meth:`deadline`), so that one game never holds the others' deadlines back,
        and one whose step keeps failing is given up."""
        try:
            done, taken = commit_due(self.sessions, self.now, limit, self.take)
        except Exception as error:
            if database_down(error):  # the outage's log says it once, however many sweeps
                log.exception("a batch of deadlines failed; its games are stepped one by one")
            else:  # each game's own failure is logged by its step, with its traceback
                log.warning(
                    "a batch of deadlines failed (%s); its games are stepped one by one",
                    first_line(error),
                )
            with outside_transaction(self.sessions) as session:
                due = session.scalars(games.due(select(GAMES.c.id), self.now(), limit)).all()
            for game_id in due:
                try:
                    self.deadline(game_id)
                except Exception:
                    log.exception("the deadline of game %s failed; the sweep tries again", game_id)
            return 0  # what failed stays due: the sweep comes back, not this loop
        self.failing.went_through([each.game_id for each in done])
        self._show([each.game_id for each in done if each.shown], taken)
        for each in done:
            self._rearm(each)
        return len(done)

    def _failed(self, game_id: int, error: Exception) -> bool:
        """The game's deadline step failed with ``error``: noted, and the game given up once
        its step has failed every time for ``FAULT_GRACE`` (:mod:`slackapp.game.faults`);
        True if it was. Logged as an ERROR with its traceback the first time at a deadline
        and as the game is given up, and in between at DEBUG only."""
        at = self.now()
        with outside_transaction(self.sessions) as session:
            deadline = session.scalar(
                games.due(select(GAMES.c.deadline), at, 1).where(GAMES.c.id == game_id)
            )
        if deadline is None:  # stepped or ended meanwhile: nothing is failing any more
            self.failing.went_through([game_id])
            return False
        failing = self.failing.failed(game_id, deadline, at)
        if not failing.gives_up():
            if failing.since == at:
                log.error(
                    "the deadline of game %s failed; the sweeps try again, and end the game if "
                    "it fails every time for %d s",
                    game_id,
                    faults.FAULT_GRACE.total_seconds(),
                    exc_info=error,
                    extra={"game_id": game_id},
                )
            else:
                log.debug("game %s: its deadline failed again", game_id, extra={"game_id": game_id})
            return False
        try:
            ended = commit_give_up(self.sessions, game_id, deadline, at, self.take)
        except Exception:  # the database away, or the give-up's own fault: the next sweep
            log.exception("game %s could not be given up; the sweep tries again", game_id)
            return False
        self.failing.went_through([game_id])  # ended, or moved on without this process
        if ended is None:  # stepped or ended meanwhile, or held by a step under way
            return False
        metrics.game_given_up(ended.phase.value)
        with log_context(team_id=ended.team_id, channel_id=ended.channel_id, game_id=game_id):
            log.error(
                "game %s ended: its deadline's step failed every time for %d s (in the %s); "
                "its channel was told, and may open a new game",
                game_id,
                (failing.last - failing.since).total_seconds(),
                ended.phase.value,
                exc_info=error,
            )
        if ended.shown:
            self._show([game_id], ended.taken)
        self.alarm.disarm(game_id)
        return True

    def _rearm(self, done: Committed) -> None:
        if done.deadline is not None:
            self.alarm.arm(done.game_id, done.deadline)
        elif done.deadline_gone:  # a game ended by its last ballot leaves no timer behind
            self.alarm.disarm(done.game_id)

    def open_table(
        self,
        team_id: str,
        channel_id: str,
        user_id: str,
        user_name: str,
        retry: bool = False,
        trigger: str = "",
        enterprise_id: str | None = None,
    ) -> str | None:
        """``/varulv``: a table in the channel with the caller seated, unless one is open.

        ``retry``: Slack is sending the command again. ``trigger``: the command's
        ``trigger_id``, which Slack's retry repeats. If the table open in the channel is this
        person's lobby and was opened by this very command (or this is a retry), it is the one
        table and the person is told nothing twice, whichever delivery came first.
        """

        def same_command(running: Game) -> bool:
            own = running.phase == m.Phase.LOBBY and running.host_user_id == user_id
            return own and (retry or (bool(trigger) and running.opened_by_trigger == trigger))

        hands = self.deliverer if isinstance(self.deliverer, HandsOver) else None
        with outside_transaction(self.sessions) as session:
            connection = session.connection()
            known = opening.read(connection, team_id, channel_id, user_id, self.lengths)
            lease = None if hands is None else hands.new_lease(known.game_id)
            args = (team_id, channel_id, user_id, user_name, enterprise_id, trigger or None)
            written = None
            try:
                written = opening.open_new(connection, known, *args, lease)
            finally:
                if written is None and hands is not None:
                    hands.not_opened(known.game_id)
        if written is not None:  # the usual /varulv: its channel was free
            new = frozenset({written.game.id})
            if hands is not None:  # what it shows, in memory: nothing to read back
                hands.hand_over(Taken(new, new), {written.game.id: written.to_show(self.now())})
            else:
                self.deliverer.kick(written.game.id)
            return None
        with transaction(self.sessions) as session:  # why not: a table is open, perhaps ours
            table = new_table(
                session,
                team_id,
                channel_id,
                self.lengths,
                user_id,
                kept_name(session.connection(), team_id, user_id, user_name),
                enterprise_id=enterprise_id,
                opened_by_trigger=trigger or None,
            )
            if table is None:  # the channel has a table: perhaps this same command's
                running = games.open_in(session, team_id, channel_id)
                if running is not None and same_command(running):
                    return None
                return self._open_already(session, running, team_id, channel_id, user_id)
            game, opened = table
            enqueue(session.connection(), game, opened.effects)
            taken = self._taken(session, [game.id])
        self._show([game.id], taken)
        return None

    def play_again(
        self, game_id: int, user_id: str, user_name: str, asking: Workspace | None = None
    ) -> str | None:
        """*Play again* on a reveal: the next table in its channel, its people seated again.

        The revealed game's row is locked first, so of several clicks at once one opens the
        table and the others find it open (the one-open-game index stands behind that).
        """
        with transaction(self.sessions) as session:
            previous = games.lock(session.connection(), game_id)
            if previous is not None and asking is not None and not asking.owns(previous):
                return in_words(previous.state, Line(Message.ANOTHER_WORKSPACE))
            last = None if previous is None else previous.state
            refusal = m.play_again_refusal(last)
            if previous is None or last is None:
                return self.gone(asking)
            if refusal is not None:
                return in_words(last, refusal)
            team_id, channel_id = previous.team_id, previous.channel_id
            # The channel's settings as they are now: a change during the game was announced
            # for the next table.
            chosen = choice_in(session, team_id, channel_id, self.lengths)
            lengths = m.Lengths(chosen.night_seconds, chosen.day_seconds, chosen.vote_seconds)
            kept = kept_of(chosen)
            game = new_game(
                session, team_id, channel_id, user_id, lengths, kept, previous.enterprise_id
            )
            if game is None:  # a /varulv in the channel came first
                running = games.open_in(session, team_id, channel_id)
                return self._open_already(session, running, team_id, channel_id, user_id)
            name = kept_name(session.connection(), team_id, user_id, user_name)
            opened = m.play_again(last, game.id, game.seed, user_id, name, lengths, kept)
            if opened.state.host != game.host_user_id:  # the previous host, still seated
                games.rehost(session.connection(), game.id, opened.state.host)
            games.store_new(session, game, opened.state)
            enqueue(session.connection(), game, opened.effects)
            taken = self._taken(session, [game.id])
        self._show([game.id], taken)
        return None

    def start(
        self,
        game_id: int,
        user_id: str,
        client: OpensDirectMessages,
        asking: Workspace | None = None,
        clicked: Copy | None = None,
        slack_names: AsksNames | None = None,
    ) -> str | None:
        """*Start*: deal and begin the night, once every person's private message is open.

        The DMs are opened before the step, with no lock held; Slack being busy fails the
        click (nothing changed), and a person Slack will not open a DM with stops the start.
        Someone who sat down meanwhile has their DM opened too, and the start is tried again.
        With ``slack_names``, the names still unknown or stale are asked of Slack first, in
        one go, and the cards are dealt under them (see slackapp.names).
        """
        channels: dict[str, str] = {}
        unreachable: list[str] = []
        named: dict[str, str] = {}
        asked: set[str] = set()
        for _ in range(START_TRIES):
            game = self._stored(game_id, asking)
            if isinstance(game, Refused):
                return game.text  # before any DM is opened with another workspace's token
            state = game.state
            if m.step(state, m.Start(user_id), self.now()).state.phase != m.Phase.NIGHT:
                # refused, or due: the machine says
                return self.act(game_id, m.Start(user_id), asking, clicked)
            unasked = [seat.key for seat in state.people if seat.key not in asked]
            if slack_names is not None and unasked:
                asked.update(unasked)
                named |= self.names.at_start(slack_names, game.team_id, unasked)
            self.dms.open(client, [seat.key for seat in state.people], channels, unreachable)
            event = m.Start(user_id, tuple(unreachable), tuple(channels), tuple(named.items()))
            done = commit_step(
                self.sessions,
                game_id,
                event,
                self.now,
                dm_channels=channels,
                asking=asking,
                clicked=clicked,
                take=self.take,
            )
            if done is None or done.reason is not Message.SOMEONE_SAT_DOWN:
                return self._after(done, asking)
            if done.shown:  # the click's copy made the message: shown while DMs are opened
                self._show([done.game_id], done.taken)
        return in_words(state, m.SOMEONE_SAT_DOWN)

    def cancel_question(
        self, game_id: int, user_id: str, asking: Workspace | None = None
    ) -> Screen | str:
        """*Cancel*: the private question whether to cancel the table, or why the person may
        not, read before they are asked to confirm (the cancel itself checks again under the
        lock)."""
        state = self._read(game_id, asking)
        if isinstance(state, Refused):
            return state.text
        refusal = m.cancel_refusal(state, user_id)
        if refusal is not None:
            return in_words(state, refusal)
        return lobby_screen.cancel_question(game_id, self.words_of(game_id))

    def cancel(self, game_id: int, event: m.Cancel, asking: Workspace | None = None) -> str:
        """*Yes, cancel*: the step, and what it said, or that the person cancelled the table."""
        answer = self.act(game_id, event, asking)
        if answer is None:
            return self.words_of(game_id)._(lobby_screen.CANCELLED)
        return answer

    def cast_on_ballot(
        self, game_id: int, event: m.CastBallot, asking: Workspace | None = None
    ) -> tuple[PersonalBallotView | Refused, str | None]:
        """A click on a person's own ballot: their ballot as committed after the step, to be
        drawn again in its place, and what the step said."""
        answer = self.act(game_id, event, asking)
        return self.ballot(game_id, event.user, asking), answer

    def ballot(
        self, game_id: int, user_id: str, asking: Workspace | None = None
    ) -> PersonalBallotView | Refused:
        """The person's own ballot as committed, read without a lock (a click on it is a step
        of its own), or why they have none."""
        state = self._read(game_id, asking)
        if isinstance(state, Refused):
            return state
        ballot = m.personal_ballot(state, user_id)
        return Refused(ballot, words(state.language)) if isinstance(ballot, Line) else ballot

    def words_of(self, game_id: int, asking: Workspace | None = None) -> Words:
        """The words of the game's screens, read from its row alone, so that a game whose
        state cannot be read still answers in them; for a game that no longer exists, those
        of the channel ``asking`` came from."""
        with outside_transaction(self.sessions) as session:
            language = session.scalar(select(Game.language).where(Game.id == game_id))
        if language is None:
            return self.channel_words(asking)
        return words(Language(language))

    def channel_words(self, asking: Workspace | None) -> Words:
        """The words of the channel a request came from (its setting), English when the
        request names none."""
        if asking is None or not asking.channel_id:
            return ENGLISH
        team, channel = asking.team_id, asking.channel_id
        kept_by = table_team(self.sessions, team, channel, asking.enterprise_id, asking.org_wide)
        return self._channel_words(kept_by, channel)

    def _channel_words(self, team_id: str, channel_id: str) -> Words:
        chosen = channel_choice(self.sessions, team_id, channel_id, self.lengths)
        return words(chosen.language)

    def gone(self, asking: Workspace | None = None) -> str:
        """A click on a game that no longer exists, answered in its channel's language."""
        return said(m.GAME_GONE, self.channel_words(asking))

    def stale(self, asking: Workspace, game_id: int = 0) -> str:
        """A click Varulv cannot place: in its game's language when the button names a game
        that still exists, else in that of the channel it was clicked in."""
        spoken = self.words_of(game_id, asking) if game_id else self.channel_words(asking)
        return spoken._(STALE)

    def _open_already(
        self, session: Session, running: Game | None, team_id: str, channel_id: str, user_id: str
    ) -> str:
        """The channel's table opened before this one could: ``running``, what is open there
        now, as a second command is told of it, or, if it has closed again, that it opened."""
        if running is not None:
            state = games.state_of(running)
            facts = channel_standing(session, team_id, channel_id, (running.id, state.host))
            told = m.already_running(state, user_id, facts.open_to_everyone, facts.standing_owner)
            return in_words(state, told)
        chosen = choice_in(session, team_id, channel_id, self.lengths)
        return said(Line(Message.OPENED_MEANWHILE), words(chosen.language))

    def _read(self, game_id: int, asking: Workspace | None = None) -> m.GameState | Refused:
        """The game's state as committed, read without a lock (to prepare a step), or why
        there is none for ``asking``: the game is gone, or another workspace's."""
        game = self._stored(game_id, asking)
        return game if isinstance(game, Refused) else game.state

    def _stored(self, game_id: int, asking: Workspace | None = None) -> StoredGame | Refused:
        """The game as committed (its workspace and state), as :meth:`_read` reads it."""
        with outside_transaction(self.sessions) as session:
            game = games.read(session.connection(), game_id)
        if game is None:
            return Refused(m.GAME_GONE, self.channel_words(asking))
        if asking is not None and not asking.owns(game):
            return Refused(Line(Message.ANOTHER_WORKSPACE), words(game.state.language))
        return game

    def stop_if_allowed(
        self,
        client: WebClient,
        team_id: str,
        channel_id: str,
        user_id: str,
        retry: bool = False,
    ) -> str | None:
        """``/varulv stop``: end the channel's open game if the person may stop it, decided
        for that game and decided again on its locked row; a game opened since is left
        running."""
        admin = AdminFlags(client, user_id)
        refused, game_id = checked(
            self.sessions, client, team_id, channel_id, user_id, Change.STOP, admin
        )
        if refused is not None:
            return refused_text(refused, self._channel_words(team_id, channel_id))
        permit = stop_permit(team_id, channel_id, user_id, admin)
        return self.stop(team_id, channel_id, user_id, retry=retry, checked=game_id, permit=permit)

    def stop(
        self,
        team_id: str,
        channel_id: str,
        user_id: str,
        retry: bool = False,
        checked: int | None = None,
        permit: Permit | None = None,
    ) -> str | None:
        """``/varulv stop``: end the channel's running game, for someone
        :mod:`slackapp.game.permissions` lets stop it.

        ``retry``: Slack is sending the command again, and the first delivery may have stopped
        it: then there is nothing to say. ``checked``: the game the permission was decided
        for (None: no game was open then); if another is open by now, it is not stopped (the
        person is told to ask again). ``permit``: the permission decided again on the game's
        locked row (see :func:`commit_step`).
        """
        with outside_transaction(self.sessions) as session:
            game = games.open_in(session, team_id, channel_id)
            game_id = None if game is None else game.id
            language = Language.ENGLISH if game is None else Language(game.language)
        if game_id is not None and game_id != checked:
            return said(Line(Message.ANOTHER_GAME_NOW), words(language))
        if game_id is None:
            if retry:
                return None
            chosen = channel_choice(self.sessions, team_id, channel_id, self.lengths)
            return said(Line(Message.NO_GAME_RUNNING), words(chosen.language))
        return self.act(game_id, m.Stop(user_id), permit=permit)

    def workspace_left(self, team_id: str | None, enterprise_id: str | None = None) -> int:
        """End the workspace's open games without a word (no token is left to post with), and
        pause its standing tables until Varulv is installed again; with ``team_id`` None, those
        of every workspace of the organisation ``enterprise_id``. The games ended."""
        if team_id is None:
            if not enterprise_id:
                return 0
            whose = Game.enterprise_id == enterprise_id
        else:
            whose = Game.team_id == team_id
        with transaction(self.sessions) as session:
            standing.pause_uninstalled(session, team_id, enterprise_id)
        with outside_transaction(self.sessions) as session:
            open_games = session.scalars(
                select(Game.id).where(
                    whose, Game.phase.in_([phase.value for phase in m.OPEN_PHASES])
                )
            ).all()
        for game_id in open_games:
            commit_step(self.sessions, game_id, m.WorkspaceLeft(), self.now)
        return len(open_games)


def stop_permit(team_id: str, channel_id: str, user_id: str, admin: AdminFlags) -> Permit:
    """The stop's permission decided again on the game's locked row, the channel's facts read
    under its lock: the refusal, in the game's words, or None."""

    def permit(session: Session, game: StoredGame) -> str | None:
        if not game.state.is_open:
            return None  # the machine says there is nothing to stop
        facts = (game.id, game.state.host)
        again = refusal_under_lock(session, team_id, channel_id, user_id, Change.STOP, admin, facts)
        return None if again is None else refused_text(again, words(game.state.language))

    return permit
