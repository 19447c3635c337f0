"""The token buckets on their own clocks: the app's (its pacing) and the stand-in's (Slack's
limits, enforced)."""

from __future__ import annotations

from slackapp.delivery.pacing import Buckets, Limit, Pacer, Turn
from slackapp.fakeslack.limits import Limit as SlackLimit
from slackapp.fakeslack.limits import Limiter, RateLimits


def test_a_turn_asked_within_a_bound_is_taken_only_when_that_near() -> None:
    clock = [0.0]
    buckets = Buckets(Limit(1.0, 2), clock=lambda: clock[0])
    assert buckets.reserve("T1") == Turn(0.0)
    assert buckets.reserve("T1") == Turn(0.0), "a burst of two"
    assert buckets.reserve("T1") == Turn(1.0)  # taken ahead, as a person's own view takes it
    refused = buckets.reserve("T1", within=1.0)
    assert refused == Turn(1.0, taken=False), "none: ask again when one is a second off"
    assert buckets.reserve("T1") == Turn(2.0), "the next turn is still free"
    clock[0] = 2.5
    assert buckets.reserve("T1", within=1.0) == Turn(0.5), "near again: taken"


def test_the_stand_in_refuses_beyond_its_limits_with_whole_seconds_to_wait() -> None:
    clock = [0.0]
    limits = RateLimits(updates=SlackLimit(0.5, 2), posts=SlackLimit(1.0, 1))
    limiter = Limiter(limits, clock=lambda: clock[0])
    update = {"channel": "C1", "ts": "1.0"}
    assert [limiter.retry_after("chat.update", update) for _ in range(3)] == [0, 0, 2]
    assert limiter.retry_after("chat.update", {"channel": "C2", "ts": "1.0"}) == 2, (
        "updates are counted per workspace, whatever the channel"
    )
    assert limiter.retry_after("chat.postMessage", {"channel": "C1"}) == 0
    assert limiter.retry_after("chat.postMessage", {"channel": "C1"}) == 1
    assert limiter.retry_after("chat.postMessage", {"channel": "C2"}) == 0, "per channel"
    assert limiter.retry_after("views.publish", {}) == 0, "other methods are not limited here"
    clock[0] = 2.0
    assert limiter.retry_after("chat.update", update) == 0, "a token free again after 2 s"
    assert limiter.retry_after("chat.update", update) == 2, "a refused call took no token"
    assert limiter.refused == {"chat.update": 3, "chat.postMessage": 1}


def test_a_redraw_that_may_wait_longest_leaves_part_of_the_burst_to_the_others() -> None:
    clock = [0.0]
    pacer = Pacer(updates=Limit(1.0, 4), clock=lambda: clock[0])
    sparing = [pacer.update_sparing("T1", spare=2) for _ in range(3)]
    assert [turn.taken for turn in sparing] == [True, True, False], "two of the burst are left"
    assert sparing[2].wait == 1.0, "until a call's worth more is free"
    assert [pacer.update("T1") for _ in range(2)] == [0.0, 0.0], "the others' share, at once"
    clock[0] = 10.0
    greedy = [pacer.update_sparing("T1", spare=20) for _ in range(2)]
    assert [turn.taken for turn in greedy] == [True, False], "at most all but one is kept"
