"""Turns at Slack's per-method rate limits for the calls made while a step runs or a name is
learned (``conversations.open`` at *Start*, ``users.info``), in this process.

Slack limits each Web API method per app per workspace by its tier (Tier 3: 50 or more a
minute, Tier 4: 100 or more, bursts welcome). A lunchtime of tables that *Start* together opens
a private message with every person at once: beyond the tier Slack answers 429, and a call
retried on every 429 waits, tries again and is refused again. So a call here first takes a
turn, per workspace and method: a token bucket of a minute's calls (less ``HEADROOM``) that
refills at the tier's pace; a call waits for its turn (a *Start* deals later rather than
failing). Several processes each keep their own turns; a ``conversations.open`` refused all
the same is tried once more, after Slack's ``Retry-After`` (slack_sdk's
``RateLimitErrorRetryHandler``), never in a loop (a ``users.info`` is not: ``slackapp.names``).

What the deliverer sends (``chat.*``) is paced by the deliverer itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)

PER_MINUTE = {"conversations.open": 50, "users.info": 100}
"""Slack's tier of each method paced here: Tier 3 and Tier 4, calls a minute per workspace."""
MARGIN = 1.01
"""Turns a hundredth further apart than the tier's: Slack's clock is not this process's."""
HEADROOM = 2
"""Calls of the tier's burst left unused: a call reaches Slack a little after its turn, and the
first of a burst may reach it later than the last (a connection to open, a busy machine)."""
LONGEST_WAIT_SECONDS = 600.0
"""A turn further off than this is not waited for: the call goes and Slack's answer stands."""


class Turns:
    """Token buckets per (workspace, method), in this process's memory; safe to share between
    threads. A workspace is known by its bot token (one per workspace), which is kept only
    here and never shown."""

    def __init__(
        self,
        per_minute: dict[str, int] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        self.per_minute = dict(PER_MINUTE if per_minute is None else per_minute)
        self.clock = clock
        self.sleep = sleep
        self._lock = threading.Lock()
        self._full_from: dict[tuple[str, str], float] = {}
        """Per bucket, the moment from which a full minute's burst would be free again."""

    def reserve(self, method: str, workspace: str) -> float:
        """Take the next free turn of the method in the workspace; how many seconds from now
        it is (0: at once). An unpaced method's turn is always now."""
        calls = self.per_minute.get(method)
        if not calls:
            return 0.0
        interval = 60.0 / calls * MARGIN
        with self._lock:
            now = self.clock()
            key = (workspace, method)
            full_from = max(self._full_from.get(key, now), now)
            wait = full_from + interval - now - (calls - HEADROOM) * interval
            wait = 0.0 if wait < 1e-6 else wait  # what a sum of intervals rounds off
            if wait > LONGEST_WAIT_SECONDS:
                return wait  # not taken: nobody waits that long
            self._full_from[key] = full_from + interval
            if len(self._full_from) > 10_000:  # forget the buckets that are full again
                self._full_from = {k: v for k, v in self._full_from.items() if v > now}
            return wait

    def wait_for(self, method: str, workspace: str) -> float:
        """Wait for a turn (up to ``LONGEST_WAIT_SECONDS``); the seconds waited."""
        wait = min(self.reserve(method, workspace), LONGEST_WAIT_SECONDS)
        if wait > 0:
            self.sleep(wait)
        return wait


def retried_once(client: WebClient) -> WebClient:
    """A client for the same workspace whose call, refused for Slack's rate limit, is tried
    once more after ``Retry-After`` (and once more after a dropped connection), no more."""
    return WebClient(
        token=client.token,
        base_url=client.base_url,
        timeout=client.timeout,
        retry_handlers=[
            ConnectionErrorRetryHandler(),
            RateLimitErrorRetryHandler(max_retry_count=1),
        ],
    )


class OpensDirectMessages(Protocol):
    """What *Start* asks of Slack (a ``WebClient``): a person's private message channel."""

    def conversations_open(self, *, users: str) -> Any: ...


def open_direct_message(turns: Turns, client: OpensDirectMessages, user_id: str) -> Any:
    """``conversations.open`` with the person, at the workspace's next turn."""
    if isinstance(client, WebClient):
        turns.wait_for("conversations.open", client.token or "")
        return retried_once(client).conversations_open(users=user_id)
    return client.conversations_open(users=user_id)
