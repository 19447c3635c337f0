"""Slack's rate limits, as the stand-in enforces them: beyond them a call is answered HTTP 429
``ratelimited`` with ``Retry-After`` (whole seconds), and changes nothing.

Slack documents ``chat.update`` as Tier 3 (50+ a minute per app per workspace, sporadic bursts
welcome) and ``chat.postMessage`` as about one message a second per channel, short bursts
allowed. Each limit is a token bucket: ``burst`` calls may go at once, then one every
``1 / per_second`` seconds; a refused call takes no token. ``response_url`` answers, views and
the other methods are not limited here, as Tier 3's ``chat.update`` budget does not count them.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from slackapp.fakeslack.models import JSON


@dataclass(frozen=True)
class Limit:
    per_second: float
    burst: int


@dataclass(frozen=True)
class RateLimits:
    """What the stand-in allows per workspace (``chat.update``) and per channel (posts)."""

    updates: Limit | None = Limit(50 / 60, 50)
    posts: Limit | None = Limit(1.0, 5)

    @classmethod
    def small(cls, updates_per_minute: float, update_burst: int = 1) -> RateLimits:
        """A tiny ``chat.update`` budget, for tests that must run out of it quickly."""
        return cls(updates=Limit(updates_per_minute / 60, update_burst))


SLACK = RateLimits()
"""Slack's own limits, the stand-in's default."""
UNLIMITED = RateLimits(updates=None, posts=None)
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
            return 0
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
