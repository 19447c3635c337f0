"""Who may change a channel's table: its settings, its standing table, or stopping its game.

Those who answer for the table may: the host of the channel's game, whoever set its standing
table, and the workspace's admins and owners. A channel an admin opened to everyone lets
anyone in it; only an admin opens or closes it. Pure: the caller gathers the facts (the game's
host, the standing table's owner, the channel's openness, Slack's admin flags) and renders
the refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

ADMIN_FLAGS = ("is_admin", "is_owner", "is_primary_owner")
"""Slack's users.info flags of a workspace's admins and owners."""


class Change(Enum):
    SETTINGS = "settings"
    """``/varulv settings``: the channel's lengths, bots and seasons."""
    SCHEDULE = "schedule"
    """``/varulv schedule``: set, change or remove the channel's standing table."""
    STOP = "stop"
    """``/varulv stop``: end the channel's running game."""
    OPENNESS = "openness"
    """Open the channel's table to everyone, or close it again."""


@dataclass(frozen=True)
class Asker:
    """Who asks, as far as the rule cares."""

    hosts_the_game: bool = False
    """Hosts the channel's game (for ``STOP``, the game to stop)."""
    set_the_standing_table: bool = False
    """Set the channel's standing table."""
    is_admin: bool = False
    """A workspace admin or owner."""


@dataclass(frozen=True)
class Refusal:
    """Who could have made the change, to say so privately."""

    change: Change
    host: str | None
    """The channel's game's host, when there is one and the change is theirs to make too."""
    standing_owner: str | None
    """Whoever set the channel's standing table, likewise."""

    @property
    def admins_only(self) -> bool:
        return self.host is None and self.standing_owner is None


def may(change: Change, asker: Asker, open_to_everyone: bool) -> bool:
    """Whether ``asker`` may make ``change`` in a channel (``open_to_everyone``: as an admin
    set it)."""
    if asker.is_admin:
        return True
    if change is Change.OPENNESS:
        return False
    return open_to_everyone or asker.hosts_the_game or asker.set_the_standing_table


def needs_admin_flags(change: Change, asker: Asker, open_to_everyone: bool) -> bool:
    """Whether only Slack's admin flags can still decide: ask Slack only then, since the
    channel's own facts already let most people who may."""
    return not asker.is_admin and not may(change, asker, open_to_everyone)


def refusal(change: Change, host: str | None, standing_owner: str | None) -> Refusal:
    """What to tell someone refused ``change``: who can, besides the admins and owners."""
    if change is Change.OPENNESS:
        return Refusal(change, None, None)
    return Refusal(change, host, standing_owner)


def is_admin(user: Mapping[str, object]) -> bool:
    """A users.info ``user`` of the workspace's admins or owners (in an Enterprise Grid, the
    organisation's too)."""
    grid = user.get("enterprise_user")
    flags = [user.get(flag) for flag in ADMIN_FLAGS]
    if isinstance(grid, Mapping):
        flags += [grid.get(flag) for flag in ADMIN_FLAGS]
    return any(flag is True for flag in flags)
