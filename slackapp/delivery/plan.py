"""What to send next: a pure function of a stream's undelivered outbox rows.

Plain data in (each message's undelivered versions, what Slack shows of it, which messages are
being sent just now, the time), plain decisions out. No Slack, no database, no clock but the
one passed in: the deliverer reads the rows, asks here, and carries the decisions out.

The rules, per message (a stream's ``surface``):
- only its newest undelivered version is ever sent; the older ones are done with it;
- a version no newer than the one Slack shows is never sent (it is marked done instead), so
  nobody is ever shown something older than what they saw;
- a message being sent is not sent again alongside itself: its newer version waits for the
  call to land (then the message's ``ts`` is known, and the next version is an update);
- a message whose newest version waits (for a retry, or for its turn at Slack's limit) waits
  with it; a version written after the message was put off asks again at once, as its own
  (a phase's last word must not wait for the turn a count did not get);
- a message a call of unknown outcome may still redraw (``Shown.unsure_until``) is not known
  to show anything: a newer version goes out as usual, and once that call can no longer land,
  the newest version is sent again, so that nothing older is ever the last thing it shows.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class Entry:
    """An undelivered version of a message, as read from the outbox."""

    stream: int
    surface: str
    version: int
    channel: str | None
    """Where it goes; None for a private word to ``user_id``, whose DM is opened first."""
    user_id: str | None
    text: str
    blocks: list[dict[str, Any]] | str | None
    """As rendered, or their JSON text as read: decoded only for the version sent
    (``sent_blocks``), since most versions read are done with it unsent."""
    due_at: datetime
    attempts: int
    response_url: str | None = None
    """The click this version answers, if it does: where it can be redrawn in place."""
    settles: bool = False
    """The message's last word: its phase is over (``OutboxEntry.settles``)."""
    response_ts: str | None = None
    """The copy the click was on: its ``response_url`` redraws that copy only."""

    @property
    def sent_blocks(self) -> list[dict[str, Any]] | None:
        return json.loads(self.blocks) if isinstance(self.blocks, str) else self.blocks


@dataclass(frozen=True, slots=True)
class Shown:
    """Where a message is in Slack, and the version it shows."""

    channel: str
    ts: str
    version: int
    unsure_until: datetime | None = None
    """A redraw of unknown outcome may still land until then (see ``SlackMessage``)."""


@dataclass(frozen=True)
class Pending:
    """One message's undelivered versions, oldest first, and what Slack shows of it."""

    surface: str
    entries: tuple[Entry, ...]
    shown: Shown | None

    @property
    def newest(self) -> Entry:
        return self.entries[-1]

    @property
    def attempts(self) -> int:
        return max(entry.attempts for entry in self.entries)

    def answer_at(self, ts: str) -> str | None:
        """The newest ``response_url`` among the undelivered versions of a click on the copy
        ``ts`` (a newer version may come from a step that was not a click on it; a click on
        another copy cannot redraw this one)."""
        clicked = (e.response_url for e in reversed(self.entries) if e.response_ts == ts)
        return next((url for url in clicked if url), None)


@dataclass(frozen=True, slots=True)
class Post:
    """The message's first appearance: ``chat.postMessage`` (after ``conversations.open`` when
    ``entry.channel`` is None)."""

    pending: Pending

    @property
    def entry(self) -> Entry:
        return self.pending.newest


@dataclass(frozen=True, slots=True)
class Update:
    """A redraw of the message Slack shows: ``chat.update`` at ``shown``."""

    pending: Pending
    shown: Shown

    @property
    def entry(self) -> Entry:
        return self.pending.newest


@dataclass(frozen=True, slots=True)
class AlreadyShown:
    """Slack shows this version or a newer one already: nothing to send, the versions up to
    ``version`` are done."""

    surface: str
    version: int


@dataclass(frozen=True, slots=True)
class InFlight:
    """The message is being sent just now: its newer version waits for that call to land."""

    surface: str


@dataclass(frozen=True, slots=True)
class NotYet:
    """A version of the message waits (a retry, its turn at Slack's limit) until ``due_at``."""

    surface: str
    due_at: datetime


Decision = Post | Update | AlreadyShown | InFlight | NotYet
Send = Post | Update


def next_for(pending: Pending, sending: Collection[str], now: datetime) -> Decision:
    """What to do with one message now."""
    newest, shown = pending.newest, pending.shown
    if pending.surface in sending:
        return InFlight(pending.surface)
    if shown is not None and shown.version >= newest.version:
        if shown.unsure_until is None:
            return AlreadyShown(pending.surface, newest.version)
        settled_at = max(newest.due_at, shown.unsure_until)
        if settled_at > now:
            return NotYet(pending.surface, settled_at)
        return Update(pending, shown)  # again, now that nothing older can land after it
    if newest.due_at > now:
        return NotYet(pending.surface, newest.due_at)
    return Post(pending) if shown is None else Update(pending, shown)


def next_sends(
    messages: Iterable[Pending], sending: Collection[str], now: datetime
) -> list[Decision]:
    """Each message's decision, in the order given (one per message)."""
    return [next_for(pending, sending, now) for pending in messages]


def pending_of(entries: Iterable[Entry], shown: dict[str, Shown]) -> list[Pending]:
    """Rows read from the outbox (any order, several messages) as one ``Pending`` per
    message, its versions oldest first, in the order each message first appears."""
    by_surface: dict[str, list[Entry]] = {}
    for entry in entries:
        by_surface.setdefault(entry.surface, []).append(entry)
    return [
        Pending(surface, tuple(sorted(versions, key=lambda e: e.version)), shown.get(surface))
        for surface, versions in by_surface.items()
    ]
