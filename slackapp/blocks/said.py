"""What the machine says (:class:`slackapp.game.lines.Line`), in the table's words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, TypeAlias

from slackapp.blocks.notices import remedy
from slackapp.blocks.words import ENGLISH, N_, Words
from slackapp.game.cards import MAX_SEATS, MIN_SEATS
from slackapp.game.lines import Line, Message, SeatName
from slackapp.game.night import NightRule
from slackapp.game.permissions import Role


def mention(seat: SeatName, words: Words = ENGLISH) -> str:
    """A person as a Slack mention, a bot as its bold name."""
    return words._("*{name}* (bot)", name=seat.name) if seat.is_bot else f"<@{seat.key}>"


def mentions(seats: tuple[SeatName, ...], words: Words = ENGLISH) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    names = [mention(seat, words) for seat in seats]
    if len(names) <= 1:
        return "".join(names)
    return words._("{some} and {last}", some=", ".join(names[:-1]), last=names[-1])


def _ballot(seat: SeatName | None, words: Words) -> str:
    return words._("Nobody") if seat is None else mention(seat, words)


def _phase(phase: str, words: Words) -> str:
    return {
        "night": words._("night"),
        "day": words._("day"),
        "vote": words._("the vote"),
    }.get(phase, phase)


def _broken_rule(rule: NightRule | None, w: Words) -> str:
    """Why the rules refuse a night move."""
    match rule:
        case NightRule.CHOICE_TO_MAKE:
            return w._("Your card has a choice to make: make it, or skip.")
        case NightRule.NOTHING_TO_SKIP:
            return w._("There is nothing to skip: your card makes no choice tonight.")
        case NightRule.NO_PICK:
            return w._("There is no pick to take back.")
        case NightRule.CENTRE_CARD:
            return w._("Peek at the left or the right centre card.")
        case NightRule.ONLY_TROUBLEMAKER:
            return w._("Only a Troublemaker picks players to swap.")
        case NightRule.TWO_OTHERS:
            return w._("Swap two other players.")
        case NightRule.TWO_DIFFERENT:
            return w._("Pick two different players to swap.")
        case NightRule.NOT_ITSELF:
            return w._("Pick someone other than yourself.")
        case NightRule.UNKNOWN_SEAT:
            return w._("Nobody sits in that seat at this table.")
    return w._("That is not a move your card can make.")


TemplatedMessage: TypeAlias = Literal[
    Message.NOT_SEATED_TO_LEAVE,
    Message.ALREADY_SEATED,
    Message.TABLE_FULL,
    Message.BOTS_OFF,
    Message.BOTS_FILL_UP_TO,
    Message.NEEDS_PEOPLE,
    Message.SOMEONE_SAT_DOWN,
    Message.CANNOT_MESSAGE,
    Message.GAME_GONE,
    Message.GAME_OVER,
    Message.GAME_STARTED,
    Message.NOT_REVEALED,
    Message.SEATED_IN_LOBBY,
    Message.NOBODY_STARTED,
    Message.EVERYONE_LEFT,
    Message.CANCELLED_BY,
    Message.NIGHT_IS_OVER,
    Message.NIGHT_NOT_SEATED,
    Message.ALREADY_CONFIRMED,
    Message.DAY_NOT_BEGUN,
    Message.DAY_IS_OVER,
    Message.DAY_OVER_VOTE_OPEN,
    Message.NOT_YOUR_DAY,
    Message.HEARD_ENOUGH_NOTED,
    Message.HEARD_ENOUGH_TAKEN_BACK,
    Message.TIME_IS_UP,
    Message.VOTE_NOT_YET_OPEN,
    Message.VOTE_IS_CLOSED,
    Message.NO_BALLOT,
    Message.NO_SELF_VOTE,
    Message.BALLOT_NAMES_NOBODY_SEATED,
    Message.BALLOT_STAYS,
    Message.BALLOT_CAST,
    Message.BALLOT_CAST_LAST,
    Message.NO_GAME_RUNNING,
    Message.ANOTHER_GAME_NOW,
    Message.STOPPED_BY,
    Message.STOPPED_IN,
    Message.YOU_STOPPED,
    Message.YOU_CANCELLED,
    Message.DEAL_SEALED,
    Message.NIGHT_SEALED,
    Message.CHANNEL_LOST_ENDED,
    Message.FAULT_ENDED,
    Message.FAULT_ENDED_IN,
    Message.FAULT_CHANNEL_FREE,
    Message.ANOTHER_WORKSPACE,
    Message.OPENED_MEANWHILE,
]
"""The messages said by one sentence each, its placeholders filled from the line
(:class:`_LineValues`); the others are worked out by :func:`said`."""

TEMPLATES: Final[Mapping[TemplatedMessage, str]] = {
    Message.NOT_SEATED_TO_LEAVE: N_("You are not seated."),
    Message.ALREADY_SEATED: N_("You are already seated."),
    Message.TABLE_FULL: N_("The table is full ({count} seats)."),
    Message.BOTS_OFF: N_("Bots are switched off in this channel."),
    Message.BOTS_FILL_UP_TO: N_("Bots only fill a table up to {count} seats."),
    Message.NEEDS_PEOPLE: N_(
        "A game needs at least {count} people: a bot cannot argue, and the day is the game."
    ),
    Message.SOMEONE_SAT_DOWN: N_("Someone sat down just as you pressed *Start*: press it again."),
    Message.CANNOT_MESSAGE: N_(
        "I can't send a private message to {who}, so the game can't start. The lobby stays "
        "open: they can check their Slack settings or press *Leave*."
    ),
    Message.GAME_GONE: N_("That game no longer exists."),
    Message.GAME_OVER: N_("That game is over. Type `/varulv` to start a new one."),
    Message.GAME_STARTED: N_("That game has already started."),
    Message.NOT_REVEALED: N_("Only a game that reached its reveal can be played again."),
    Message.SEATED_IN_LOBBY: N_(
        "You are seated at the table above: press *Start* once everyone is in."
    ),
    Message.NOBODY_STARTED: N_("Nobody started this table in time, so it is closed."),
    Message.EVERYONE_LEFT: N_("Everyone left, so the table is closed."),
    Message.CANCELLED_BY: N_("<@{user}> cancelled this table."),
    Message.NIGHT_IS_OVER: N_("The night is over: your choice can no longer change anything."),
    Message.NIGHT_NOT_SEATED: N_("You are not seated at this table."),
    Message.ALREADY_CONFIRMED: N_("You have already confirmed your night."),
    Message.DAY_NOT_BEGUN: N_("The day has not begun yet."),
    Message.DAY_IS_OVER: N_("The day is already over."),
    Message.DAY_OVER_VOTE_OPEN: N_("The day is over: the vote is open, so cast your ballot there."),
    Message.NOT_YOUR_DAY: N_("You are not seated at this table, so the day is not yours to end."),
    Message.HEARD_ENOUGH_NOTED: N_("Noted: you have heard enough. Press again to take it back."),
    Message.HEARD_ENOUGH_TAKEN_BACK: N_("Taken back: you want to hear more."),
    Message.TIME_IS_UP: N_("Time is up."),
    Message.VOTE_NOT_YET_OPEN: N_("The vote had not opened yet, so no ballot was cast."),
    Message.VOTE_IS_CLOSED: N_("The vote is closed: ballots can no longer change."),
    Message.NO_BALLOT: N_("You are not seated at this table, so you have no ballot."),
    Message.NO_SELF_VOTE: N_("You cannot vote for yourself. Pick another player, or Nobody."),
    Message.BALLOT_NAMES_NOBODY_SEATED: N_(
        "That ballot names nobody seated at this table. Pick a player, or Nobody."
    ),
    Message.BALLOT_STAYS: N_("Your ballot stays {choice}: you changed it after that click."),
    Message.BALLOT_CAST: N_("Your ballot: {choice}. You can change it until the vote closes."),
    Message.BALLOT_CAST_LAST: N_("Your ballot: {choice}. That was the last one: the reveal is up."),
    Message.NO_GAME_RUNNING: N_("No game is running in this channel."),
    Message.ANOTHER_GAME_NOW: N_(
        "That game ended just now, and the one open here now was not stopped."
    ),
    Message.STOPPED_BY: N_("<@{user}> stopped this game. No one scores."),
    Message.STOPPED_IN: N_("<@{user}> stopped the game in <#{channel}>. No one scores."),
    Message.YOU_STOPPED: N_("You stopped the game: its board in the channel now says so."),
    Message.YOU_CANCELLED: N_("You cancelled the table: its lobby in the channel now says so."),
    Message.DEAL_SEALED: N_(
        "The deal is sealed: its fingerprint is `{fingerprint}`. Keep a copy of this line: "
        "after the reveal, the referee checks every seat's card against it."
    ),
    Message.NIGHT_SEALED: N_(
        "The night is sealed: its fingerprint is `{fingerprint}`, over the deal's and every "
        "move made tonight, bots' included. After the reveal, the referee checks the night "
        "against it."
    ),
    Message.CHANNEL_LOST_ENDED: N_(
        "Varulv can no longer post in <#{channel}> (Slack says `{error}`), so this game has "
        "ended. No one scores."
    ),
    Message.FAULT_ENDED: N_("Varulv hit a fault in this game and had to end it. No one scores."),
    Message.FAULT_ENDED_IN: N_(
        "Varulv hit a fault in the game in <#{channel}> and had to end it. No one scores."
    ),
    Message.FAULT_CHANNEL_FREE: N_(
        "Sorry: Varulv hit a fault in this channel's game and had to end it, so no one scores. "
        "The channel is free again: type `/varulv` to start a new game."
    ),
    Message.ANOTHER_WORKSPACE: N_(
        "That table belongs to another workspace, so you cannot play at it from yours. Ask "
        "someone there to start a table in a channel of your own workspace."
    ),
    Message.OPENED_MEANWHILE: N_(
        "Someone opened a table in this channel at the same moment. Try again."
    ),
}


class _LineValues:
    """A line's values by the names its sentence gives them, each worked out only when the
    sentence asks for it (``str.format_map``)."""

    def __init__(self, line: Line, words: Words) -> None:
        self._line = line
        self._words = words

    def __getitem__(self, name: str) -> object:
        line = self._line
        match name:
            case "count":
                return line.count
            case "user":
                return line.user
            case "channel":
                return line.channel
            case "error":
                return line.error
            case "fingerprint":
                return line.fingerprint
            case "choice":
                return _ballot(line.seat, self._words)
            case "who":
                return mentions(line.seats, self._words)
        raise KeyError(name)


def said(line: Line, words: Words = ENGLISH) -> str:
    """The line in the table's words: one sentence from :data:`TEMPLATES`, or worked out here
    from the values it carries. A message in neither fails ``mypy``: every line has words."""
    w = words
    message = line.message
    match message:
        case Message.NOT_SEATED:
            if not line.flag:  # never point at a Join that would refuse
                return w._("You are not seated at this table, and every seat is taken.")
            return w._("You are not seated at this table. Press *Join* first.")
        case Message.LOBBY_OPEN:
            if not line.flag:
                return w._("A table is already open in this channel, and every seat is taken.")
            return w._("A table is already open in this channel: press *Join* on its lobby above.")
        case Message.SEATS_OUT_OF_BOUNDS:
            return _seats_out_of_bounds(line, w)
        case Message.GAME_RUNNING:
            return _game_running(line, w)
        case Message.ILLEGAL_MOVE:
            return _broken_rule(line.rule, w)
        case Message.HEARD_ENOUGH:
            return _heard_enough(line.count, line.total, w)
        case Message.VOTE_OPENED_BY_YOU:
            reason = "" if line.reason is None else said(line.reason, w)
            return w._("{reason} Yours made it: the vote is open.", reason=reason).strip()
        case Message.CHANNEL_LOST:
            return _channel_lost(line, w)
        case Message.UNREACHABLE:
            assert line.seat is not None
            return w._(
                "Varulv can't reach {who} by private message any more, so they can't see their "
                "messages from Varulv. The game goes on.",
                who=mention(line.seat, w),
            )
        case _:  # mypy: what is left must be a TemplatedMessage
            return w._(TEMPLATES[message]).format_map(_LineValues(line, w))


def _seats_out_of_bounds(line: Line, w: Words) -> str:
    text = w._(
        "A table has {low} to {high} seats; this one has {count}.",
        low=MIN_SEATS,
        high=MAX_SEATS,
        count=line.count,
    )
    fill = w._("Press *Fill with bots*.")
    return f"{text} {fill}" if line.flag else text


def _game_running(line: Line, w: Words) -> str:
    if not line.flag:
        where = w._(
            "You are not seated at it, so sit in on the next one: it is {phase} there.",
            phase=_phase(line.phase, w),
        )
    else:
        where = {
            "night": w._("It is night: check your DM from Varulv."),
            "day": w._("It is day: talk it out."),
            "vote": w._("The vote is open above."),
        }.get(line.phase, "")
    running = w._("A game is already running in this channel. {where}", where=where)
    match line.role:  # only those who may end it are pointed at `/varulv stop`
        case Role.HOST:
            return w._(
                "{running} As its host, you can end it with `/varulv stop`.", running=running
            )
        case Role.STANDING_OWNER:
            return w._(
                "{running} You set this channel's standing table, so you can end it with "
                "`/varulv stop`.",
                running=running,
            )
        case Role.ANYONE:
            return w._(
                "{running} Anyone in this channel can end it with `/varulv stop`.",
                running=running,
            )
    owner = None if line.who_may is None else line.who_may.standing_owner
    if owner is not None and owner != line.user:
        return w._(
            "{running} Its host, <@{user}>, <@{owner}>, who set this channel's standing table, "
            "and the workspace's admins can end it.",
            running=running,
            user=line.user,
            owner=owner,
        )
    return w._(
        "{running} Its host, <@{user}>, and the workspace's admins can end it.",
        running=running,
        user=line.user,
    )


def _heard_enough(count: int, total: int, w: Words) -> str:
    if count == total == 2:
        return w._("Both people have heard enough.")
    if count == total:
        return w._("All {count} people have heard enough.", count=count)
    return w._("{count} of the {total} people have heard enough.", count=count, total=total)


def _channel_lost(line: Line, w: Words) -> str:
    again = w._("Then type `/varulv` to play again.")
    if line.flag:
        lost = w._(
            "Varulv can no longer post in <#{channel}> (Slack says `{error}`), so the game "
            "there has ended and no one scores.",
            channel=line.channel,
            error=line.error,
        )
    else:
        lost = w._(
            "Varulv can't post in <#{channel}> (Slack says `{error}`), so the table there is "
            "closed.",
            channel=line.channel,
            error=line.error,
        )
    return f"{lost} {remedy(line.error, w)} {again}"


def said_or_text(text: Line | str, words: Words = ENGLISH) -> str:
    """A line in words, or words already written in the table's language."""
    return text if isinstance(text, str) else said(text, words)
