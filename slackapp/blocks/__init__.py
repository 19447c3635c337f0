"""Varulv's Block Kit screens: each function returns a :class:`Screen` (or the Home tab's View).

The app sends ``screen.text`` and ``screen.as_dicts()`` with chat.postMessage / chat.update.
Public screens (lobby, night board, day board, ballot board) never show a card or a ballot.
"""

from slackapp.blocks.ballot import ballot_board, ballot_closed
from slackapp.blocks.day import day_board, day_over
from slackapp.blocks.help import help_screen, leaderboard
from slackapp.blocks.home import home_view
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.lobby import lobby, lobby_closed
from slackapp.blocks.night import (
    dawn_dm_text,
    knowledge_text,
    night_board,
    night_dm,
    night_over,
)
from slackapp.blocks.reveal import dm_game_over, reveal
from slackapp.blocks.screen import Screen, slack_time

__all__ = [
    "Screen",
    "SeatLabel",
    "ballot_board",
    "ballot_closed",
    "dawn_dm_text",
    "day_board",
    "day_over",
    "dm_game_over",
    "help_screen",
    "home_view",
    "knowledge_text",
    "leaderboard",
    "lobby",
    "lobby_closed",
    "night_board",
    "night_dm",
    "night_over",
    "reveal",
    "slack_time",
]
