"""Game steps: decide, commit, then show.

A step is one short transaction: lock the game row, apply the phase machine to its state and
the event, store the new state and the effects to show (the outbox), commit. No Web API call
is made while the lock is held; the deliverer shows the effects once the commit is done, and
the person who acted gets the machine's answer.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from slack_sdk.errors import SlackApiError
from sqlalchemy import Connection, select
from sqlalchemy.orm import Session, sessionmaker

from slackapp import metrics
from slackapp.blocks.addresses import NO_ADDRESSES, Addresses
from slackapp.blocks.said import said
from slackapp.blocks.words import ENGLISH, Words, words
from slackapp.db import games, people
from slackapp.db.channels import channel_choice, choice_in
from slackapp.db.engine import outside_transaction, transaction
from slackapp.db.games import GAMES, NewGame, StoredGame
from slackapp.db.models import Game
from slackapp.delivery.copies import Copy, adopt
from slackapp.delivery.deliverer import Taken
from slackapp.delivery.outbox import Row, answering, enqueue, outbox_rows, write
from slackapp.delivery.slack import TRANSIENT_ERRORS
from slackapp.game import machine as m
from slackapp.game.effects import PersonalBallotView, Scored
from slackapp.game.lines import Language, Line, Message
from slackapp.names import AsksNames, Names
from slackapp.turns import Turns, open_direct_message

log = logging.getLogger(__name__)

START_TRIES = 3
DEADLINE_BATCH = 50
"""Due games stepped in one transaction: one commit for many, each lock held only that long."""


def utc_now() -> datetime:
    return datetime.now(UTC)


class Alarm(Protocol):
    def arm(self, game_id: int, at: datetime) -> None: ...
    def disarm(self, game_id: int) -> None: ...


class Kick(Protocol):
    def kick(self, game_id: int) -> None: ...


Take = Callable[[Connection, list[int]], Taken]
"""In a step's transaction: take the games' delivery leases."""


@runtime_checkable
class HandsOver(Kick, Protocol):
    """A deliverer in this process: a step hands it what it committed, with no transaction
    between the commit and the first call to Slack (slackapp.delivery.deliverer)."""

    def take(self, connection: Connection, game_ids: list[int]) -> Taken: ...
    def hand_over(self, taken: Taken) -> None: ...


class OpensDirectMessages(Protocol):
    """What *Start* asks of Slack (a ``WebClient``): a person's private message channel."""

    def conversations_open(self, *, users: str) -> Any: ...


@dataclass(frozen=True)
class Committed:
    game_id: int
    answer: str | None
    """The machine's answer, in the game's words."""
    deadline: datetime | None
    """The game's deadline, when this step set a new one."""
    shown: int
    """How many effects went into the outbox."""
    reason: Message | None = None
    """What the answer says, as data: nothing decides by comparing its words."""
    taken: Taken | None = None
    """The game's delivery lease, when the step's transaction took it."""
    deadline_gone: bool = False
    """The step took the game's deadline away (the game ended): its timer has nothing to do."""


class Belonging(Protocol):
    """A game, as far as which workspace it belongs to."""

    @property
    def team_id(self) -> str: ...
    @property
    def enterprise_id(self) -> str | None: ...


@dataclass(frozen=True)
class Workspace:
    """Where Slack signed a request from."""

    team_id: str
    enterprise_id: str | None = None
    """The Enterprise Grid organisation, when the workspace belongs to one."""
    org_wide: bool = False
    """Varulv is installed on the whole organisation (Slack's ``is_enterprise_install``)."""
    channel_id: str = ""
    """The channel the request came from: a game that no longer exists is answered in its
    language."""

    def owns(self, game: Belonging) -> bool:
        """Whether a request from here may act on ``game``: one from the game's own workspace
        (of the same organisation, when both name one), or, where Varulv is installed on the
        whole organisation, from any workspace of that organisation, since one installation
        serves them all and a channel may be shared between them. A person from another
        organisation in a Slack Connect channel may watch, but not play."""
        if game.enterprise_id and self.enterprise_id and game.enterprise_id != self.enterprise_id:
            return False
        if game.team_id == self.team_id:
            return True
        same_org = bool(game.enterprise_id) and game.enterprise_id == self.enterprise_id
        return self.org_wide and same_org


