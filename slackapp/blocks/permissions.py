"""The private answer to someone who may not change a channel's table: who can."""

from __future__ import annotations

from slackapp.game.permissions import Change, Refusal

WHAT = {
    Change.SETTINGS: "change this channel's Varulv settings",
    Change.SCHEDULE: "set, change or remove this channel's standing table",
    Change.STOP: "stop this game",
    Change.OPENNESS: "open this channel's table to everyone, or close it again",
}
ADMINS = "the workspace's admins and owners"
OPEN_TO_EVERYONE = "Anyone in the channel may change its table"
OPEN_TO_EVERYONE_DETAIL = "Its settings and standing table, and stopping its games."
OPEN_TO_EVERYONE_HINT = (
    "Otherwise only the game's host, whoever set the standing table, and the workspace's "
    "admins and owners may. Only admins and owners see this choice."
)


def refused(refusal: Refusal) -> str:
    """One line: only these people can make the change."""
    roles: dict[str, list[str]] = {}
    if refusal.host is not None:
        roles.setdefault(refusal.host, []).append("the game's host")
    if refusal.standing_owner is not None:
        roles.setdefault(refusal.standing_owner, []).append("who set the standing table")
    who = [f"<@{user}> ({', '.join(what)})" for user, what in roles.items()]
    who.append(ADMINS)
    listed = who[0] if len(who) == 1 else ", ".join(who[:-1]) + " and " + who[-1]
    return f"Only {listed} can {WHAT[refusal.change]}."
