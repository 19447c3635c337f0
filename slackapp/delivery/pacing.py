"""Pacing the Web API calls ahead of Slack's rate limits, instead of only waiting out a 429.

Slack allows ``chat.postMessage`` about one message a second per channel, with short bursts,
and ``chat.update`` is a Tier 3 method: 50 or more a minute per workspace, sporadic bursts
welcome. Each limit is a token bucket here: ``burst`` calls may go at once, then one every
``1 / rate`` seconds. A call takes the next free moment of its bucket, so calls queued behind
one another are spread out rather than sent together and refused together.

A call may also ask for a turn only while part of the burst would stay free after it
(``Pacer.update_sparing``): when the budget is short it takes none, so the turns go to the
calls that may wait no longer, and the message, coalesced meanwhile to its newest version,
asks again once one would be free (``slackapp.delivery.deliverer`` says which message is which).

A channel's posts are nearly all its open game's, and one process at a time delivers a game
(its lease), so their buckets live in the memory of the process delivering them (``Buckets``):
a post costs no statement. Two processes post to one channel at once only briefly (a finished
game's last words beside the next lobby, a channel notice), when together they may go past
the pace and Slack's ``Retry-After`` paces the rest. A
workspace's ``chat.update`` budget is shared by all its tables, which any process may be
delivering, so those buckets live in the database when one is given (``SharedBuckets``, one
row per bucket, a statement for the turns taken), and every process paces against the same
budget; a redraw refused a turn asks the database again only once one may be free. Calls that
ask for a workspace's turn while a statement for it is under way are given theirs together by
the next one: a storm of redraws costs a statement per gap between statements, not per call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy import Engine, text

POSTS_PER_SECOND = 1.0
POST_BURST = 3
UPDATES_PER_MINUTE = 50.0
UPDATE_BURST = 50


@dataclass(frozen=True)
class Limit:
    per_second: float
    burst: int

    @property
    def interval(self) -> float:
        """Seconds between two turns."""
        return 1.0 / self.per_second

    @property
    def ahead(self) -> float:
        """How far ahead of a bucket's free moment a burst may run."""
        return (self.burst - 1) * self.interval


@dataclass(frozen=True)
class Turn:
    """``taken``: the call has its turn in ``wait`` seconds. Not taken: none was free soon
    enough; ask again in about ``wait`` seconds, when one would be."""

    wait: float
    taken: bool = True


class Bucketing(Protocol):
    def reserve(self, key: str, within: float | None = None) -> Turn: ...