NameFor = Callable[[Connection, str, str, str], str]
"""The name a person sits down under, read in the step's transaction: (connection, team,
user, the handle their request carried)."""
Permit = Callable[[Session, StoredGame], str | None]
"""Whether an event may be applied to a game, decided on its locked row: None, or the
refusal to answer with."""


def kept_name(connection: Connection, team_id: str, user_id: str, handle: str) -> str:
    """The name kept for a person, however old (*Start* asks Slack again once it is stale, see
    slackapp.names), else the handle their request carried: sitting down asks Slack nothing."""
    known = people.known_in(connection, team_id, user_id)
    return handle if known is None else known.name


def _new_game(
    session: Session,
    team_id: str,
    channel_id: str,
    host: str,
    lengths: m.Lengths,
    bots_allowed: bool,
    enterprise_id: str | None = None,
    opened_by_trigger: str | None = None,
    language: Language = Language.ENGLISH,
) -> NewGame | None:
    """A new game row in its lobby, inserted for its id, or None if the channel has an open
    game (the one-open-game-per-channel index). Whatever is known of it goes into that one
    insert, since setting it afterwards costs an update; a plain statement, since the ORM's
    unit of work was a sixth of a ``/varulv`` step's time."""
    return games.insert_new(
        session.connection(),
        {
            "team_id": team_id,
            "enterprise_id": enterprise_id,
            "channel_id": channel_id,
            "host_user_id": host,
            "opened_by_trigger": opened_by_trigger,
            "phase": m.Phase.LOBBY.value,
            "seed": secrets.randbits(62),
            "night_seconds": lengths.night_seconds,
            "day_seconds": lengths.day_seconds,
            "vote_seconds": lengths.vote_seconds,
            "bots_allowed": bots_allowed,
            "language": language.value,
        },
    )


def commit_step(
    sessions: sessionmaker[Session],
    game_id: int,
    event: m.Event,
    now: Callable[[], datetime] = utc_now,
    *,
    skip_locked: bool = False,
    dm_channels: dict[str, str] | None = None,
    asking: Workspace | None = None,
    clicked: Copy | None = None,
    take: Take | None = None,
    name_for: NameFor = kept_name,
    permit: Permit | None = None,
) -> Committed | None:
    """Apply ``event`` to the game in one transaction; None if there is no such game (or,
    with ``skip_locked``, another transaction holds it). ``dm_channels``: the people's private
    message channels, kept for the deliverer when the event starts the night. ``asking``: the
    workspace of the signed request, refused (nothing changes) unless it owns the game.
    ``clicked``: the copy of the game's message the click came from, made the message if it
    is a second copy the app did not record (see slackapp.delivery.copies).
    ``take``: given, a step with something to show takes its game's delivery lease too.
    ``name_for``: the name a person who joins sits down under. ``permit``: decides, with the
    game's row locked, whether the event may be applied at all (a refusal is the answer)."""
    with metrics.stepping(type(event).__name__), transaction(sessions) as session:
        connection = session.connection()
        game = games.lock(connection, game_id, skip_locked=skip_locked)
        if game is None:
            return None
        if asking is not None and not asking.owns(game):
            return Committed(
                game.id, in_words(game.state, Line(Message.ANOTHER_WORKSPACE)), None, 0
            )
        refused = None if permit is None else permit(session, game)
        if refused is not None:
            return Committed(game.id, refused, None, 0)
        adopted = None if clicked is None else adopt(connection, game.id, clicked)
        if isinstance(event, m.Join):  # the name kept for them, if Varulv has met them
            event = replace(event, name=name_for(connection, game.team_id, event.user, event.name))
        changes = games.Changes()
        before, done, game = _decide(changes, game, event, now(), dm_channels)
        changes.write(session)
        rows = outbox_rows(game, done.effects)
        if clicked is not None and adopted is not None and adopted.is_the_message:
            # the clicked message is redrawn through the click's answer
            answering(rows, clicked.surface, clicked.response_url, clicked.ts)
        write(connection, rows)
        shown = (0 if adopted is None else adopted.rows) + len(rows)
        taken = take(connection, [game.id]) if take is not None and shown else None
        return _committed(game.id, before, done, shown, taken)


