"""What a failed Web API call means for the message: try again later, or give it up, and what
the step machine is told. Plain data in and out (``slackapp.delivery.slack.classify`` says what
Slack's answer was)."""

from __future__ import annotations

from dataclasses import dataclass

from slackapp.delivery.outbox import TELL
from slackapp.delivery.slack import Failure
from slackapp.game import machine as m
from slackapp.game.effects import dm_key

MAX_ATTEMPTS = 10
BACKOFF_CAP_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Retry:
    """Try again in ``delay`` seconds; ``attempts`` so far, this one included."""

    delay: float
    attempts: int


@dataclass(frozen=True, slots=True)
class GiveUp:
    """The message is done with ``code`` as its failure; ``report``: what the step machine is
    told (None: nothing); ``whole_channel``: every undelivered message to its channel goes
    with it (the channel refuses the bot)."""

    code: str
    report: m.Event | None = None
    whole_channel: bool = False


def backoff(attempts: int) -> float:
    return min(BACKOFF_CAP_SECONDS, 0.5 * 2.0**attempts)


def after_failure(
    failure: Failure, code: str, retry_after: float | None, attempts: int, surface: str
) -> Retry | GiveUp:
    """``attempts``: the message's failed tries before this one."""
    if failure is Failure.TRANSIENT:
        tried = attempts + 1
        if tried >= MAX_ATTEMPTS:
            return GiveUp(code)
        return Retry(retry_after if retry_after is not None else backoff(tried), tried)
    if failure is not Failure.UNWRITABLE:
        return GiveUp(code)  # gone (left as it is) or broken (the same would fail the same)
    key = dm_key(surface)
    if key is not None:
        return GiveUp(code, m.DmFailed(key, code))
    if surface.startswith(TELL):
        return GiveUp(code)
    return GiveUp(code, m.ChannelUnwritable(code), whole_channel=True)
