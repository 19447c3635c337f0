"""Slack's rate limits, as the stand-in enforces them: beyond them a call is answered HTTP 429
``ratelimited`` with ``Retry-After`` (whole seconds), and changes nothing.

Slack limits each method per app per workspace by its tier: Tier 1 is 1 or more calls a minute,
Tier 2 20+, Tier 3 50+, Tier 4 100+ (bursts welcome); ``chat.postMessage`` is special, about one
message a second per channel, short bursts allowed. Each method the app calls is limited here at
its tier's floor (:data:`METHOD_TIERS`), each method its own budget. Each limit is a token
bucket: ``burst`` calls (a minute's, for a tier) may go at once, then one every
``1 / per_second`` seconds; a refused call takes no token. ``response_url`` answers are not Web
API calls and are not limited; ``auth.test`` is of Slack's special tier, generous, and is not
limited here either.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from slackapp.fakeslack.models import JSON


@dataclass(frozen=True)
class Limit:
    per_second: float
    burst: int


def tier(calls_a_minute: int) -> Limit:
    """A tier's floor: ``calls_a_minute`` a minute, a minute's calls at once."""
    return Limit(calls_a_minute / 60, calls_a_minute)


TIERS = {1: tier(1), 2: tier(20), 3: tier(50), 4: tier(100)}
METHOD_TIERS = {
    "conversations.open": 3,
    "chat.update": 3,
    "chat.delete": 3,
    "users.info": 4,
    "users.list": 2,
    "views.open": 4,
    "views.publish": 4,
}
"""The tier of each method the app calls, as Slack's method pages give it (``chat.postMessage``
and ``auth.test`` are of the special tier)."""
SLACK_METHODS: Mapping[str, Limit] = MappingProxyType(
    {method: TIERS[number] for method, number in METHOD_TIERS.items() if method != "chat.update"}
)


@dataclass(frozen=True)
class RateLimits:
    """What the stand-in allows per workspace (``chat.update``, and each of ``methods``) and
    per channel (posts)."""

    updates: Limit | None = TIERS[3]
    posts: Limit | None = Limit(1.0, 5)
    methods: Mapping[str, Limit] = field(default_factory=lambda: SLACK_METHODS)
    """Every other method limited per workspace: its limit (Slack's tiers by default)."""

    @classmethod
    def small(cls, updates_per_minute: float, update_burst: int = 1) -> RateLimits:
        """A tiny ``chat.update`` budget, for tests that must run out of it quickly."""
        return cls(updates=Limit(updates_per_minute / 60, update_burst))


SLACK = RateLimits()
"""Slack's own limits, the stand-in's default."""
UNLIMITED = RateLimits(updates=None, posts=None, methods=MappingProxyType({}))
"""No limit: for runs that play thousands of games in one workspace to measure something else."""


class Bucket:
    def __init__(self, limit: Limit, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.clock = clock
        self.tokens = float(limit.burst)
        self.at = clock()

    def take(self) -> float:
        """0 when a token was taken; else the seconds until one is free (none taken)."""
        now = self.clock()
        self.tokens = min(self.limit.burst, self.tokens + (now - self.at) * self.limit.per_second)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.limit.per_second


class Limiter:
    """The buckets of one workspace; ``refusal`` says whether a call is over its limit."""

    def __init__(self, limits: RateLimits = SLACK, clock: Callable[[], float] = time.monotonic):
        self._lock = threading.Lock()
        self._clock = clock
        self._limits = limits
        self._buckets: dict[tuple[str, str], Bucket] = {}
        self.refused: dict[str, int] = {}
        """Calls answered 429 so far, by method."""

    @property
    def limits(self) -> RateLimits:
        return self._limits

    @limits.setter
    def limits(self, limits: RateLimits) -> None:
        """New limits, with every bucket full again."""
        with self._lock:
            self._limits = limits
            self._buckets.clear()

    def retry_after(self, method: str, params: JSON) -> int:
        """0 when the call may go (it takes its token); else Slack's Retry-After for it, in
        whole seconds."""
        if method == "chat.update":
            limit, key = self._limits.updates, ""
        elif method == "chat.postMessage":
            limit, key = self._limits.posts, str(params.get("channel") or "")
        else:
            limit, key = self._limits.methods.get(method), ""
        if limit is None:
            return 0
        with self._lock:
            bucket = self._buckets.get((method, key))
            if bucket is None:
                bucket = self._buckets[(method, key)] = Bucket(limit, self._clock)
            wait = bucket.take()
            if wait <= 0:
                return 0
            self.refused[method] = self.refused.get(method, 0) + 1
        return max(1, math.ceil(wait))
