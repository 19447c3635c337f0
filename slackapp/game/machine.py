"""The game as one phase machine: ``step(state, event, now)`` gives the next state and effects.

A game is a :class:`GameState` (plain, immutable data). Everything that can happen to it is an
event: a person's command (:class:`Join`, :class:`NightLook`, :class:`CastBallot`, ...), a
deadline (:class:`Deadline`), or a report that Slack could not show something
(:class:`ChannelUnwritable`, :class:`DmFailed`). :func:`step` decides: it returns the next
state, and the effects of the decision (``slackapp.game.effects``): what each Slack surface
must now show (:class:`Show`), posts (:class:`Say`, :class:`Tell`), the private answer to
whoever acted (:class:`Answer`), and the scores once the game is decided (:class:`Scored`).

Like python-chess's ``Board``, the state answers questions about itself: whose night is still
open (:meth:`GameState.awaiting`), which night move a seat's card offers
(:meth:`GameState.choice_kind`), whether the game is over (:meth:`GameState.is_over`) and
its :meth:`GameState.outcome`. A refused command changes nothing: the state comes back
unchanged with only an :class:`Answer` saying why.

Every event first catches up with the clock: a phase whose deadline has passed ends before the
event is considered, so a click that arrives after the deadline (however late the timer is)
finds the phase closed, and a phase ended anew after a crash ends exactly as it would have.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum

from slackapp.game.bots import BotView, bot_ballot, bot_night_choice
from slackapp.game.cards import BOT_TABLE, MAX_SEATS, MIN_PEOPLE, MIN_SEATS, Card, Deal, deal
from slackapp.game.effects import (
    DAY_BOARD,
    LOBBY_BOARD,
    REVEAL,
    VOTE_BOARD,
    Answer,
    Award,
    BallotBoardView,
    BallotClosedView,
    ClosedView,
    DayBoardView,
    DayOverView,
    Effect,
    GameOverDmView,
    LobbyView,
    NightBoardView,
    NightDmView,
    NightOverView,
    PersonalBallotView,
    RevealView,
    Say,
    Scored,
    Show,
    Tell,
    dm_surface,
    over_surface,
)
from slackapp.game.fingerprint import deal_salt, fingerprint, night_fingerprint
from slackapp.game.lines import Language, Line, Message, SeatName
from slackapp.game.night import (
    IllegalChoice,
    LookAtCenter,
    LookAtSeat,
    Night,
    NightChoice,
    NightRule,
    Peek,
    Rob,
    Swap,
    check_choice,
    choice_kind,
    learned_on_choosing,
    resolve_night,
)
from slackapp.game.outcome import Outcome, ballot_score, play
from slackapp.game.permissions import Change, who_may
from slackapp.game.settings import DAY, DEFAULT_KEPT, LENGTHS, NIGHT, VOTE, Kept
from slackapp.game.vote import IllegalBallot, check_ballot, heard_enough_needed, vote_opens_early

# --- the state -------------------------------------------------------------------------------


class Phase(StrEnum):
    LOBBY = "lobby"
    NIGHT = "night"
    DAY = "day"
    VOTE = "vote"
    OVER = "over"
    CANCELLED = "cancelled"
    STOPPED = "stopped"


OPEN_PHASES = (Phase.LOBBY, Phase.NIGHT, Phase.DAY, Phase.VOTE)
TIMED_PHASES = (Phase.NIGHT, Phase.DAY, Phase.VOTE)
BEFORE_THE_VOTE = (Phase.LOBBY, Phase.NIGHT, Phase.DAY)

BOT_NAMES = ("Astrid", "Bosse", "Cissi", "Dagge", "Ebba", "Frasse", "Greta", "Hasse")

ERASED_PREFIX = "erased-"
"""A person who had Varulv forget them is, in the games they played, a seat whose key is
``erased-<seat number>``: lower case with a hyphen, so it never equals a Slack id (its name is
``slackapp.blocks.forgotten.ERASED_NAME``, in the game's language)."""


def erased_key(position: int) -> str:
    return f"{ERASED_PREFIX}{position + 1}"


def is_erased(key: str) -> bool:
    return key.startswith(ERASED_PREFIX)


@dataclass(frozen=True)
class Lengths:
    night_seconds: int
    day_seconds: int
    vote_seconds: int


NIGHT_SECONDS_BOUNDS = NIGHT.bounds
DAY_SECONDS_BOUNDS = DAY.bounds
VOTE_SECONDS_BOUNDS = VOTE.bounds
"""What a channel may choose (inclusive), declared with its settings."""
LENGTH_BOUNDS = {setting.name: setting.bounds for setting in LENGTHS}
"""Each of a game's :class:`Lengths`, with its inclusive (lowest, highest) number of seconds."""


@dataclass(frozen=True)
class Ballot:
    target: str | None
    """A seat key, or None for nobody."""
    clicked_at: Decimal | None = None
    """Slack's ``action_ts`` of the click: of two quick clicks the later one counts."""


@dataclass(frozen=True)
class SeatState:
    key: str
    """The seat's name in the engine: a person's Slack user id, or ``bot1``... for a bot."""
    name: str
    is_bot: bool
    position: int
    dealt: Card | None = None
    choice: NightChoice | None = None
    pending: str | None = None
    """The Troublemaker's first pick while it chooses the second."""
    confirmed: bool = False
    heard_enough: bool = False
    heard_enough_at: Decimal | None = None
    """Slack's ``action_ts`` of the click the mark last came from: a click redelivered, or
    older than that one, changes nothing."""
    ballot: Ballot | None = None
    reachable: bool = True
    """False once a private message to this person failed for good."""


@dataclass(frozen=True)
class GameState:
    id: int
    channel: str
    host: str
    seed: int
    lengths: Lengths
    kept: Kept = DEFAULT_KEPT
    """The channel's settings the game keeps (``slackapp.game.settings``): the channel's when
    it opened."""
    phase: Phase = Phase.LOBBY
    seats: tuple[SeatState, ...] = ()
    """In seat order (by position)."""
    center: tuple[Card, Card] | None = None
    deadline: datetime | None = None
    ended_by: str | None = None

    # -- questions a state answers about itself -------------------------------------------

    @property
    def bots_allowed(self) -> bool:
        """Whether its lobby offers "Fill with bots"."""
        return self.kept.bots_allowed

    @property
    def language(self) -> Language:
        """The words of every screen of the game."""
        return self.kept.language

    def seat(self, key: str) -> SeatState | None:
        return next((seat for seat in self.seats if seat.key == key), None)

    @property
    def people(self) -> tuple[SeatState, ...]:
        return tuple(seat for seat in self.seats if not seat.is_bot)

    @property
    def names(self) -> tuple[SeatName, ...]:
        return tuple(SeatName(seat.key, seat.name, seat.is_bot) for seat in self.seats)

    @property
    def is_open(self) -> bool:
        return self.phase in OPEN_PHASES

    def is_over(self) -> bool:
        """True once nothing can change the game any more (revealed, cancelled or stopped)."""
        return not self.is_open

    def is_due(self, now: datetime) -> bool:
        """The current phase's deadline has passed, whether or not a timer fired yet."""
        return self.phase in TIMED_PHASES and self.deadline is not None and self.deadline <= now

    def deal(self) -> Deal:
        """The deal, once the night has begun."""
        assert self.center is not None, "only a started game has a deal"
        dealt = {seat.key: seat.dealt for seat in self.seats if seat.dealt is not None}
        return Deal(seats=tuple(seat.key for seat in self.seats), dealt=dealt, center=self.center)

    def fingerprint(self) -> str:
        """The deal's fingerprint, which the night board shows, once the night has begun."""
        return fingerprint(deal_salt(self.seed), self.deal())

    def night_fingerprint(self) -> str:
        """The night's fingerprint over the deal's and every move made, once it is over."""
        return night_fingerprint(deal_salt(self.seed), self.deal(), self.choices())

    def is_lone_wolf(self, key: str) -> bool:
        return self.center is not None and self.deal().dealt_werewolves() == (key,)

    def choice_kind(self, key: str) -> str | None:
        """The night move the seat's dealt card offers ("peek", "look", "rob", "swap"), or
        None when it only confirms."""
        seat = self.seat(key)
        if seat is None or seat.dealt is None:
            return None
        return choice_kind(seat.dealt, self.is_lone_wolf(key))

    def awaiting(self) -> tuple[str, ...]:
        """At night, the seats that have not confirmed yet."""
        if self.phase != Phase.NIGHT:
            return ()
        return tuple(seat.key for seat in self.seats if not seat.confirmed)

    def choices(self) -> dict[str, NightChoice]:
        return {seat.key: seat.choice for seat in self.seats if seat.choice is not None}

    def night(self) -> Night:
        return resolve_night(self.deal(), self.choices())

    def ballots(self) -> dict[str, str | None]:
        return {seat.key: seat.ballot.target for seat in self.seats if seat.ballot is not None}

    def outcome(self) -> Outcome | None:
        """The whole game's outcome, once the vote has closed."""
        if self.phase != Phase.OVER:
            return None
        return play(self.deal(), self.choices(), self.ballots())


def bots_seed(seed: int) -> str:
    """The seed bots decide from: drawn from the game's, so a game replays exactly, but through
    a one-way hash, since the game's own seed deals the cards and a bot must not be able to
    deal them again."""
    return hashlib.sha256(f"{seed}/bots".encode()).hexdigest()


# --- events ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Join:
    user: str
    name: str


@dataclass(frozen=True)
class Leave:
    user: str


@dataclass(frozen=True)
class FillWithBots:
    user: str


@dataclass(frozen=True)
class Cancel:
    user: str


@dataclass(frozen=True)
class Start:
    """Deal and begin the night. ``unreachable``: people Slack would not open a private
    message with (asked before the step, since a card cannot reach them)."""

    user: str
    unreachable: tuple[str, ...] = ()
    reachable: tuple[str, ...] | None = None
    """The people whose private message is open; None when nobody asked Slack (in tests)."""
    names: tuple[tuple[str, str], ...] = ()
    """People's names as Slack shows them, asked before the step (user, name): their seats
    take them as the cards are dealt, since buttons and the record write names out."""


@dataclass(frozen=True)
class NightPeek:
    user: str
    index: int


@dataclass(frozen=True)
class NightLook:
    """The Seer looks at ``seat``'s card, or at both centre cards when ``seat`` is None."""

    user: str
    seat: str | None


@dataclass(frozen=True)
class NightRob:
    user: str
    seat: str


@dataclass(frozen=True)
class NightPick:
    """The Troublemaker picks a seat: the first of the two, or the second (which swaps)."""

    user: str
    seat: str


@dataclass(frozen=True)
class NightResetPick:
    user: str


@dataclass(frozen=True)
class NightSkip:
    user: str


@dataclass(frozen=True)
class NightConfirm:
    user: str


@dataclass(frozen=True)
class HeardEnough:
    """Mark "heard enough", or take the mark back."""

    user: str
    clicked_at: Decimal | None = None
    """Slack's ``action_ts`` of the click, when known."""


@dataclass(frozen=True)
class CastBallot:
    user: str
    target: str | None
    """A seat key, or None for nobody."""
    clicked_at: Decimal | None = None


@dataclass(frozen=True)
class Stop:
    user: str


@dataclass(frozen=True)
class Deadline:
    """A timer woke up: whatever is due ends (the catch-up every event starts with)."""


@dataclass(frozen=True)
class CloseLobby:
    """A standing table's lobby has been open as long as the channel chose: it closes unless
    it has started."""


@dataclass(frozen=True)
class ChannelUnwritable:
    """Slack refuses for good to post in the game's channel (``not_in_channel``, ...)."""

    error: str


@dataclass(frozen=True)
class DmFailed:
    """A private message to seat ``key`` failed for good (``account_inactive``, ...)."""

    key: str
    error: str


@dataclass(frozen=True)
class WorkspaceLeft:
    """The app was uninstalled or its token revoked: nothing can be posted any more."""


NightMove = NightPeek | NightLook | NightRob | NightPick | NightResetPick | NightSkip | NightConfirm
Event = (
    Join
    | Leave
    | FillWithBots
    | Cancel
    | Start
    | NightMove
    | HeardEnough
    | CastBallot
    | Stop
    | Deadline
    | CloseLobby
    | ChannelUnwritable
    | DmFailed
    | WorkspaceLeft
)


@dataclass(frozen=True)
class Step:
    """What :func:`step` decided: the next state, and the effects of getting there."""

    state: GameState
    effects: tuple[Effect, ...] = ()

    @property
    def answer(self) -> Line | None:
        """The answer to whoever acted (a step gives at most one)."""
        return next((effect.line for effect in self.effects if isinstance(effect, Answer)), None)


# --- what the machine says (slackapp.blocks.said words it) --------------------------------

NOT_SEATED = Line(Message.NOT_SEATED, flag=True)
"""``flag``: a seat is free to *Join*; a full table is not offered."""
NIGHT_IS_OVER = Line(Message.NIGHT_IS_OVER)
VOTE_IS_CLOSED = Line(Message.VOTE_IS_CLOSED)
VOTE_NOT_YET_OPEN = Line(Message.VOTE_NOT_YET_OPEN)
NO_BALLOT = Line(Message.NO_BALLOT)
DAY_IS_OVER = Line(Message.DAY_IS_OVER)
DAY_OVER_VOTE_OPEN = Line(Message.DAY_OVER_VOTE_OPEN)
DAY_NOT_BEGUN = Line(Message.DAY_NOT_BEGUN)
TIME_IS_UP = Line(Message.TIME_IS_UP)
NOT_YOUR_DAY = Line(Message.NOT_YOUR_DAY)
SOMEONE_SAT_DOWN = Line(Message.SOMEONE_SAT_DOWN)
GAME_GONE = Line(Message.GAME_GONE)


def most_heard_enough(heard: int, people: int) -> Line:
    """Why the vote opened early: the people who pressed *Heard enough*, out of the people
    (bots are not counted)."""
    return Line(Message.HEARD_ENOUGH, count=heard, total=people)


def mention(seat: SeatState | SeatName) -> str:
    return f"*{seat.name}* (bot)" if seat.is_bot else f"<@{seat.key}>"


def closed_lobby(state: GameState | None) -> Line:
    """What a lobby button pressed too late is told."""
    if state is None:
        return GAME_GONE
    if state.is_over():
        return Line(Message.GAME_OVER)
    return Line(Message.GAME_STARTED)


def already_running(
    state: GameState,
    user: str | None = None,
    open_to_everyone: bool = False,
    standing_owner: str | None = None,
) -> Line:
    """What ``/varulv`` by ``user`` is told in a channel whose table is open; a running game
    names who may end it, by the rule ``/varulv stop`` applies, from the channel's facts (open
    to everyone or not, whoever set its standing table)."""
    if state.phase == Phase.LOBBY and user is not None and state.seat(user) is not None:
        return Line(Message.SEATED_IN_LOBBY)
    if state.phase == Phase.LOBBY:  # a lobby is no game yet: nothing runs until *Start*
        return Line(Message.LOBBY_OPEN, flag=_has_a_free_seat(state))
    seated = user is None or state.seat(user) is not None
    who = who_may(Change.STOP, open_to_everyone, state.host, standing_owner)
    return Line(
        Message.GAME_RUNNING,
        phase=state.phase.value,
        flag=seated,
        user=state.host,
        who_may=who,
        role=who.role_of(user),
    )


# --- the machine -----------------------------------------------------------------------------


def open_table(
    game_id: int,
    channel: str,
    host: str,
    host_name: str,
    seed: int,
    lengths: Lengths,
    kept: Kept = DEFAULT_KEPT,
    seat_host: bool = True,
) -> Step:
    """A new table in its lobby with the host seated, and its lobby to post.

    ``seat_host=False``: a standing table, opened on its schedule in the name of whoever set
    it, with every seat free.
    """
    host_seat = SeatState(key=host, name=host_name, is_bot=False, position=0)
    state = GameState(
        id=game_id,
        channel=channel,
        host=host,
        seed=seed,
        lengths=lengths,
        kept=kept,
        seats=(host_seat,) if seat_host else (),
    )
    return Step(state, (_show_lobby(state),))


def play_again_refusal(previous: GameState | None) -> Line | None:
    """Why *Play again* on ``previous``'s reveal opens nothing, or None when it may."""
    if previous is None:
        return GAME_GONE
    if previous.phase != Phase.OVER:
        return Line(Message.NOT_REVEALED)
    return None


def play_again(
    previous: GameState,
    game_id: int,
    seed: int,
    user: str,
    user_name: str,
    lengths: Lengths,
    kept: Kept,
) -> Step:
    """The next table after ``previous``'s reveal: its people seated again in their places
    (each may *Leave*), whoever pressed *Play again* seated too and the host; the channel's
    ``lengths`` and the settings a game keeps (``kept``) as they are now (a change made during
    the game is for the next table, as the channel was told), and bots refilled if the last
    table had any and the channel still allows them."""
    assert play_again_refusal(previous) is None, "ask play_again_refusal first"
    seats = [SeatState(seat.key, seat.name, False, seat.position) for seat in previous.people]
    if all(seat.key != user for seat in seats) and len(seats) < MAX_SEATS:
        seats.append(SeatState(user, user_name, False, _free_position(seats)))
    if kept.bots_allowed and any(seat.is_bot for seat in previous.seats):
        seats = _with_bots(seats)
    seated = {seat.key for seat in seats}
    state = GameState(
        id=game_id,
        channel=previous.channel,
        host=user if user in seated else previous.host,
        seed=seed,
        lengths=lengths,
        kept=kept,
    )
    state = _replace_seats(state, _renamed_bots(seats))
    return Step(state, (_show_lobby(state),))


def step(state: GameState, event: Event, now: datetime) -> Step:
    """The state after ``event`` at ``now``, and the effects of getting there.

    A phase already due ends first; then the event is applied to what is open. A command
    that cannot be applied changes nothing and is answered with the reason.
    """
    caught = _catch_up(state, now)
    if isinstance(event, CastBallot) and state.phase in BEFORE_THE_VOTE:
        # No ballot board is shown before the vote opens: the click is stale or forged, even
        # when the catch-up has just opened the vote.
        return Step(caught.state, (*caught.effects, Answer(VOTE_NOT_YET_OPEN)))
    state, effects = caught.state, list(caught.effects)
    after = _apply(state, event, now)
    return Step(after.state, (*effects, *after.effects))


def _catch_up(state: GameState, now: datetime) -> Step:
    effects: list[Effect] = []
    while state.is_due(now):
        if state.phase == Phase.NIGHT:
            ended = _end_night(state, now)
        elif state.phase == Phase.DAY:
            ended = _end_day(state, now, TIME_IS_UP)
        else:
            ended = _close_vote(state)
        state = ended.state
        effects += ended.effects
    return Step(state, tuple(effects))


def _apply(state: GameState, event: Event, now: datetime) -> Step:
    match event:
        case Join(user, name):
            return _join(state, user, name)
        case Leave(user):
            return _leave(state, user)
        case FillWithBots(user):
            return _fill_with_bots(state, user)
        case Cancel(user):
            return _cancel(state, user)
        case Start(user, unreachable, reachable, names):
            return _start(state, user, unreachable, reachable, now, dict(names))
        case (
            NightPeek()
            | NightLook()
            | NightRob()
            | NightPick()
            | NightResetPick()
            | NightSkip()
            | NightConfirm()
        ):
            return _night_move(state, event, now)
        case HeardEnough(user, clicked_at):
            return _heard_enough(state, user, clicked_at, now)
        case CastBallot(user, target, clicked_at):
            return _cast(state, user, target, clicked_at)
        case Stop(user):
            return _stop(state, user)
        case Deadline():
            return Step(state)
        case CloseLobby():
            if state.phase != Phase.LOBBY:
                return Step(state)
            note = ClosedView(Line(Message.NOBODY_STARTED))
            return Step(replace(state, phase=Phase.CANCELLED), (Show(LOBBY_BOARD, note),))
        case ChannelUnwritable(error):
            return _channel_lost(state, error)
        case DmFailed(key, error):
            return _dm_lost(state, key, error)
        case WorkspaceLeft():
            if not state.is_open:
                return Step(state)
            return Step(replace(state, phase=Phase.STOPPED, deadline=None))
    raise TypeError(f"not an event: {event!r}")


def _refuse(state: GameState, line: Line) -> Step:
    return Step(state, (Answer(line),))


def _with_seat(state: GameState, seat: SeatState) -> GameState:
    seats = tuple(seat if each.key == seat.key else each for each in state.seats)
    return replace(state, seats=seats)


def _replace_seats(state: GameState, seats: Iterable[SeatState]) -> GameState:
    return replace(state, seats=tuple(sorted(seats, key=lambda seat: seat.position)))


# -- lobby --


def _show_lobby(state: GameState) -> Show:
    return Show(LOBBY_BOARD, LobbyView(state.id, state.host, state.names, state.kept))


def _lobby_refusal(state: GameState, user: str, seated_only: bool = True) -> Step | None:
    if state.phase != Phase.LOBBY:
        return _refuse(state, closed_lobby(state))
    if seated_only and state.seat(user) is None:
        return _refuse(state, replace(NOT_SEATED, flag=_has_a_free_seat(state)))
    return None


def _has_a_free_seat(state: GameState) -> bool:
    """Whether someone not seated could *Join*: a seat is empty, or a bot would give up its own."""
    return len(state.seats) < MAX_SEATS or any(seat.is_bot for seat in state.seats)


def _free_position(seats: Iterable[SeatState], after: int = -1) -> int:
    """The first free seat after position ``after`` (or, when none is, the first free one):
    seats keep the order people sat down in."""
    taken = {seat.position for seat in seats}
    free = [position for position in range(MAX_SEATS) if position not in taken]
    return next((position for position in free if position > after), free[0])


def _join(state: GameState, user: str, name: str) -> Step:
    refusal = _lobby_refusal(state, user, seated_only=False)
    if refusal is not None:
        return refusal
    if state.seat(user) is not None:
        return _refuse(state, Line(Message.ALREADY_SEATED))
    seats = list(state.seats)
    last = max((seat.position for seat in seats if not seat.is_bot), default=-1)
    bots = [seat for seat in seats if seat.is_bot]
    namesakes = [seat for seat in bots if seat.name.casefold() in _name_words(name)]
    after_people = [seat for seat in bots if seat.position > last]
    # The bot with this person's name goes first, then the one seated after every person, so
    # that the person sits after everyone who sat down before them.
    bot = next(iter(namesakes or after_people or bots[::-1]), None)
    if bot is None and len(seats) >= MAX_SEATS:
        return _refuse(state, Line(Message.TABLE_FULL, count=MAX_SEATS))
    if bot is not None and len(seats) >= BOT_TABLE:
        seats.remove(bot)  # bots only fill up to BOT_TABLE seats: a person takes a bot's seat
    position = _free_position(seats, after=last)
    seats.append(SeatState(key=user, name=name, is_bot=False, position=position))
    state = _replace_seats(state, _renamed_bots(seats))
    return Step(state, (_show_lobby(state),))


def _named(state: GameState, names: Mapping[str, str]) -> GameState:
    """The people's seats under ``names`` (a bot whose name one of them has takes another)."""
    seats = [
        replace(seat, name=names[seat.key]) if not seat.is_bot and seat.key in names else seat
        for seat in state.seats
    ]
    return _replace_seats(state, _renamed_bots(seats))


def _leave(state: GameState, user: str) -> Step:
    if state.phase != Phase.LOBBY:
        return _refuse(state, closed_lobby(state))
    seat = state.seat(user)
    if seat is None:
        return _refuse(state, Line(Message.NOT_SEATED_TO_LEAVE))
    state = _replace_seats(state, (each for each in state.seats if each.key != user))
    if not state.people:
        state = replace(state, phase=Phase.CANCELLED, ended_by=user)
        return Step(state, (Show(LOBBY_BOARD, ClosedView(Line(Message.EVERYONE_LEFT))),))
    return Step(state, (_show_lobby(state),))


def _fill_with_bots(state: GameState, user: str) -> Step:
    refusal = _lobby_refusal(state, user)
    if refusal is not None:
        return refusal
    if not state.bots_allowed:
        return _refuse(state, Line(Message.BOTS_OFF))
    if len(state.seats) >= BOT_TABLE:
        return _refuse(state, Line(Message.BOTS_FILL_UP_TO, count=BOT_TABLE))
    state = _replace_seats(state, _with_bots(state.seats))
    return Step(state, (_show_lobby(state),))


def _with_bots(seats: Iterable[SeatState]) -> list[SeatState]:
    """``seats`` with bots in the empty seats up to a table of :data:`BOT_TABLE`."""
    seats = list(seats)
    taken = {seat.key for seat in seats}
    spare = (n for n in range(1, MAX_SEATS + 1) if f"bot{n}" not in taken)
    while len(seats) < BOT_TABLE:
        key = f"bot{next(spare)}"
        seats.append(SeatState(key, _bot_name(seats), is_bot=True, position=_free_position(seats)))
    return seats


def _name_words(name: str) -> set[str]:
    """A name and each word of it, case-folded: "Astrid Lind" and "astrid.lind" hold "astrid"."""
    folded = name.casefold()
    return {folded, *(word for word in re.split(r"[\W_]+", folded) if word)}


def _bot_name(seats: Iterable[SeatState], skip: SeatState | None = None) -> str:
    """The first bot name that no other seat's name has (in any case, as a whole or a word)."""
    taken: set[str] = set()
    for seat in seats:
        if seat is not skip:
            taken |= _name_words(seat.name)
    names = itertools.chain(BOT_NAMES, (f"Bot {n}" for n in itertools.count(1)))
    return next(name for name in names if name.casefold() not in taken)


def _renamed_bots(seats: list[SeatState]) -> list[SeatState]:
    """A bot whose name a person now seated has takes the next free name."""
    people_words: set[str] = set()
    for seat in seats:
        if not seat.is_bot:
            people_words |= _name_words(seat.name)
    renamed = list(seats)
    for index, seat in enumerate(renamed):
        if seat.is_bot and seat.name.casefold() in people_words:
            renamed[index] = replace(seat, name=_bot_name(renamed, skip=seat))
    return renamed


def cancel_refusal(state: GameState, user: str) -> Line | None:
    """Why ``user`` may not cancel the table; asked before they are asked to confirm, so
    nobody is asked "are you sure?" only to be refused."""
    refused = _lobby_refusal(state, user)
    return None if refused is None else refused.answer


def _cancel(state: GameState, user: str) -> Step:
    refusal = _lobby_refusal(state, user)
    if refusal is not None:
        return refusal
    state = replace(state, phase=Phase.CANCELLED, ended_by=user)
    return Step(state, (Show(LOBBY_BOARD, ClosedView(Line(Message.CANCELLED_BY, user=user))),))


def _start(
    state: GameState,
    user: str,
    unreachable: tuple[str, ...],
    reachable: tuple[str, ...] | None,
    now: datetime,
    names: Mapping[str, str],
) -> Step:
    refusal = _lobby_refusal(state, user)
    if refusal is not None:
        return refusal
    seats, people = len(state.seats), len(state.people)
    if people < MIN_PEOPLE:
        return _refuse(state, Line(Message.NEEDS_PEOPLE, count=MIN_PEOPLE))
    if not MIN_SEATS <= seats <= MAX_SEATS:
        return _refuse(
            state, Line(Message.SEATS_OUT_OF_BOUNDS, count=seats, flag=state.bots_allowed)
        )
    if reachable is not None and any(
        seat.key not in reachable and seat.key not in unreachable for seat in state.people
    ):
        return _refuse(state, SOMEONE_SAT_DOWN)
    cut_off = [seat for seat in state.people if seat.key in unreachable]
    if cut_off:
        lost = tuple(SeatName(seat.key, seat.name, seat.is_bot) for seat in cut_off)
        return Step(state, (Say(Line(Message.CANNOT_MESSAGE, seats=lost)),))
    state = _named(state, names)
    dealt = deal([seat.key for seat in state.seats], state.seed)
    lone = dealt.dealt_werewolves()
    started: list[SeatState] = []
    for seat in state.seats:
        card = dealt.dealt[seat.key]
        choice = None
        if seat.is_bot:
            view = BotView(seat.key, dealt.seats, card, lone_wolf=lone == (seat.key,))
            choice = bot_night_choice(view, bots_seed(state.seed))
        started.append(replace(seat, dealt=card, choice=choice, confirmed=seat.is_bot))
    state = replace(
        state,
        phase=Phase.NIGHT,
        seats=tuple(started),
        center=dealt.center,
        deadline=now + timedelta(seconds=state.lengths.night_seconds),
    )
    sealed = Say(Line(Message.DEAL_SEALED, fingerprint=state.fingerprint()))
    effects: list[Effect] = [_show_night_board(state), sealed]
    effects += [_show_night_dm(state, seat) for seat in state.people]
    return Step(state, tuple(effects))


# -- night --


def _show_night_board(state: GameState) -> Show:
    assert state.deadline is not None
    people = state.people
    confirmed = sum(seat.confirmed for seat in people)
    shown = state.fingerprint()
    view = NightBoardView(state.names, confirmed, len(people), state.deadline, shown)
    return Show(LOBBY_BOARD, view)


def _night_dm(state: GameState, seat: SeatState, night: Night | None = None) -> NightDmView:
    assert seat.dealt is not None
    dealt = state.deal()
    waking = None
    if seat.dealt in (Card.WEREWOLF, Card.MINION):
        waking = learned_on_choosing(dealt, seat.key, None)
    learned = learned_on_choosing(dealt, seat.key, seat.choice) if seat.confirmed else None
    dawn_card = None
    if night is not None and seat.dealt is Card.INSOMNIAC:
        dawn_card = night.dawn[seat.key]
    return NightDmView(
        game_id=state.id,
        channel=state.channel,
        me=SeatName(seat.key, seat.name, seat.is_bot),
        seats=state.names,
        card=seat.dealt,
        kind=state.choice_kind(seat.key),
        waking=waking,
        pending=seat.pending,
        confirmed=seat.confirmed,
        choice=seat.choice,
        learned=learned,
        dawn_card=dawn_card,
        late=night is not None and not seat.confirmed,
    )


def _show_night_dm(state: GameState, seat: SeatState, night: Night | None = None) -> Show:
    return Show(dm_surface(seat.key), _night_dm(state, seat, night))


def _night_move(state: GameState, move: NightMove, now: datetime) -> Step:
    if state.phase != Phase.NIGHT:
        return _refuse(state, NIGHT_IS_OVER)
    seat = state.seat(move.user)
    if seat is None:
        return _refuse(state, Line(Message.NIGHT_NOT_SEATED))
    if seat.confirmed:
        return _refuse(state, Line(Message.ALREADY_CONFIRMED))
    try:
        changed = _read_move(state, seat, move)
    except IllegalChoice as error:
        return _refuse(state, Line(Message.ILLEGAL_MOVE, rule=error.rule))
    state = _with_seat(state, changed)
    effects: list[Effect] = [_show_night_dm(state, changed)]
    if changed.confirmed:  # a first pick must not show on the board: only confirmations do
        if not state.awaiting():
            ended = _end_night(state, now)
            return Step(ended.state, (*effects, *ended.effects))
        effects.append(_show_night_board(state))
    return Step(state, tuple(effects))


def _read_move(state: GameState, seat: SeatState, move: NightMove) -> SeatState:
    """The seat after ``move``; raises IllegalChoice for a move its card cannot make."""
    kind = state.choice_kind(seat.key)
    choice: NightChoice
    match move:
        case NightConfirm():
            if kind is not None:
                raise IllegalChoice(NightRule.CHOICE_TO_MAKE)
            return replace(seat, confirmed=True, pending=None)
        case NightSkip():
            if kind is None:
                raise IllegalChoice(NightRule.NOTHING_TO_SKIP)
            return replace(seat, confirmed=True, pending=None)
        case NightResetPick():
            if kind != "swap":
                raise IllegalChoice(NightRule.NO_PICK)
            return replace(seat, pending=None)
        case NightPeek(_, index):
            if isinstance(index, bool) or index not in (0, 1):
                raise IllegalChoice(NightRule.CENTRE_CARD)
            choice = Peek(index)
        case NightLook(_, target):
            choice = LookAtCenter() if target is None else LookAtSeat(target)
        case NightRob(_, target):
            choice = Rob(target)
        case NightPick(_, target):
            if seat.pending is None:
                if kind != "swap":
                    raise IllegalChoice(NightRule.ONLY_TROUBLEMAKER)
                if target == seat.key or state.seat(target) is None:
                    raise IllegalChoice(NightRule.TWO_OTHERS)
                return replace(seat, pending=target)
            choice = Swap(seat.pending, target)
    check_choice(state.deal(), seat.key, choice)
    return replace(seat, choice=choice, pending=None, confirmed=True)


def _end_night(state: GameState, now: datetime) -> Step:
    """Dawn: the night resolves in its fixed order, each Insomniac sees its card, and the
    people who never confirmed are told the night ended; then the day begins."""
    night = state.night()
    effects: list[Effect] = [
        _show_night_dm(state, seat, night)
        for seat in state.people
        if seat.reachable and (seat.dealt is Card.INSOMNIAC or not seat.confirmed)
    ]
    effects.append(Show(LOBBY_BOARD, NightOverView(state.names, state.fingerprint())))
    effects.append(Say(Line(Message.NIGHT_SEALED, fingerprint=state.night_fingerprint())))
    seats = tuple(replace(seat, heard_enough=False, pending=None) for seat in state.seats)
    state = replace(
        state,
        phase=Phase.DAY,
        seats=seats,
        deadline=now + timedelta(seconds=state.lengths.day_seconds),
    )
    effects.append(_show_day_board(state))
    return Step(state, tuple(effects))


# -- day --


def _show_day_board(state: GameState) -> Show:
    assert state.deadline is not None
    people = state.people
    heard = sum(seat.heard_enough for seat in people)
    view = DayBoardView(
        state.id,
        state.deadline,
        heard,
        heard_enough_needed(len(people)),
        len(people),
        seat_count=len(state.seats),
        first_speaker=first_speaker(state),
        claims_order=claims_order(state),
        silent=tuple(name for name in state.names if name.is_bot),
    )
    return Show(DAY_BOARD, view)


def first_speaker(state: GameState) -> SeatName | None:
    """The person who opens the day's talk: drawn from the game's seed on a stream of its own,
    so the same game always names the same person and the name says nothing of the deal."""
    people = state.people
    if not people:
        return None
    seat = random.Random(f"{state.seed}/first speaker").choice(people)
    return SeatName(seat.key, seat.name, seat.is_bot)


def claims_order(state: GameState) -> tuple[SeatName, ...]:
    """Every person in the order they claim: the first speaker, then round the table in seat
    order (the bots, who make no claim, passed over)."""
    first = first_speaker(state)
    people = [SeatName(seat.key, seat.name, seat.is_bot) for seat in state.people]
    if first is None:
        return ()
    start = people.index(first)
    return tuple(people[start:] + people[:start])


def _heard_enough(state: GameState, user: str, clicked_at: Decimal | None, now: datetime) -> Step:
    if state.phase != Phase.DAY:
        closed = {
            Phase.LOBBY: DAY_NOT_BEGUN,
            Phase.NIGHT: DAY_NOT_BEGUN,
            Phase.VOTE: DAY_OVER_VOTE_OPEN,
        }
        return _refuse(state, closed.get(state.phase, DAY_IS_OVER))
    seat = state.seat(user)
    if seat is None or seat.is_bot:  # a bot has no say in when the day ends
        return _refuse(state, NOT_YOUR_DAY)
    last = seat.heard_enough_at
    if clicked_at is not None and last is not None and clicked_at <= last:
        # Slack delivering the same click again (or an older one): it toggles nothing.
        return Step(state, (Answer(_heard_enough_answer(seat.heard_enough)),))
    at = clicked_at if clicked_at is not None else last
    changed = replace(seat, heard_enough=not seat.heard_enough, heard_enough_at=at)
    state = _with_seat(state, changed)
    people = state.people
    heard = sum(each.heard_enough for each in people)
    if vote_opens_early(len(people), heard):
        reason = most_heard_enough(heard, len(people))
        ended = _end_day(state, now, reason)
        return Step(
            ended.state, (*ended.effects, Answer(Line(Message.VOTE_OPENED_BY_YOU, reason=reason)))
        )
    answer = _heard_enough_answer(changed.heard_enough)
    return Step(state, (_show_day_board(state), Answer(answer)))


def _heard_enough_answer(marked: bool) -> Line:
    return Line(Message.HEARD_ENOUGH_NOTED if marked else Message.HEARD_ENOUGH_TAKEN_BACK)


def _end_day(state: GameState, now: datetime, reason: Line) -> Step:
    """The vote opens; bots cast their ballots at once, from what they know."""
    effects: list[Effect] = [Show(DAY_BOARD, DayOverView(reason, len(state.seats)))]
    dealt = state.deal()
    night = state.night()
    wolves_in_deck = [*dealt.dealt.values(), *dealt.center].count(Card.WEREWOLF)
    seats = []
    for seat in state.seats:
        ballot = None
        if seat.is_bot:
            assert seat.dealt is not None
            view = BotView(
                seat=seat.key,
                seats=dealt.seats,
                dealt=seat.dealt,
                lone_wolf=state.is_lone_wolf(seat.key),
                choice=seat.choice,
                learned=night.seen.get(seat.key),
            )
            ballot = Ballot(bot_ballot(view, bots_seed(state.seed), wolves_in_deck))
        seats.append(replace(seat, ballot=ballot))
    state = replace(
        state,
        phase=Phase.VOTE,
        seats=tuple(seats),
        deadline=now + timedelta(seconds=state.lengths.vote_seconds),
    )
    effects.append(_show_ballot_board(state))
    if all(seat.ballot is not None for seat in state.seats):
        closed = _close_vote(state)
        return Step(closed.state, (*effects, *closed.effects))
    return Step(state, tuple(effects))


# -- vote --


def _show_ballot_board(state: GameState) -> Show:
    assert state.deadline is not None
    voted = sum(seat.ballot is not None for seat in state.seats)
    view = BallotBoardView(state.id, state.names, voted, len(state.seats), state.deadline)
    return Show(VOTE_BOARD, view)


def personal_ballot(state: GameState, user: str) -> PersonalBallotView | Line:
    """The ballot ``user`` may cast: every other seat and Nobody, their current choice marked;
    or why they have none."""
    if state.phase in BEFORE_THE_VOTE:
        return VOTE_NOT_YET_OPEN
    if state.phase != Phase.VOTE:
        return VOTE_IS_CLOSED
    seat = state.seat(user)
    if seat is None:
        return NO_BALLOT
    assert state.deadline is not None
    others = tuple(name for name in state.names if name.key != seat.key)
    kept = seat.ballot
    target = None if kept is None else kept.target
    return PersonalBallotView(
        state.id, others, kept is not None, target, state.deadline, state.language
    )


def _ballot_seat(state: GameState, target: str | None) -> SeatName | None:
    """The seat a ballot names; None for Nobody."""
    seat = None if target is None else state.seat(target)
    return None if seat is None else SeatName(seat.key, seat.name, seat.is_bot)


def _cast(state: GameState, user: str, target: str | None, clicked_at: Decimal | None) -> Step:
    if state.phase != Phase.VOTE:
        return _refuse(state, VOTE_IS_CLOSED)
    seat = state.seat(user)
    if seat is None:
        return _refuse(state, NO_BALLOT)
    try:
        check_ballot(tuple(each.key for each in state.seats), seat.key, target)
    except IllegalBallot:
        if target == seat.key:
            return _refuse(state, Line(Message.NO_SELF_VOTE))
        return _refuse(state, Line(Message.BALLOT_NAMES_NOBODY_SEATED))
    kept = seat.ballot
    if (
        kept is not None
        and clicked_at is not None
        and kept.clicked_at is not None
        and clicked_at < kept.clicked_at
    ):
        kept_seat = _ballot_seat(state, kept.target)
        return _refuse(state, Line(Message.BALLOT_STAYS, seat=kept_seat))
    state = _with_seat(state, replace(seat, ballot=Ballot(target, clicked_at)))
    choice = _ballot_seat(state, target)
    if all(each.ballot is not None for each in state.seats):
        closed = _close_vote(state)
        answer = Line(Message.BALLOT_CAST_LAST, seat=choice)
        return Step(closed.state, (*closed.effects, Answer(answer)))
    answer = Line(Message.BALLOT_CAST, seat=choice)
    return Step(state, (_show_ballot_board(state), Answer(answer)))


def _close_vote(state: GameState) -> Step:
    """Count, decide, score, and reveal everything."""
    state = replace(state, phase=Phase.OVER, deadline=None)
    outcome = state.outcome()
    assert outcome is not None
    result = outcome.result
    awards = tuple(
        Award(
            key=seat.key,
            points=result.points[seat.key],
            won=seat.key in result.winners,
            named_werewolf=seat.key in result.named_werewolf,
        )
        for seat in state.seats
    )
    voted = sum(seat.ballot is not None for seat in state.seats)
    effects: list[Effect] = [
        Scored(outcome, awards),
        Show(VOTE_BOARD, BallotClosedView(voted, len(state.seats))),
        Show(REVEAL, RevealView(outcome, state.names, state.id)),
    ]
    for seat in state.people:
        assert seat.dealt is not None
        if not seat.reachable:
            continue
        view = GameOverDmView(
            channel=state.channel,
            dealt=seat.dealt,
            dawn=outcome.night.dawn[seat.key],
            points=result.points[seat.key],
            won=seat.key in result.winners,
            ballot=ballot_score(outcome, seat.key),
            moved=outcome.night.changed_hands(seat.key),
        )
        effects.append(Show(over_surface(seat.key), view))
    return Step(state, tuple(effects))


# -- ending early --


def current_board(state: GameState) -> str:
    """The channel message that shows the phase now."""
    return board_of(state.phase)


def board_of(phase: Phase) -> str:
    """The channel message that shows ``phase``: the lobby's message is the night's board."""
    return {Phase.DAY: DAY_BOARD, Phase.VOTE: VOTE_BOARD}.get(phase, LOBBY_BOARD)


def ended_phase(phase: Phase) -> Phase:
    """The phase an open game ends in when something other than a person ends it (its channel
    lost, a fault): stopped once the cards are dealt, cancelled while still in the lobby."""
    return Phase.CANCELLED if phase == Phase.LOBBY else Phase.STOPPED


def _stop(state: GameState, user: str) -> Step:
    """Who may stop a game is :mod:`slackapp.game.permissions`' rule, decided before the step
    from what the game does not know (the channel's standing table, Slack's admin flags)."""
    if not state.is_open:
        return _refuse(state, Line(Message.NO_GAME_RUNNING))
    board = current_board(state)
    if state.phase == Phase.LOBBY:  # no game had begun: the table is called off
        state = replace(state, phase=Phase.CANCELLED, deadline=None, ended_by=user)
        note = ClosedView(Line(Message.CANCELLED_BY, user=user))
        return Step(state, (Show(board, note), Answer(Line(Message.YOU_CANCELLED))))
    state = replace(state, phase=Phase.STOPPED, deadline=None, ended_by=user)
    note = ClosedView(Line(Message.STOPPED_BY, user=user))
    told = ClosedView(Line(Message.STOPPED_IN, user=user, channel=state.channel))
    effects: list[Effect] = [Show(board, note)]
    effects += [Show(dm_surface(seat.key), told) for seat in state.people if seat.reachable]
    # The board says it to the channel: one message, not two.
    effects.append(Answer(Line(Message.YOU_STOPPED)))
    return Step(state, tuple(effects))


def _channel_lost(state: GameState, error: str) -> Step:
    """The channel cannot be written to: the game ends, freeing the channel, and the host is
    told privately why; the people's night messages say it ended."""
    if not state.is_open:
        return Step(state)
    started = state.phase != Phase.LOBBY
    state = replace(state, phase=ended_phase(state.phase), deadline=None)
    told = Line(Message.CHANNEL_LOST, channel=state.channel, error=error, flag=started)
    effects: list[Effect] = [Tell(state.host, told)]
    if started:
        note = ClosedView(Line(Message.CHANNEL_LOST_ENDED, channel=state.channel, error=error))
        effects += [
            Show(dm_surface(seat.key), note)
            for seat in state.people
            if seat.reachable and seat.key != state.host
        ]
    return Step(state, tuple(effects))


def _dm_lost(state: GameState, key: str, error: str) -> Step:
    """A person cannot be reached privately: the table is told, and nothing else."""
    seat = state.seat(key)
    if not state.is_open or seat is None or seat.is_bot or not seat.reachable:
        return Step(state)
    state = _with_seat(state, replace(seat, reachable=False))
    return Step(
        state,
        (Say(Line(Message.UNREACHABLE, seat=SeatName(seat.key, seat.name, seat.is_bot))),),
    )


__all__ = [
    "SOMEONE_SAT_DOWN",
    "Ballot",
    "Cancel",
    "CastBallot",
    "ChannelUnwritable",
    "CloseLobby",
    "Deadline",
    "DmFailed",
    "Event",
    "FillWithBots",
    "GameState",
    "HeardEnough",
    "Join",
    "Leave",
    "Lengths",
    "NightConfirm",
    "NightLook",
    "NightPeek",
    "NightPick",
    "NightResetPick",
    "NightRob",
    "NightSkip",
    "Phase",
    "SeatState",
    "Start",
    "Step",
    "Stop",
    "WorkspaceLeft",
    "already_running",
    "board_of",
    "cancel_refusal",
    "claims_order",
    "closed_lobby",
    "current_board",
    "ended_phase",
    "erased_key",
    "first_speaker",
    "is_erased",
    "open_table",
    "play_again",
    "play_again_refusal",
    "step",
]
