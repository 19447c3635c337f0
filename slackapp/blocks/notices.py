"""What a channel's notice (its settings or standing table changed) turns into when Slack
refuses it because the channel refuses Varulv (nobody added it there, say): a private word to
whoever made the change, that it stands all the same, the channel was not told, and what lets
Varulv post there again. It begins as the word to a host whose table could not open there
begins, and ends with the same remedy (:func:`remedy`)."""

from __future__ import annotations

from enum import StrEnum

from slackapp.blocks.words import ENGLISH, Words


class About(StrEnum):
    """What a channel's notice told it of."""

    SETTINGS = "settings"
    SCHEDULE = "schedule"
    """A standing table set: refused, it is paused, and opens no table until saved again."""
    UNSCHEDULED = "unscheduled"


NOT_A_MEMBER = frozenset({"not_in_channel", "channel_not_found"})
"""Slack's errors for a channel Varulv was never added to (a private one it cannot even see)."""


ARCHIVED = frozenset({"is_archived", "is_inactive"})
"""Slack's errors for an archived channel: a post's, and ``chat.update``'s (which says the same
of a frozen or deleted one)."""


ONLY_SOME_POST = frozenset({"restricted_action", "restricted_action_read_only_channel"})
"""Slack's errors for a channel where only some members may post."""


def remedy(error: str, words: Words = ENGLISH) -> str:
    """What lets Varulv post in a channel that refused it with Slack's ``error`` again."""
    w = words
    if error in NOT_A_MEMBER:
        return w._("Invite Varulv with `/invite @Varulv`.")
    if error in ARCHIVED:
        return w._("The channel is archived: unarchive it.")
    if error in ONLY_SOME_POST:
        return w._(
            "Only some members may post in that channel: ask a workspace admin to let Varulv "
            "post there."
        )
    return w._("Ask a workspace admin to check that Varulv is installed and may post there.")


def paused_too(words: Words = ENGLISH) -> str:
    """Added to the word to whoever changed the settings, when the refusal paused the standing
    table they had set there too."""
    return words._(
        "The channel's standing table is paused too: no table opens there until Varulv can post "
        "there and someone saves it again with `/varulv schedule`."
    )


def table_paused(channel: str, error: str, words: Words = ENGLISH) -> str:
    """To whoever set the channel's standing table, when another's notice refused there
    paused it."""
    paused = words._(
        "Varulv can't post in <#{channel}> (Slack says `{error}`), so the standing table you set "
        "there is paused: no table opens there until Varulv can post there and you save it again "
        "with `/varulv schedule`.",
        channel=channel,
        error=error,
    )
    return f"{paused} {remedy(error, words)}"


def unheard(about: About, channel: str, error: str, words: Words = ENGLISH) -> str:
    """To whoever made the change that the channel's notice told of, once Slack refused the
    notice with ``error``."""
    w = words
    if about is About.SETTINGS:
        saved = w._(
            "Varulv can't post in <#{channel}> (Slack says `{error}`), so the channel was not "
            "told that you changed its settings. They are saved all the same, and the next game "
            "there uses them.",
            channel=channel,
            error=error,
        )
        return f"{saved} {remedy(error, w)}"
    if about is About.SCHEDULE:
        paused = w._(
            "Varulv can't post in <#{channel}> (Slack says `{error}`), so the channel was not "
            "told of the standing table you set. It is saved, but paused: no table opens there "
            "until Varulv can post there and you save it again with `/varulv schedule`.",
            channel=channel,
            error=error,
        )
        return f"{paused} {remedy(error, w)}"
    return w._(
        "Varulv can't post in <#{channel}> (Slack says `{error}`), so the channel was not told "
        "that you removed its standing table. It is removed all the same.",
        channel=channel,
        error=error,
    )
