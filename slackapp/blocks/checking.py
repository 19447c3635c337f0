"""The words that let anyone check a game from Slack alone: the deal's fingerprint on the
night board, and where the referee that checks it comes from."""

from __future__ import annotations

from slack_sdk.models.blocks import Block

from slackapp.blocks.screen import context
from slackapp.blocks.words import ENGLISH, Words

INSTALL_THE_REFEREE = "pip install varulv"
"""The referee is the package's own command: nobody needs the app's repository to check."""


def get_the_referee(words: Words = ENGLISH) -> str:
    return words._(
        "get the referee with `{install}`, save the game as `game.json`, then run "
        "`varulv referee < game.json`.",
        install=INSTALL_THE_REFEREE,
    )


def fingerprint_context(fingerprint: str, words: Words = ENGLISH) -> list[Block]:
    """The fingerprint's line on a night board (none when there is no fingerprint)."""
    if not fingerprint:
        return []
    return [
        context(
            words._(
                "Fingerprint of the deal: `{fingerprint}`. After the reveal, `/varulv last` "
                "gives the whole game with the salt that proves this was the deal.",
                fingerprint=fingerprint,
            )
        )
    ]
