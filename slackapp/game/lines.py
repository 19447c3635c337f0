"""What the machine says, as data: a :class:`Line` names its :class:`Message` and carries the
values it speaks of. ``slackapp.blocks.said`` puts it into words in the table's language, so
nothing decides anything by comparing sentences, and one process serves tables in many
languages."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the rules' types are only named here
    from slackapp.game.night import NightRule
    from slackapp.game.permissions import Role, WhoMay


@dataclass(frozen=True)
class SeatName:
    """What a public screen may know of a seat: who sits there, never what it holds."""

    key: str
    name: str
    is_bot: bool


class Language(StrEnum):
    """A table's language: every screen's words, but not the cards' names and lines."""

    ENGLISH = "en"
    SWEDISH = "sv"


class Message(StrEnum):
    # joining, leaving and starting
    NOT_SEATED = "not_seated"
    NOT_SEATED_TO_LEAVE = "not_seated_to_leave"
    ALREADY_SEATED = "already_seated"
    TABLE_FULL = "table_full"
    BOTS_OFF = "bots_off"
    BOTS_FILL_UP_TO = "bots_fill_up_to"
    NEEDS_PEOPLE = "needs_people"
    SEATS_OUT_OF_BOUNDS = "seats_out_of_bounds"
    SOMEONE_SAT_DOWN = "someone_sat_down"
    CANNOT_MESSAGE = "cannot_message"
    # a table's lobby, closed
    GAME_GONE = "game_gone"
    GAME_OVER = "game_over"
    GAME_STARTED = "game_started"
    NOT_REVEALED = "not_revealed"
    SEATED_IN_LOBBY = "seated_in_lobby"
    LOBBY_OPEN = "lobby_open"
    GAME_RUNNING = "game_running"
    """``flag``: the person is seated; ``user``: the game's host; ``who_may``: who may end it;
    ``role``: why the person may."""
    NOBODY_STARTED = "nobody_started"
    EVERYONE_LEFT = "everyone_left"
    CANCELLED_BY = "cancelled_by"
    # the night
    NIGHT_IS_OVER = "night_is_over"
    NIGHT_NOT_SEATED = "night_not_seated"
    ALREADY_CONFIRMED = "already_confirmed"
    ILLEGAL_MOVE = "illegal_move"
    """``rule``: the rule the move breaks."""
    # the day
    DAY_NOT_BEGUN = "day_not_begun"
    DAY_IS_OVER = "day_is_over"
    DAY_OVER_VOTE_OPEN = "day_over_vote_open"
    NOT_YOUR_DAY = "not_your_day"
    HEARD_ENOUGH_NOTED = "heard_enough_noted"
    HEARD_ENOUGH_TAKEN_BACK = "heard_enough_taken_back"
    TIME_IS_UP = "time_is_up"
    HEARD_ENOUGH = "heard_enough"
    VOTE_OPENED_BY_YOU = "vote_opened_by_you"
    # the vote
    VOTE_NOT_YET_OPEN = "vote_not_yet_open"
    VOTE_IS_CLOSED = "vote_is_closed"
    NO_BALLOT = "no_ballot"
    NO_SELF_VOTE = "no_self_vote"
    BALLOT_NAMES_NOBODY_SEATED = "ballot_names_nobody_seated"
    BALLOT_STAYS = "ballot_stays"
    BALLOT_CAST = "ballot_cast"
    BALLOT_CAST_LAST = "ballot_cast_last"
    # ending early
    NO_GAME_RUNNING = "no_game_running"
    ANOTHER_GAME_NOW = "another_game_now"
    """The game whose stop was allowed ended meanwhile, and another is open."""
    STOPPED_BY = "stopped_by"
    STOPPED_IN = "stopped_in"
    """On each person's night message, which is in a DM: the stopped game's channel named."""
    YOU_STOPPED = "you_stopped"
    YOU_CANCELLED = "you_cancelled"
    """To who stopped a table still in its lobby: no game had begun."""
    CHANNEL_LOST = "channel_lost"
    """To the host, privately: ``flag`` when the game had begun (else its lobby closed)."""
    CHANNEL_LOST_ENDED = "channel_lost_ended"
    """On each person's night message."""
    UNREACHABLE = "unreachable"
    FAULT_ENDED = "fault_ended"
    """On the board: a fault ended the game."""
    FAULT_ENDED_IN = "fault_ended_in"
    """On each person's night message, which is in a DM: the same, the channel named."""
    FAULT_CHANNEL_FREE = "fault_channel_free"
    """Said in the channel: a fault ended its game, and a new one may start."""
    # the commitments, each in a message of its own that is never edited
    DEAL_SEALED = "deal_sealed"
    """The deal's fingerprint, as the cards are dealt."""
    NIGHT_SEALED = "night_sealed"
    """The night's fingerprint, at dawn."""
    # beside the machine: what a step says before or instead of it
    ANOTHER_WORKSPACE = "another_workspace"
    """A click from a workspace that does not own the game (Slack Connect)."""
    OPENED_MEANWHILE = "opened_meanwhile"
    """Another command opened the channel's table at the same moment, and it is closed again."""


@dataclass(frozen=True)
class Line:
    """One thing the machine says, and the values it speaks of (each message uses a few)."""

    message: Message
    user: str = ""
    """A person, by Slack id."""
    seat: SeatName | None = None
    """A seat: the one a ballot names (None: nobody), or the one a line is about."""
    seats: tuple[SeatName, ...] = ()
    count: int = 0
    total: int = 0
    flag: bool = False
    """A message's one yes-or-no: e.g. whether the lobby offers *Fill with bots*."""
    phase: str = ""
    channel: str = ""
    error: str = ""
    """What Slack said."""
    rule: NightRule | None = None
    """The rule a night move breaks."""
    fingerprint: str = ""
    """A commitment (``slackapp.game.fingerprint``)."""
    reason: Line | None = None
    """The line this one follows: why the vote opened."""
    who_may: WhoMay | None = None
    """Who besides the admins may do what the line is about (end a running game)."""
    role: Role | None = None
    """Why the person told may do it themselves (None: only if an admin): a refusal names
    only what its reader may do."""


__all__ = ["Language", "Line", "Message", "SeatName"]