def commit_due(
    sessions: sessionmaker[Session],
    now: Callable[[], datetime] = utc_now,
    limit: int = DEADLINE_BATCH,
    take: Take | None = None,
) -> tuple[list[Committed], Taken | None]:
    """Up to ``limit`` games whose deadline has passed, each stepped by the machine, in one
    transaction. A game another transaction holds is skipped: that step catches up with the
    clock itself, and a later batch finds the game if it is still due. ``take``: given, the
    delivery leases of the games with something to show are taken in it too."""
    with metrics.stepping("Deadline") as counted, transaction(sessions) as session:
        connection = session.connection()
        at = now()
        due = games.lock_due(connection, at, limit)
        counted(len(due))
        metrics.deadlines_late([game.state.deadline for game in due], at)
        changes = games.Changes()  # every game's changes of a kind in one statement
        stepped = [_decide(changes, game, m.Deadline(), at) for game in due]
        changes.write(session)
        done = []
        rows: list[Row] = []
        for before, after, game in stepped:
            shown = outbox_rows(game, after.effects)
            rows += shown
            done.append(_committed(game.id, before, after, len(shown)))
        write(connection, rows)  # every game's messages in one statement
        showing = [each.game_id for each in done if each.shown]
        taken = take(connection, showing) if take is not None and showing else None
        return done, taken


def _decide(
    changes: games.Changes,
    game: StoredGame,
    event: m.Event,
    at: datetime,
    dm_channels: dict[str, str] | None = None,
) -> tuple[m.GameState, m.Step, StoredGame]:
    """The machine's step for the game, its new state and scores added to ``changes``; the
    state before, and the game as it stands after the step."""
    before = game.state
    done = m.step(before, event, at)
    if done.state != before:
        night_began = before.phase == m.Phase.LOBBY and done.state.phase == m.Phase.NIGHT
        game = changes.step(game, done.state, dm_channels if night_began else None)
    for effect in done.effects:
        if isinstance(effect, Scored):
            changes.decide(game, effect, at)
    return before, done, game


def _committed(
    game_id: int, before: m.GameState, done: m.Step, shown: int, taken: Taken | None = None
) -> Committed:
    changed = done.state.deadline if done.state.deadline != before.deadline else None
    gone = before.deadline is not None and done.state.deadline is None
    line = done.answer
    if line is None:
        return Committed(game_id, None, changed, shown, taken=taken, deadline_gone=gone)
    answer = said(line, words(done.state.language))
    return Committed(game_id, answer, changed, shown, line.message, taken, gone)


def in_words(state: m.GameState, line: Line) -> str:
    """What the machine says of a game, in the game's words."""
    return said(line, words(state.language))


@dataclass(frozen=True)
class Refused:
    """Why a read has nothing for the person: the machine's line, and the words to say it in
    (the game's, or its channel's when the game is gone)."""

    line: Line
    words: Words

    @property
    def text(self) -> str:
        return said(self.line, self.words)


def new_table(
    session: Session,
    team_id: str,
    channel_id: str,
    defaults: m.Lengths,
    host: str,
    host_name: str,
    seat_host: bool = True,
    enterprise_id: str | None = None,
    opened_by_trigger: str | None = None,
) -> tuple[NewGame, m.Step] | None:
    """A table in the channel with its settings, stored, or None if the channel has one open
    (the one-open-game index); the caller enqueues the step's effects."""
    chosen = choice_in(session, team_id, channel_id, defaults)
    lengths = m.Lengths(chosen.night_seconds, chosen.day_seconds, chosen.vote_seconds)
    game = _new_game(
        session,
        team_id,
        channel_id,
        host,
        lengths,
        chosen.bots_allowed,
        enterprise_id,
        opened_by_trigger,
        chosen.language,
    )
    if game is None:
        return None
    opened = m.open_table(
        game.id,
        channel_id,
        host,
        host_name,
        game.seed,
        m.Lengths(game.night_seconds, game.day_seconds, game.vote_seconds),
        game.bots_allowed,
        seat_host=seat_host,
        language=chosen.language,
    )
    games.store_new(session, game, opened.state)
    return game, opened


