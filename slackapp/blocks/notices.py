"""What a channel's notice (its settings or standing table changed) turns into when Slack
refuses it because the channel refuses Varulv (nobody added it there, say): a private word to
whoever made the change, that it stands all the same, the channel was not told, and how to
add Varulv. It begins as the word to a host whose table could not open there begins."""

from __future__ import annotations

from enum import StrEnum

from slackapp.blocks.words import ENGLISH, Words


class About(StrEnum):
    """What a channel's notice told it of."""

    SETTINGS = "settings"
    SCHEDULE = "schedule"
    """A standing table set: refused, it is paused, and opens no table until saved again."""
    UNSCHEDULED = "unscheduled"


def paused_too(words: Words = ENGLISH) -> str:
    """Added to the word to whoever changed the settings, when the refusal paused the standing
    table they had set there too."""
    return words._(
        "The channel's standing table is paused too: no table opens there until Varulv is in "
        "and someone saves it again with `/varulv schedule`."
    )


def table_paused(channel: str, error: str, words: Words = ENGLISH) -> str:
    """To whoever set the channel's standing table, when another's notice refused there
    paused it."""
    return words._(
        "Varulv can't post in <#{channel}> (Slack says `{error}`), so the standing table you set "
        "there is paused: no table opens there until you invite Varulv with `/invite @Varulv` "
        "and save it again with `/varulv schedule`.",
        channel=channel,
        error=error,
    )


def unheard(about: About, channel: str, error: str, words: Words = ENGLISH) -> str:
    """To whoever made the change that the channel's notice told of, once Slack refused the
    notice with ``error``."""
    w = words
    if about is About.SETTINGS:
        return w._(
            "Varulv can't post in <#{channel}> (Slack says `{error}`), so the channel was not "
            "told that you changed its settings. They are saved all the same, and the next game "
            "there uses them: invite Varulv with `/invite @Varulv`, then type `/varulv` to play.",
            channel=channel,
            error=error,
        )
    if about is About.SCHEDULE:
        return w._(
            "Varulv can't post in <#{channel}> (Slack says `{error}`), so the channel was not "
            "told of the standing table you set. It is saved, but paused: no table opens there "
            "until you invite Varulv with `/invite @Varulv` and save it again with "
            "`/varulv schedule`.",
            channel=channel,
            error=error,
        )
    return w._(
        "Varulv can't post in <#{channel}> (Slack says `{error}`), so the channel was not told "
        "that you removed its standing table. It is removed all the same.",
        channel=channel,
        error=error,
    )
