"""The private answer to someone who may not change a channel's table: who can."""

from __future__ import annotations

from slackapp.blocks.screen import and_list
from slackapp.blocks.words import ENGLISH, N_, Words
from slackapp.game.permissions import Change, Refusal

WHAT = {
    Change.SETTINGS: N_("change this channel's Varulv settings"),
    Change.SCHEDULE: N_("set, change or remove this channel's standing table"),
    Change.STOP: N_("stop this game"),
    Change.OPENNESS: N_("open this channel's table to everyone, or close it again"),
}
ADMINS = N_("the workspace's admins and owners")
OPEN_TO_EVERYONE = N_("Anyone in the channel may change its table")
OPEN_TO_EVERYONE_DETAIL = N_("Its settings and standing table, and stopping its games.")
OPEN_TO_EVERYONE_HINT = N_(
    "Otherwise only whoever set the standing table and the workspace's admins and owners may; "
    "a game's host may stop that game. Only admins and owners see this choice."
)


def who_may_now(opened: bool, words: Words = ENGLISH) -> str:
    """The channel told that an admin opened its table to everyone, or closed it again."""
    if opened:
        return words._(
            "Anyone in this channel may now change its settings and standing table, and stop its "
            "games."
        )
    return words._(
        "Only whoever set the standing table and the workspace's admins and owners may now "
        "change its settings and stop its games; a game's host may still stop that game."
    )


def refused(refusal: Refusal, words: Words = ENGLISH) -> str:
    """One line: only these people can make the change."""
    w = words
    roles: dict[str, list[str]] = {}
    if refusal.host is not None:
        roles.setdefault(refusal.host, []).append(w._("the game's host"))
    if refusal.standing_owner is not None:
        roles.setdefault(refusal.standing_owner, []).append(w._("who set the standing table"))
    who = [f"<@{user}> ({', '.join(what)})" for user, what in roles.items()]
    who.append(w._(ADMINS))
    listed = and_list(who, w)
    return w._("Only {who} can {what}.", who=listed, what=w._(WHAT[refusal.change]))
