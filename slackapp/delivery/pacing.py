"""Pacing the Web API calls ahead of Slack's rate limits, instead of only waiting out a 429.

Slack allows ``chat.postMessage`` about one message a second per channel, with short bursts,
and ``chat.update`` is a Tier 3 method: 50 or more a minute per workspace, sporadic bursts
welcome. Each limit is a token bucket here: ``burst`` calls may go at once, then one every
``1 / rate`` seconds. A call takes the next free moment of its bucket, so calls queued behind
one another are spread out rather than sent together and refused together.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

POSTS_PER_SECOND = 1.0
POST_BURST = 3
UPDATES_PER_MINUTE = 50.0
UPDATE_BURST = 50


@dataclass(frozen=True)
class Limit:
    per_second: float
    burst: int


class Buckets:
    """Token buckets by key, all of one limit; safe to share between threads."""

    def __init__(self, limit: Limit, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self._lock = threading.Lock()
        self._free_from: dict[str, float] = {}
        """Per key, the moment from which a full burst would be free again."""

    def reserve(self, key: str) -> float:
        """Take the next free moment of ``key``'s bucket; seconds from now until then."""
        interval = 1.0 / self.limit.per_second
        with self._lock:
            now = self.clock()
            full_from = self._free_from.get(key, now)
            earliest = full_from - (self.limit.burst - 1) * interval  # a burst may run ahead
            at = max(now, earliest)
            self._free_from[key] = max(full_from, now) + interval
            if len(self._free_from) > 10_000:  # forget the buckets that are full again
                self._free_from = {k: v for k, v in self._free_from.items() if v > now}
            return at - now if at - now > 1e-6 else 0.0  # not a float's rounding


class Pacer:
    """The deliverer's buckets: posts per channel, updates per workspace."""

    def __init__(
        self,
        posts: Limit = Limit(POSTS_PER_SECOND, POST_BURST),
        updates: Limit = Limit(UPDATES_PER_MINUTE / 60, UPDATE_BURST),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.posts = Buckets(posts, clock)
        self.updates = Buckets(updates, clock)

    def post(self, channel: str) -> float:
        return self.posts.reserve(channel)

    def update(self, team_id: str) -> float:
        return self.updates.reserve(team_id)
