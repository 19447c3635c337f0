"""Varulv's rules as pure functions over plain data: no Slack, no database, no clock.

``cards`` holds the seven cards and the deck, ``night`` the choices and the fixed-order
resolution, ``vote`` the day's majority, the tally and the winners, ``bots`` how bots play,
``referee`` the REFEREE.md JSON seam, and ``machine`` the whole game as one phase machine:
``machine.step(state, event, now)`` returns the next state and what every Slack surface must
show.
"""

from slackapp.game.bots import BotView, bot_ballot, bot_night_choice
from slackapp.game.cards import (
    BOT_TABLE,
    MAX_SEATS,
    MIN_PEOPLE,
    MIN_SEATS,
    Card,
    Deal,
    Team,
    deal,
    deck_for,
)
from slackapp.game.night import (
    IllegalChoice,
    Knowledge,
    LookAtCenter,
    LookAtSeat,
    Night,
    NightChoice,
    NightRule,
    NightStep,
    Peek,
    Rob,
    SawCard,
    SawCenter,
    SawSeat,
    SawWerewolves,
    Swap,
    check_choice,
    choice_kind,
    learned_on_choosing,
    resolve_night,
)
from slackapp.game.outcome import Outcome, play
from slackapp.game.vote import (
    NOBODY,
    IllegalBallot,
    Result,
    Tally,
    check_ballot,
    decide,
    heard_enough_needed,
    tally,
    vote_opens_early,
)

__all__ = [
    "BOT_TABLE",
    "MAX_SEATS",
    "MIN_PEOPLE",
    "MIN_SEATS",
    "NOBODY",
    "BotView",
    "Card",
    "Deal",
    "IllegalBallot",
    "IllegalChoice",
    "Knowledge",
    "LookAtCenter",
    "LookAtSeat",
    "Night",
    "NightChoice",
    "NightRule",
    "NightStep",
    "Outcome",
    "Peek",
    "Result",
    "Rob",
    "SawCard",
    "SawCenter",
    "SawSeat",
    "SawWerewolves",
    "Swap",
    "Tally",
    "Team",
    "bot_ballot",
    "bot_night_choice",
    "check_ballot",
    "check_choice",
    "choice_kind",
    "deal",
    "decide",
    "deck_for",
    "heard_enough_needed",
    "learned_on_choosing",
    "play",
    "resolve_night",
    "tally",
    "vote_opens_early",
]