class Steps:
    """Every step the listeners and the timers run, wired to the deliverer and the timers."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        lengths: m.Lengths,
        deliverer: Kick,
        alarm: Alarm,
        now: Callable[[], datetime] = utc_now,
        addresses: Addresses = NO_ADDRESSES,
    ) -> None:
        self.sessions = sessions
        self.addresses = addresses
        """What the screens may link: the support contact, the published source."""
        self.lengths = lengths
        self.deliverer = deliverer
        self.alarm = alarm
        self.now = now
        self.names = Names(sessions, now)
        self.turns = Turns()
        """Turns at Slack's limits for ``conversations.open`` at *Start*, in this process."""

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
        sends what they show at once; else the deliverer is kicked to claim them."""
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
        lock (on its lease's row at most, for a claim's short transaction)."""
        done = commit_step(
            self.sessions, game_id, m.Deadline(), self.now, skip_locked=True, take=self.take
        )
        if done is None:
            return False
        self._after(done)
        return bool(done.shown)

    def deadlines_due(self, limit: int = DEADLINE_BATCH) -> int:
        """Step a batch of the games whose deadline has passed; how many were found (fewer
        than ``limit``: none is left that no other transaction holds).

        Should one game's step fail, the batch is rolled back and its games are stepped one
        by one, so that one game never holds the others' deadlines back."""
        try:
            done, taken = commit_due(self.sessions, self.now, limit, self.take)
        except Exception:
            log.exception("a batch of deadlines failed; its games are stepped one by one")
            with outside_transaction(self.sessions) as session:
                due = session.scalars(games.due(select(GAMES.c.id), self.now(), limit)).all()
            for game_id in due:
                try:
                    self.deadline(game_id)
                except Exception:
                    log.exception("the deadline of game %s failed; the sweep tries again", game_id)
            return 0  # what failed stays due: the sweep comes back, not this loop
        self._show([each.game_id for each in done if each.shown], taken)
        for each in done:
            self._rearm(each)
        return len(done)

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

        with transaction(self.sessions) as session:
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
            game = _new_game(
                session,
                team_id,
                channel_id,
                user_id,
                last.lengths,
                last.bots_allowed,
                previous.enterprise_id,
                language=last.language,
            )
            if game is None:  # a /varulv in the channel came first
                running = games.open_in(session, team_id, channel_id)
                return self._open_already(session, running, team_id, channel_id, user_id)
            name = kept_name(session.connection(), team_id, user_id, user_name)
            opened = m.play_again(last, game.id, game.seed, user_id, name)
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
            for seat in state.people:
                if seat.key in channels or seat.key in unreachable:
                    continue
                try:
                    opened = open_direct_message(self.turns, client, seat.key)
                    channels[seat.key] = str(opened["channel"]["id"])
                except SlackApiError as error:
                    if error.response.get("error") in TRANSIENT_ERRORS:
                        raise  # not the person's settings: the click fails, Slack is busy
                    unreachable.append(seat.key)
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

    def cancel_refusal(
        self, game_id: int, user_id: str, asking: Workspace | None = None
    ) -> str | None:
        """Why the person may not cancel the table, read before they are asked to confirm
        (the cancel itself checks again under the lock)."""
        state = self._read(game_id, asking)
        if isinstance(state, Refused):
            return state.text
        refusal = m.cancel_refusal(state, user_id)
        return None if refusal is None else in_words(state, refusal)

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
        chosen = channel_choice(self.sessions, asking.team_id, asking.channel_id, self.lengths)
        return words(chosen.language)

    def gone(self, asking: Workspace | None = None) -> str:
        """A click on a game that no longer exists, answered in its channel's language."""
        return said(m.GAME_GONE, self.channel_words(asking))

    def _open_already(
        self, session: Session, running: Game | None, team_id: str, channel_id: str, user_id: str
    ) -> str:
        """The channel's table opened before this one could: ``running``, what is open there
        now, as a second command is told of it, or, if it has closed again, that it opened."""
        if running is not None:
            state = games.state_of(running)
            return in_words(state, m.already_running(state, user_id))
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
        """End the workspace's open games without a word (no token is left to post with); with
        ``team_id`` None, those of every workspace of the organisation ``enterprise_id``."""
        if team_id is None:
            if not enterprise_id:
                return 0
            whose = Game.enterprise_id == enterprise_id
        else:
            whose = Game.team_id == team_id
        with outside_transaction(self.sessions) as session:
            open_games = session.scalars(
                select(Game.id).where(
                    whose, Game.phase.in_([phase.value for phase in m.OPEN_PHASES])
                )
            ).all()
        for game_id in open_games:
            commit_step(self.sessions, game_id, m.WorkspaceLeft(), self.now)
        return len(open_games)
