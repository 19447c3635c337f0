"""The app's own turns at Slack's tiers (``slackapp.turns``), on the test's clock, against the
stand-in's limits on the same clock: a call that waits for its turn is never refused."""

from __future__ import annotations

import pytest

from slackapp.fakeslack import SLACK
from slackapp.fakeslack.limits import Limiter
from slackapp.turns import HEADROOM, PER_MINUTE, Turns


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.mark.parametrize("method", sorted(PER_MINUTE))
def test_calls_that_wait_for_their_turns_stay_within_the_stand_ins_tier(method: str) -> None:
    clock = Clock()
    turns = Turns(clock=clock, sleep=clock.sleep)
    slack = Limiter(SLACK, clock=clock)
    calls = PER_MINUTE[method]
    waited = [turns.wait_for(method, "xoxb-one") for _ in range(3 * calls)]
    burst = calls - HEADROOM
    assert waited[:burst] == [0.0] * burst, "a minute's calls at once, less a little headroom"
    assert all(wait == pytest.approx(60 / calls, rel=0.02) for wait in waited[burst:])
    assert clock.now == pytest.approx((2 * calls + HEADROOM) * 60 / calls, rel=0.02), (
        "then the pace"
    )
    assert turns.wait_for(method, "xoxb-another") == 0, "each workspace its own turns"

    clock.now += 60  # every bucket full again: the stand-in is asked at each turn
    for _ in range(3 * calls):
        turns.wait_for(method, "xoxb-third")
        assert slack.retry_after(method, {}) == 0
    assert slack.refused == {}


def test_a_method_slack_does_not_limit_here_never_waits() -> None:
    clock = Clock()
    turns = Turns(clock=clock, sleep=clock.sleep)
    assert [turns.wait_for("chat.postEphemeral", "xoxb-one") for _ in range(500)] == [0.0] * 500
