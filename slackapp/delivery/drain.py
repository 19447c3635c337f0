"""One drain of a batch of outbox streams (a game's messages, or a channel's notice: see
``OutboxEntry``), as data: a frozen state and an event in, the next state and the actions
out, as ``game/machine.py`` is for a game. No threads, no clock, no database: the
deliverer (``delivery/deliverer.py``) carries the actions out and turns what happens into the
next event.

A drain reads its streams' undelivered messages, asks ``plan.next_sends`` what each needs,
sends every ready message of every stream side by side (every stream's posts before any
redraw, so that what people wait to appear is not queued behind what is only being brought
up to date), and:
- never sends a message while it is in flight already: a newer version of it is *held back*,
  and its stream read again as soon as that call's landing is recorded;
- posts to one conversation one at a time, in the order the steps wrote them: a post waits
  (held back as above, its stream keeping its lease) while another to the same channel or DM is
  in flight, so they appear in that order, and a crash while one is out never posts the one
  before it again (its ``ts`` is recorded before the next is sent); a post put off (a retry,
  its turn at Slack's limit) puts off the posts written to its stream after it, to the same
  place, until then (``WaitFor``). The order holds within a drain, between posts addressed alike (a
  channel, or a person's DM by their id);
- records what Slack took of every call that ended by the time it woke, and lets go of every
  stream left with nothing in flight, in one statement (``Record``), before it reads anything
  again, so a read never misses a message's ``ts``;
- reads a stream again whenever a step gives it something new (``Woke.kicked``), and one that
  got something due as it was let go;
- is over when nothing is left to read, send, record or let go.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from slackapp.delivery import plan
from slackapp.delivery.landings import Landing
from slackapp.delivery.slack import WorkspaceId

Message = tuple[int, str]
"""A stream's message: (stream, surface)."""


def conversation(entry: plan.Entry) -> str:
    """Where a post appears: its channel, or the DM of the person it is for."""
    return entry.channel if entry.channel is not None else f"@{entry.user_id}"


@dataclass(frozen=True)
class ToShow:
    """One stream's workspace and its undelivered messages."""

    workspace: WorkspaceId
    pending: list[plan.Pending] = field(default_factory=list)


# -- events ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Read:
    """What ``ReadStreams`` found: each stream read (those with nothing to show too), at ``now``."""

    found: Mapping[int, ToShow]
    now: datetime


@dataclass(frozen=True)
class Woke:
    """Calls that ended (with what Slack took, if it took anything: None when it was put off,
    failed and was handled, or given up), and streams steps gave something new."""

    landed: Mapping[Message, Landing | None] = field(default_factory=dict)
    kicked: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Recorded:
    """``Record`` is done; of the streams it let go, those with something due as they went."""

    still_due: frozenset[int]


Event = Read | Woke | Recorded


# -- actions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadStreams:
    """Read the streams: ``held`` those whose leases this drain has (they may be read without
    claiming them, while the lease is still this process's), ``claimed`` the rest (claimed and
    read in one transaction). A stream another process holds is left out of the ``Read``."""

    held: tuple[int, ...]
    claimed: tuple[int, ...]


@dataclass(frozen=True)
class Send:
    """Carry out one post or update of a stream's message; the drain wakes when it has ended."""

    stream: int
    workspace: WorkspaceId
    send: plan.Send

    @property
    def message(self) -> Message:
        return self.stream, self.send.pending.surface


@dataclass(frozen=True)
class MarkShown:
    """Slack shows this version or a newer one already: the versions up to it are done."""

    stream: int
    surface: str
    version: int


@dataclass(frozen=True)
class WaitFor:
    """A post written to its stream after another to the same conversation, which waits (a
    retry, its turn): put off until ``until`` too, so it does not appear above it."""

    stream: int
    surface: str
    version: int
    attempts: int
    until: datetime


@dataclass(frozen=True)
class Record:
    """In one statement: what Slack took (``landings``), and the leases of ``release`` let
    go; ``Recorded`` when done."""

    landings: tuple[Landing, ...]
    release: tuple[int, ...]


Action = ReadStreams | Send | MarkShown | WaitFor | Record


# -- the state ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Drain:
    """Where one drain of ``streams`` stands."""

    streams: frozenset[int]
    to_read: frozenset[int] = frozenset()
    leased: frozenset[int] = frozenset()
    """The streams whose leases this drain has (a step took them, or a read found them) and
    has not let go: read again without claiming them (the heartbeat renews them meanwhile)."""
    in_flight: frozenset[Message] = frozenset()
    posting: frozenset[tuple[str, Message]] = frozenset()
    """The posts in flight, by conversation: one at a time in each."""
    held_for: frozenset[tuple[int, Message]] = frozenset()
    """Streams with a message held back when read, each with the call in flight it waits for
    (a newer version of that very message, or a post to the same conversation)."""
    to_record: tuple[Landing, ...] = ()
    to_release: frozenset[int] = frozenset()
    waiting_for: type[Read] | type[Recorded] | None = None
    """A read or a record under way: no other begins until it is done."""

    @property
    def over(self) -> bool:
        """Nothing left to read, send, record or let go."""
        return not (
            self.to_read or self.to_release or self.to_record or self.in_flight or self.waiting_for
        )

    def streams_in_flight(self) -> frozenset[int]:
        return frozenset(stream for stream, _ in self.in_flight)

    @property
    def held_back(self) -> frozenset[int]:
        """The streams with a message held back, to read again once a call they wait for ends."""
        return frozenset(stream for stream, _ in self.held_for)


