"""What a failed call means for its message, for every kind of failure, attempt and message."""

from __future__ import annotations

import itertools

from slackapp.delivery.policy import MAX_ATTEMPTS, GiveUp, Retry, after_failure, backoff
from slackapp.delivery.slack import Failure
from slackapp.game import machine as m
from slackapp.game.effects import LOBBY_BOARD

SURFACES = [LOBBY_BOARD, "dm:U1", "over:U1", "tell:U1:abc", "say:abc"]


def test_every_failure_of_every_message() -> None:
    for failure, attempts, surface, retry_after in itertools.product(
        Failure, range(MAX_ATTEMPTS + 1), SURFACES, (None, 7.0)
    ):
        then = after_failure(failure, "some_error", retry_after, attempts, surface)
        if failure is Failure.TRANSIENT and attempts + 1 < MAX_ATTEMPTS:
            # Tried again, after Slack's Retry-After when it said one, else a growing backoff.
            assert then == Retry(retry_after or backoff(attempts + 1), attempts + 1)
            continue
        assert isinstance(then, GiveUp) and then.code == "some_error"
        if failure is not Failure.UNWRITABLE:
            assert then == GiveUp("some_error"), "nothing for the machine to decide"
        elif surface in ("dm:U1", "over:U1"):  # the night message, the result
            assert then.report == m.DmFailed("U1", "some_error") and not then.whole_channel
        elif surface.startswith("tell:"):
            assert then == GiveUp("some_error")
        else:
            assert then.report == m.ChannelUnwritable("some_error") and then.whole_channel


def test_the_backoff_grows_to_a_cap() -> None:
    waits = [backoff(n) for n in range(1, 12)]
    assert waits == sorted(waits) and waits[0] == 1.0 and waits[-1] == 60.0
