"""Who may change a channel's table: its settings, its standing table, or stopping a game.

Rights over a channel come from its admins, never from dealing a game (anyone may open a
lobby with ``/varulv`` and deal it with bots):

- a game's host may stop that game, and nothing more;
- whoever set the channel's standing table may change or remove it, change the channel's
  settings and stop its games; it stays theirs (and the admins') until an admin saves it,
  which makes it the admin's, or removes it;
- the workspace's admins and owners may make every change, and alone open the channel's
  table to everyone or close it again;
- in a channel an admin opened to everyone, anyone may change its settings, stop its games
  and set a standing table where none is set; a standing table set is still its setter's.

Pure: the caller gathers the facts (the game's host, the standing table's owner, the
channel's openness, Slack's admin flags) and renders the refusal.
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
    """Hosts the game to stop (only ``STOP`` cares)."""
    set_the_standing_table: bool = False
    """Set the channel's standing table."""
    is_admin: bool = False
    """A workspace admin or owner."""


@dataclass(frozen=True)
class Channel:
    """The channel's facts, as an admin or a standing table's setter left them."""

    open_to_everyone: bool = False
    has_standing_table: bool = False


@dataclass(frozen=True)
class Refusal:
    """Who could have made the change, to say so privately."""

    change: Change
    host: str | None
    """The game's host, when the change is theirs to make too (a stop)."""
    standing_owner: str | None
    """Whoever set the channel's standing table, likewise."""

    @property
    def admins_only(self) -> bool:
        return self.host is None and self.standing_owner is None


class Role(Enum):
    """Why someone who is not an admin may make a change."""

    HOST = "host"
    """They host the game (a stop)."""
    STANDING_OWNER = "standing owner"
    """They set the channel's standing table."""
    ANYONE = "anyone"
    """An admin opened the channel's table to everyone."""


@dataclass(frozen=True)
class WhoMay:
    """Who may make a change in a channel besides the workspace's admins and owners (who may
    make every change), to say so by name."""

    anyone: bool
    """Anyone in the channel may."""
    host: str | None
    """The game's host, when the change is theirs to make (a stop)."""
    standing_owner: str | None
    """Whoever set the channel's standing table, when the change is theirs to make."""

    def role_of(self, user: str | None) -> Role | None:
        """Why ``user`` may make the change, their own part first; None: only if an admin."""
        if user is not None and user == self.host:
            return Role.HOST
        if user is not None and user == self.standing_owner:
            return Role.STANDING_OWNER
        return Role.ANYONE if self.anyone else None


def may(change: Change, asker: Asker, channel: Channel) -> bool:
    """Whether ``asker`` may make ``change`` in ``channel``."""
    if asker.is_admin:
        return True
    if change is Change.OPENNESS:
        return False
    if asker.set_the_standing_table:
        return True
    if change is Change.STOP:
        return asker.hosts_the_game or channel.open_to_everyone
    if change is Change.SCHEDULE:
        return channel.open_to_everyone and not channel.has_standing_table
    return channel.open_to_everyone


def sees_every_standing_table(asker: Asker, of_the_workspace: bool) -> bool:
    """Whether ``asker`` is shown a workspace's standing tables in every channel (on the
    standing table's form): its own admins and owners only (``of_the_workspace``: they belong
    to the workspace that keeps them, not to another of an organisation sharing the channel),
    since a table in a private channel is its members' business."""
    return asker.is_admin and of_the_workspace


def needs_admin_flags(change: Change, asker: Asker, channel: Channel) -> bool:
    """Whether only Slack's admin flags can still decide: ask Slack only then, since the
    channel's own facts already let most people who may."""
    return not asker.is_admin and not may(change, asker, channel)


def who_may(
    change: Change, open_to_everyone: bool, host: str | None, standing_owner: str | None
) -> WhoMay:
    """Who may make ``change`` in a channel (open to everyone or not, its standing table set by
    ``standing_owner``, its game hosted by ``host``), besides the admins: :func:`may` asked of
    each part alone, so it names exactly whom the rule lets."""
    channel = Channel(open_to_everyone, has_standing_table=standing_owner is not None)
    hosts, owns = Asker(hosts_the_game=True), Asker(set_the_standing_table=True)
    return WhoMay(
        anyone=may(change, Asker(), channel),
        host=host if may(change, hosts, channel) else None,
        standing_owner=standing_owner if may(change, owns, channel) else None,
    )


def refusal(change: Change, host: str | None, standing_owner: str | None) -> Refusal:
    """What to tell someone refused ``change``: who can, besides the admins and owners. The
    channel's openness let them do nothing, so they are told whom a closed channel lets."""
    who = who_may(change, False, host, standing_owner)
    return Refusal(change, who.host, who.standing_owner)


def is_admin(user: Mapping[str, object]) -> bool:
    """A users.info ``user`` of the workspace's admins or owners (in an Enterprise Grid, the
    organisation's too)."""
    grid = user.get("enterprise_user")
    flags = [user.get(flag) for flag in ADMIN_FLAGS]
    if isinstance(grid, Mapping):
        flags += [grid.get(flag) for flag in ADMIN_FLAGS]
    return any(flag is True for flag in flags)
