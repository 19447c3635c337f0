"""The words that let anyone check a game from Slack alone: the deal's fingerprint on the
night board, where the referee that checks it comes from, and the fingerprint's recipe."""

from __future__ import annotations

from slackapp.blocks.kit import Json, context, escaped
from slackapp.blocks.words import ENGLISH, Words
from slackapp.referee_file import REFEREE_FILE, REFEREE_PATH

RUN_THE_REFEREE = f"python3 {REFEREE_FILE} < game.json"
"""The referee is one file that Python runs by itself: nothing to install."""


def get_the_referee(words: Words = ENGLISH, source_url: str | None = None) -> str:
    """Where the referee file comes from (the project's published source, when the
    deployment names it; else the app's own address) and the line that runs it."""
    if source_url:
        return words._(
            "get the referee, the one file `{file}`, from the release of Varulv's source at "
            "{source}, save the game as `game.json`, then run `{run}`: Python alone, nothing "
            "to install.",
            file=REFEREE_FILE,
            source=source_url,
            run=escaped(RUN_THE_REFEREE),
        )
    return words._(
        "get the referee, the one file `{file}`, which this app serves at `{path}` (whoever "
        "runs Varulv here can give it to you), save the game as `game.json`, then run "
        "`{run}`: Python alone, nothing to install.",
        file=REFEREE_FILE,
        path=REFEREE_PATH,
        run=escaped(RUN_THE_REFEREE),
    )


def fingerprint_recipe(words: Words = ENGLISH) -> str:
    """The fingerprint's recipe in one line, for a person with only ``hashlib``."""
    return words._(
        "The deal's fingerprint is the first 32 hex digits of the SHA-256 of the text `SALT "
        "KEY1:CARD1 … KEYn:CARDn CENTRE1 CENTRE2`: the game's salt, each seat's key (in "
        "`keys`) and dealt card in seat order, and the two centre cards, separated by single "
        "spaces; the night's, of `DEAL-FINGERPRINT SALT KEY:MOVE …` (docs/referee.md)."
    )


def fingerprint_context(fingerprint: str, words: Words = ENGLISH) -> list[Json]:
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