def begin(
    streams: frozenset[int], leased: frozenset[int] = frozenset()
) -> tuple[Drain, list[Action]]:
    """A drain of ``streams``, ``leased`` those whose leases a step has just taken."""
    return _next(Drain(streams, to_read=streams, leased=leased & streams), [])


def advance(drain: Drain, event: Event) -> tuple[Drain, list[Action]]:
    """The drain after ``event``, and what to do now."""
    actions: list[Action] = []
    match event:
        case Read(found, now):
            drain, actions = _read(replace(drain, waiting_for=None), found, now)
        case Woke(landed, kicked):
            drain = _woke(drain, landed, kicked)
        case Recorded(still_due):
            drain = replace(drain, waiting_for=None, to_read=drain.to_read | still_due)
    return _next(drain, actions)


def _read(drain: Drain, found: Mapping[int, ToShow], now: datetime) -> tuple[Drain, list[Action]]:
    shown: list[Action] = []
    posts: list[Action] = []
    updates: list[Action] = []
    held_for = set(drain.held_for)
    in_flight = set(drain.in_flight)
    posting = dict(drain.posting)
    for stream, to_show in found.items():
        sending = {surface for each, surface in drain.in_flight if each == stream}
        put_off: dict[str, datetime] = {}  # the stream's posts that wait, by conversation
        decisions = plan.next_sends(to_show.pending, sending, now)
        for pending, decision in zip(to_show.pending, decisions, strict=True):
            match decision:
                case plan.InFlight(surface):
                    held_for.add((stream, (stream, surface)))
                case plan.AlreadyShown(surface, version):
                    shown.append(MarkShown(stream, surface, version))
                case plan.NotYet(_, due_at) if pending.shown is None:
                    where = conversation(pending.newest)
                    put_off[where] = max(due_at, put_off.get(where, due_at))
                case plan.NotYet(surface, due_at) if due_at > pending.newest.due_at:
                    # Shown, but unsure past its versions' due time (a takeover marked it):
                    # they wait for that time, or the stream would be read again and again.
                    newest = pending.newest
                    shown.append(WaitFor(stream, surface, newest.version, pending.attempts, due_at))
                case plan.Post() if conversation(decision.entry) in put_off:
                    newest = decision.entry
                    until = put_off[conversation(newest)]
                    wait = WaitFor(stream, newest.surface, newest.version, pending.attempts, until)
                    shown.append(wait)
                case plan.Post() | plan.Update():
                    send = Send(stream, to_show.workspace, decision)
                    if isinstance(decision, plan.Post):
                        where = conversation(decision.entry)
                        if where in posting:  # its turn comes once that post is recorded
                            held_for.add((stream, posting[where]))
                            continue
                        posting[where] = send.message
                        posts.append(send)
                    else:
                        updates.append(send)
                    in_flight.add(send.message)
    drain = replace(
        drain,
        leased=drain.leased | found.keys(),
        held_for=frozenset(held_for),
        in_flight=frozenset(in_flight),
        posting=frozenset(posting.items()),
    )
    idle = set(found) - drain.streams_in_flight() - drain.held_back  # nothing to send: let go
    return replace(drain, to_release=drain.to_release | idle), [*shown, *posts, *updates]


def _woke(drain: Drain, landed: Mapping[Message, Landing | None], kicked: frozenset[int]) -> Drain:
    in_flight = drain.in_flight - landed.keys()
    calling = {stream for stream, _ in in_flight}
    ended = {stream for stream, _ in landed}
    again = {stream for stream, waits_for in drain.held_for if waits_for in landed}
    held_for = frozenset(h for h in drain.held_for if h[0] not in again)
    still_held = {stream for stream, _ in held_for}  # waiting on another stream's post
    return replace(
        drain,
        in_flight=in_flight,
        posting=frozenset(p for p in drain.posting if p[1] not in landed),
        held_for=held_for,
        to_read=drain.to_read | again | (kicked & drain.streams),
        to_release=drain.to_release | (ended - again - calling - still_held),
        to_record=drain.to_record + tuple(x for x in landed.values() if x is not None),
    )


def _next(drain: Drain, actions: list[Action]) -> tuple[Drain, list[Action]]:
    """With nothing under way: what landed is recorded and the idle streams let go first (never
    one with a call in flight, one waiting for a call, nor one about to be read: it keeps its
    lease), then the streams to read are read."""
    if drain.waiting_for is not None:
        return drain, actions
    release = drain.to_release - drain.streams_in_flight() - drain.to_read - drain.held_back
    if drain.to_record or release:
        actions.append(Record(drain.to_record, tuple(sorted(release))))
        kept = drain.to_release - release
        drain = replace(drain, leased=drain.leased - release, to_release=kept)
        return replace(drain, to_record=(), waiting_for=Recorded), actions
    if drain.to_read:
        held = drain.to_read & drain.leased
        actions.append(ReadStreams(tuple(sorted(held)), tuple(sorted(drain.to_read - held))))
        drain = replace(drain, to_read=frozenset(), waiting_for=Read)
    return drain, actions
