"""What the machine says (:class:`slackapp.game.lines.Line`), in the table's words."""

from __future__ import annotations

from slackapp.blocks.words import ENGLISH, Words
from slackapp.game.cards import MAX_SEATS, MIN_SEATS
from slackapp.game.lines import Line, Message, SeatName
from slackapp.game.night import NightRule


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
    return words._("nobody") if seat is None else mention(seat, words)


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


def said(line: Line, words: Words = ENGLISH) -> str:
    w = words
    match line.message:
        case Message.NOT_SEATED:
            if not line.flag:  # never point at a Join that would refuse
                return w._("You are not seated at this table, and every seat is taken.")
            return w._("You are not seated at this table. Press *Join* first.")
        case Message.NOT_SEATED_TO_LEAVE:
            return w._("You are not seated.")
        case Message.ALREADY_SEATED:
            return w._("You are already seated.")
        case Message.TABLE_FULL:
            return w._("The table is full ({count} seats).", count=line.count)
        case Message.BOTS_OFF:
            return w._("Bots are switched off in this channel.")
        case Message.BOTS_FILL_UP_TO:
            return w._("Bots only fill a table up to {count} seats.", count=line.count)
        case Message.NEEDS_PEOPLE:
            return w._(
                "A game needs at least {count} people: a bot cannot argue, and the day is the "
                "game.",
                count=line.count,
            )
        case Message.SEATS_OUT_OF_BOUNDS:
            text = w._(
                "A table has {low} to {high} seats; this one has {count}.",
                low=MIN_SEATS,
                high=MAX_SEATS,
                count=line.count,
            )
            fill = w._("Press *Fill with bots*.")
            return f"{text} {fill}" if line.flag else text
        case Message.SOMEONE_SAT_DOWN:
            return w._("Someone sat down just as you pressed *Start*: press it again.")
        case Message.CANNOT_MESSAGE:
            return w._(
                "I can't send a private message to {who}, so the game can't start. The lobby "
                "stays open: they can check their Slack settings or press *Leave*.",
                who=mentions(line.seats, w),
            )
        case Message.GAME_GONE:
            return w._("That game no longer exists.")
        case Message.GAME_OVER:
            return w._("That game is over. Type `/varulv` to start a new one.")
        case Message.GAME_STARTED:
            return w._("That game has already started.")
        case Message.NOT_REVEALED:
            return w._("Only a game that reached its reveal can be played again.")
        case Message.SEATED_IN_LOBBY:
            return w._("You are seated at the table above: press *Start* once everyone is in.")
        case Message.LOBBY_OPEN:
            if not line.flag:
                return w._("A table is already open in this channel, and every seat is taken.")
            return w._("A table is already open in this channel: press *Join* on its lobby above.")
        case Message.GAME_RUNNING:
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
            if line.hosts:  # only those who may end it are pointed at `/varulv stop`
                return w._(
                    "{running} As its host, you can end it with `/varulv stop`.", running=running
                )
            return w._(
                "{running} Its host, <@{user}>, can end it.", running=running, user=line.user
            )
        case Message.NOBODY_STARTED:
            return w._("Nobody started this table in time, so it is closed.")
        case Message.EVERYONE_LEFT:
            return w._("Everyone left, so the table is closed.")
        case Message.CANCELLED_BY:
            return w._("<@{user}> cancelled this table.", user=line.user)
        case Message.NIGHT_IS_OVER:
            return w._("The night is over: your choice can no longer change anything.")
        case Message.NIGHT_NOT_SEATED:
            return w._("You are not seated at this table.")
        case Message.ALREADY_CONFIRMED:
            return w._("You have already confirmed your night.")
        case Message.ILLEGAL_MOVE:
            return _broken_rule(line.rule, w)
        case Message.DAY_NOT_BEGUN:
            return w._("The day has not begun yet.")
        case Message.DAY_IS_OVER:
            return w._("The day is already over.")
        case Message.DAY_OVER_VOTE_OPEN:
            return w._("The day is over: the vote is open, so cast your ballot there.")
        case Message.NOT_YOUR_DAY:
            return w._("You are not seated at this table, so the day is not yours to end.")
        case Message.HEARD_ENOUGH_NOTED:
            return w._("Noted: you have heard enough. Press again to take it back.")
        case Message.HEARD_ENOUGH_TAKEN_BACK:
            return w._("Taken back: you want to hear more.")
        case Message.TIME_IS_UP:
            return w._("Time is up.")
        case Message.HEARD_ENOUGH:
            if line.count == line.total == 2:
                return w._("Both people have heard enough.")
            if line.count == line.total:
                return w._("All {count} people have heard enough.", count=line.count)
            return w._(
                "{count} of the {total} people have heard enough.",
                count=line.count,
                total=line.total,
            )
        case Message.VOTE_OPENED_BY_YOU:
            reason = "" if line.reason is None else said(line.reason, w)
            return w._("{reason} Yours made it: the vote is open.", reason=reason).strip()
        case Message.VOTE_NOT_YET_OPEN:
            return w._("The vote had not opened yet, so no ballot was cast.")
        case Message.VOTE_IS_CLOSED:
            return w._("The vote is closed: ballots can no longer change.")
        case Message.NO_BALLOT:
            return w._("You are not seated at this table, so you have no ballot.")
        case Message.NO_SELF_VOTE:
            return w._("You cannot vote for yourself. Pick another player, or nobody.")
        case Message.BALLOT_NAMES_NOBODY_SEATED:
            return w._("That ballot names nobody seated at this table. Pick a player, or nobody.")
        case Message.BALLOT_STAYS:
            return w._(
                "Your ballot stays {choice}: you changed it after that click.",
                choice=_ballot(line.seat, w),
            )
        case Message.BALLOT_CAST:
            return w._(
                "Your ballot: {choice}. You can change it until the vote closes.",
                choice=_ballot(line.seat, w),
            )
        case Message.BALLOT_CAST_LAST:
            return w._(
                "Your ballot: {choice}. That was the last one: the reveal is up.",
                choice=_ballot(line.seat, w),
            )
        case Message.NO_GAME_RUNNING:
            return w._("No game is running in this channel.")
        case Message.ANOTHER_GAME_NOW:
            return w._("That game ended just now, and the one open here now was not stopped.")
        case Message.STOPPED_BY:
            return w._("<@{user}> stopped this game. No one scores.", user=line.user)
        case Message.YOU_STOPPED:
            return w._("You stopped the game: its board in the channel now says so.")
        case Message.DEAL_SEALED:
            return w._(
                "The deal is sealed: its fingerprint is `{fingerprint}`. Keep a copy of this "
                "line: after the reveal, the referee checks every seat's card against it.",
                fingerprint=line.fingerprint,
            )
        case Message.NIGHT_SEALED:
            return w._(
                "The night is sealed: its fingerprint is `{fingerprint}`, over the deal's and "
                "every move made tonight, bots' included. After the reveal, the referee checks "
                "the night against it.",
                fingerprint=line.fingerprint,
            )
        case Message.CHANNEL_LOST:
            again = w._("Invite Varulv with `/invite @Varulv`, then type `/varulv` to play again.")
            if line.flag:
                lost = w._(
                    "Varulv can no longer post in <#{channel}> (Slack says `{error}`), so the "
                    "game there has ended and no one scores.",
                    channel=line.channel,
                    error=line.error,
                )
            else:
                lost = w._(
                    "Varulv can't post in <#{channel}> (Slack says `{error}`), so the table there "
                    "is closed.",
                    channel=line.channel,
                    error=line.error,
                )
            return f"{lost} {again}"
        case Message.CHANNEL_LOST_ENDED:
            return w._(
                "Varulv can no longer post in <#{channel}> (Slack says `{error}`), so this game "
                "has ended. No one scores.",
                channel=line.channel,
                error=line.error,
            )
        case Message.ANOTHER_WORKSPACE:
            return w._(
                "That table belongs to another workspace, so you cannot play at it from yours. "
                "Ask someone there to start a table in a channel of your own workspace."
            )
        case Message.OPENED_MEANWHILE:
            return w._("Someone opened a table in this channel at the same moment. Try again.")
        case Message.UNREACHABLE:
            assert line.seat is not None
            return w._(
                "Varulv can't reach {who} by private message any more, so they can't see their "
                "messages from Varulv. The game goes on.",
                who=mention(line.seat, w),
            )
    raise ValueError(f"no words for {line.message!r}")


def said_or_text(text: Line | str, words: Words = ENGLISH) -> str:
    """A line in words, or words already written in the table's language."""
    return text if isinstance(text, str) else said(text, words)
