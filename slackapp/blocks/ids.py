"""Action ids of every interactive element, and how their values are packed.

A button's value names the game it belongs to (so a button of an old game is recognised) and,
for choices, the seat it names. Channel buttons carry nothing secret: they name the game and,
on the ballot, the seat a button stands for — which every seat can see anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from slackapp.blocks.words import N_

JOIN = "lobby_join"
LEAVE = "lobby_leave"
FILL_BOTS = "lobby_fill_bots"
START = "lobby_start"
CANCEL = "lobby_cancel"
CANCEL_YES = "lobby_cancel_yes"
"""The button of the private question a seated person is asked after pressing *Cancel*."""

HEARD_ENOUGH = "day_heard_enough"
PLAY_AGAIN = "reveal_play_again"

# Buttons repeated per seat need distinct action ids within one message: PREFIX + ":" + index.
NIGHT_PEEK = "night_peek"
NIGHT_LOOK = "night_look"
NIGHT_ROB = "night_rob"
NIGHT_SWAP = "night_swap"
NIGHT_SKIP = "night_skip"
NIGHT_CONFIRM = "night_confirm"
NIGHT_SWAP_RESET = "night_swap_reset"
VOTE = "vote"
BALLOT = "vote_open"
"""The vote board's *Vote*: brings the person their own ballot, privately."""

USUALLY_PLAY = "usually_play"
"""On a lobby (the value names the game) and on the App Home (the value is ``0:<channel>``)."""
GAME_JSON = "game_json"
"""On ``/varulv last``: the whole game as the referee's input."""
OTHER_ACTIONS = (USUALLY_PLAY, GAME_JSON)
"""Buttons that are not a move in a game, each with a listener of its own."""

ALL_ACTIONS = (
    JOIN,
    LEAVE,
    FILL_BOTS,
    START,
    CANCEL,
    CANCEL_YES,
    NIGHT_PEEK,
    NIGHT_LOOK,
    NIGHT_ROB,
    NIGHT_SWAP,
    NIGHT_SWAP_RESET,
    NIGHT_SKIP,
    NIGHT_CONFIRM,
    HEARD_ENOUGH,
    BALLOT,
    VOTE,
    PLAY_AGAIN,
)
"""Every action id prefix the app listens for."""

CENTER = "center"
NOBODY = "nobody"


def indexed(prefix: str, index: int) -> str:
    """The action id of the ``index``-th button of a repeated kind."""
    return f"{prefix}:{index}"


def pattern(prefix: str) -> re.Pattern[str]:
    """Matches ``prefix`` alone or ``prefix:N``, and nothing more (Bolt searches with it, and
    ``$`` would let a final line break through)."""
    return re.compile(rf"\A{re.escape(prefix)}(:[0-9]+)?\Z")


@dataclass(frozen=True)
class ButtonValue:
    game_id: int
    target: str | None = None
    """A seat key, CENTER, NOBODY, a centre index ("0"/"1"), or None."""

    def pack(self) -> str:
        return str(self.game_id) if self.target is None else f"{self.game_id}:{self.target}"

    @classmethod
    def unpack(cls, value: str | None) -> ButtonValue:
        """Raise ValueError for anything that is not a packed button value."""
        if not value:
            raise ValueError("empty button value")
        game, _, target = value.partition(":")
        # Game ids fit an int4; a target is never a control character (nor the NUL that the
        # database cannot even look up).
        number = game.isascii() and game.isdigit() and len(game) <= 9
        if not number or len(value) > 200 or not target.isprintable():
            raise ValueError(f"not a button value: {value[:40]!r}")
        return cls(int(game), target or None)


STALE = N_("That button doesn't belong to any game I know.")
"""The answer to a button whose value names no game Varulv knows, or nothing it can read."""