class Buckets:
    """Token buckets by key, all of one limit, in this process's memory; safe to share
    between threads."""

    def __init__(self, limit: Limit, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self._lock = threading.Lock()
        self._free_from: dict[str, float] = {}
        """Per key, the moment from which a full burst would be free again."""

    def reserve(self, key: str, within: float | None = None) -> Turn:
        """Take the next free moment of ``key``'s bucket (only if it is ``within`` seconds
        from now, when given; a negative ``within`` asks for a turn only while that many
        seconds' worth of the burst would still be free after it)."""
        interval = self.limit.interval
        with self._lock:
            now = self.clock()
            full_from = self._free_from.get(key, now)
            earliest = full_from - self.limit.ahead  # a burst may run ahead
            at = max(now, earliest)
            if within is not None and earliest - now > within:  # below 0: tokens to spare
                return Turn(earliest - now - within, taken=False)
            self._free_from[key] = max(full_from, now) + interval
            if len(self._free_from) > 10_000:  # forget the buckets that are full again
                self._free_from = {k: v for k, v in self._free_from.items() if v > now}
            return Turn(at - now if at - now > 1e-6 else 0.0)  # not a float's rounding


RESERVE = text(
    """
    INSERT INTO pacing_buckets AS b (key, free_from, taken)
    VALUES (:key, extract(epoch FROM statement_timestamp())::float8 + :interval, true)
    ON CONFLICT (key) DO UPDATE SET
        free_from = CASE WHEN b.free_from - :ahead <= excluded.free_from - :interval + :within
                         THEN greatest(b.free_from + :interval, excluded.free_from)
                         ELSE b.free_from END,
        taken = b.free_from - :ahead <= excluded.free_from - :interval + :within
    RETURNING free_from, taken, extract(epoch FROM statement_timestamp())::float8 AS now
    """
)
"""One bucket's turn, as ``Buckets.reserve`` takes it, on the database's clock (the one clock
every process shares) and under the row's lock (so two processes never take the same turn).
The row it would insert carries the statement's own timestamp (plus an interval), the one
moment it decides and answers by: after a wait for
the lock it is a little old, which only makes the turn later, never earlier. Given ``n``
intervals as ``:interval`` and no bound ``:within``, it takes the next ``n`` turns, as ``n``
statements in a row would."""


STRIPES = 64
"""Where a process's calls wait for a bucket's turns, a key's place chosen by its hash: few
enough to keep, enough that two busy workspaces rarely share one."""


@dataclass(eq=False)
class _Asked:
    """One call's request for a turn, until a statement takes it."""

    at: float = 0.0
    """When it asked, on the buckets' clock."""
    turn: Turn | None = None
    failed: Exception | None = None
    """Why the statement that was to take its turn failed."""


@dataclass
class _Stripe:
    """The calls waiting for some keys' turns, and the keys whose statement is under way."""

    changed: threading.Condition = field(default_factory=threading.Condition)
    asking: dict[str, list[_Asked]] = field(default_factory=dict)
    taking: set[str] = field(default_factory=set)


class SharedBuckets:
    """Token buckets by key, all of one limit, in the database: every process that paces
    against the same ``kind`` shares them.

    A bucket's next free moment only ever moves later (every process's turns push it on; time
    alone never brings it back), so what one answer said of it holds until then: a call that
    may only take a turn soon (``within``) is refused from memory, without a statement, while
    the last answer says none is free soon enough. In a storm of redraws put off for the
    budget, that is most of them."""

    def __init__(
        self,
        engine: Engine,
        kind: str,
        limit: Limit,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # A statement for the turns it takes, atomic on its own: no BEGIN or COMMIT besides.
        self.engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        self.kind = kind
        self.limit = limit
        self.clock = clock
        self._lock = threading.Lock()
        self._earliest: dict[str, float] = {}
        """Per key, on ``clock``: no turn is free before this, as the database last said."""
        self._stripes = [_Stripe() for _ in range(STRIPES)]

    def reserve(self, key: str, within: float | None = None) -> Turn:
        if within is None:
            return self._take_together(key)
        interval, ahead = self.limit.interval, self.limit.ahead
        asked = self.clock()
        with self._lock:
            earliest = self._earliest.get(key)
        if earliest is not None and earliest - asked > within:
            return Turn(earliest - asked - within, taken=False)
        free_from, taken, now = self._run(key, interval, within)
        self._learn(key, asked + free_from - ahead - now)  # asked: before the database's now
        if not taken:  # the bucket as it was: a turn is free once its backlog is within a burst
            return Turn(max(0.0, free_from - ahead - now - within), taken=False)
        # free_from moved one interval past the turn taken, which a burst may run ahead of.
        at = max(now, free_from - interval - ahead)
        return Turn(at - now if at - now > 1e-6 else 0.0)

    def _take_together(self, key: str) -> Turn:
        """A turn however far off, for a call that may wait. While one statement takes the
        key's turns, the calls that ask meanwhile wait, holding no lock; the first of them to
        wake once it is over takes all of theirs in the next, in the order they asked. Should
        a statement fail, every call it was for fails with it, at once."""
        asked = _Asked()
        stripe = self._stripes[hash(key) % STRIPES]
        with stripe.changed:
            asked.at = self.clock()
            stripe.asking.setdefault(key, []).append(asked)
            while asked.turn is None:
                if asked.failed is not None:
                    raise asked.failed
                if key in stripe.taking:
                    stripe.changed.wait()
                    continue
                together = stripe.asking.pop(key)
                stripe.taking.add(key)
                try:
                    stripe.changed.release()  # others ask meanwhile
                    try:
                        turns = self._take(key, together)
                    finally:
                        stripe.changed.acquire()
                    for each, turn in zip(together, turns, strict=True):
                        each.turn = turn
                except Exception as error:
                    for each in together:
                        each.failed = error
                except BaseException:  # interrupted: the others ask again, first in line
                    if others := [each for each in together if each is not asked]:
                        stripe.asking[key] = others + stripe.asking.get(key, [])
                    raise
                finally:
                    stripe.taking.discard(key)
                    stripe.changed.notify_all()
        return asked.turn

    def _take(self, key: str, together: list[_Asked]) -> list[Turn]:
        """One turn each, the next ones free, in one statement: the bucket moves on by as
        many intervals as it would for the calls one after another."""
        interval, ahead = self.limit.interval, self.limit.ahead
        count = len(together)
        free_from, _, now = self._run(key, count * interval, None)
        self._learn(key, min(each.at for each in together) + free_from - ahead - now)
        turns = []
        for index in range(count):
            at = max(now, free_from - (count - index) * interval - ahead)
            turns.append(Turn(at - now if at - now > 1e-6 else 0.0))
        return turns

    def _run(self, key: str, interval: float, within: float | None) -> tuple[float, bool, float]:
        """``RESERVE``: the bucket's new free moment, whether a turn was taken, and the
        database's clock when it was."""
        with self.engine.connect() as connection:
            free_from, taken, now = connection.execute(
                RESERVE,
                {
                    "key": f"{self.kind}:{key}"[:200],
                    "interval": interval,
                    "ahead": self.limit.ahead,
                    "within": 1e9 if within is None else within,
                },
            ).one()
        return free_from, taken, now

    def _learn(self, key: str, earliest: float) -> None:
        with self._lock:
            if len(self._earliest) > 10_000:  # forget the buckets that are free again
                now = self.clock()
                self._earliest = {k: at for k, at in self._earliest.items() if at > now}
            self._earliest[key] = max(earliest, self._earliest.get(key, earliest))


class Pacer:
    """The deliverer's buckets: posts per channel, in this process's memory; updates per
    workspace, in memory too unless ``engine`` is given (then in that database, shared by
    every process)."""

    def __init__(
        self,
        posts: Limit = Limit(POSTS_PER_SECOND, POST_BURST),
        updates: Limit = Limit(UPDATES_PER_MINUTE / 60, UPDATE_BURST),
        clock: Callable[[], float] = time.monotonic,
        engine: Engine | None = None,
    ) -> None:
        self.posts: Bucketing
        self.updates: Bucketing
        self.update_limit = updates
        self.posts = Buckets(posts, clock)
        if engine is None:
            self.updates = Buckets(updates, clock)
        else:
            self.updates = SharedBuckets(
                engine, "update", updates
            )  # the real clock, as the database's

    def post(self, channel: str) -> float:
        return self.posts.reserve(channel).wait

    def update(self, team_id: str) -> float:
        return self.updates.reserve(team_id).wait

    def update_sparing(self, team_id: str, spare: int) -> Turn:
        """A turn for a redraw that may wait longest: taken only now, and only while ``spare``
        more calls of the burst (all but one of it at most) stay free for the others."""
        limit = self.update_limit
        kept = min(spare, limit.burst - 1)
        return self.updates.reserve(team_id, -kept / limit.per_second)
