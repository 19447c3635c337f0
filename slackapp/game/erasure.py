"""What ``/varulv forget me`` did, as data: ``slackapp.db.erasure`` does it and says which of
these it was, and ``slackapp.blocks.forgotten`` puts that into the asker's words."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Forgotten:
    """What ``/varulv forget me`` erased."""

    score_channels: int
    games: int
    """Finished games in which the person is now an anonymous seat."""
    regular_channels: int
    name: bool


@dataclass(frozen=True)
class StillSeated:
    """Nothing was erased: the person is seated at a game that has not ended."""

    channels: tuple[str, ...]
    """The channels of those games, each once, in order."""
