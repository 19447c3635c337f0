"""Which process delivers a stream's messages: a short lease per stream, renewed while it works.

A process takes a stream's lease (a row with an expiry) in a short transaction, so no lock is held
while Slack answers: a step's own, as it commits what a game shows, or the deliverer's claim,
which reads the stream's due messages too, for what it finds later. While it delivers, a heartbeat
renews its leases every ``RENEW_SECONDS``; a process that dies stops renewing, and its leases
lapse within ``LEASE_SECONDS``, when any live process's sweep takes its streams over. In the same
pid space (host, boot and pid namespace) a dead holder's leases go at once (its pid is gone).
Hosts' clocks must agree to well within ``LEASE_SECONDS`` (NTP does).
"""

from __future__ import annotations

import hashlib
import os
import socket
import uuid
from collections.abc import Callable, Collection
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import (
    ColumnElement,
    Connection,
    Update,
    bindparam,
    delete,
    exists,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert

from slackapp.db.models import DeliveryLease, OutboxEntry, SlackMessage
from slackapp.delivery import slack

LEASE_SECONDS = 3.0
"""How long a lease outlives its last renewal: a dead process's streams wait at most this."""
RENEW_SECONDS = 0.75
"""How often the heartbeat renews: a lease survives three missed beats."""

_LEASE = insert(DeliveryLease).values(
    stream=bindparam("of_stream"), holder=bindparam("h"), until=bindparam("u")
)
CLAIM = _LEASE.on_conflict_do_update(
    index_elements=[DeliveryLease.stream],
    set_={"holder": _LEASE.excluded.holder, "until": _LEASE.excluded.until},
    where=DeliveryLease.holder == _LEASE.excluded.holder,
).returning(DeliveryLease.stream)
"""Take a free stream's lease or renew one's own, unless another holder has it, even one whose
lease lapsed: only the sweep takes such a stream over (``take_over_lapsed``), and marks its
messages first. One statement, run for many streams at once (SQLAlchemy sends them as one
multi-row insert) and compiled once; a statement built with ``values([...])`` is compiled anew
on every call."""

_HELD_IN_ORDER = (
    select(DeliveryLease.stream)
    .where(
        DeliveryLease.holder == bindparam("by"),
        DeliveryLease.stream.in_(bindparam("streams", expanding=True)),
    )
    .order_by(DeliveryLease.stream)
    .with_for_update()
    .scalar_subquery()
)
"""The streams' leases this holder has, locked in the streams' order: a step takes its streams'
leases in that order too, so the two never wait on each other in a cycle (``landings.RECORD``
lets them go in that order)."""
RENEW = (
    update(DeliveryLease)
    .where(DeliveryLease.stream.in_(_HELD_IN_ORDER))
    .values(until=bindparam("to"))
)
STILL_HELD = select(DeliveryLease.stream).where(
    DeliveryLease.holder == bindparam("by"),
    DeliveryLease.stream.in_(bindparam("streams", expanding=True)),
    DeliveryLease.until >= bindparam("until"),
)
"""Those of the streams whose leases this holder has for a while yet."""


def new_holder() -> str:
    """This process's name in the leases it takes: its pid space, pid, and a token of its
    own. Only processes that share the pid space (see :func:`pid_space`) judge each other's
    pids, so two containers with the same host name never free each other's leases."""
    return f"{pid_space()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def pid_space() -> str:
    """The host name (shortened, to read) and a digest of what makes pids comparable: the
    whole host name, the kernel's boot and the pid namespace."""
    facts = [socket.gethostname()]
    reads: tuple[Callable[[], str], ...] = (
        lambda: Path("/proc/sys/kernel/random/boot_id").read_text(),
        lambda: os.readlink("/proc/self/ns/pid"),
    )
    for read in reads:
        try:
            facts.append(read())
        except OSError:
            facts.append(uuid.uuid4().hex)  # unknown: this process's own, judged by none
    digest = hashlib.sha256("\0".join(facts).encode()).hexdigest()[:12]
    return f"{facts[0][:24]}~{digest}"


def expiry(now: datetime) -> datetime:
    return now + timedelta(seconds=LEASE_SECONDS)


def claim(
    connection: Connection, holder: str, streams: Collection[int], now: datetime
) -> list[int]:
    """Take the streams' free leases, or renew this holder's own; those taken (not held by
    another, even one whose lease lapsed: the sweep takes those over, ``take_over_lapsed``)."""
    if not streams:
        return []
    until = expiry(now)
    # In order, so two transactions claiming the same streams never wait on each other.
    rows = [{"of_stream": s, "h": holder, "u": until} for s in sorted(set(streams))]
    return list(connection.scalars(CLAIM, rows).all())


def renew(connection: Connection, holder: str, streams: Collection[int], now: datetime) -> None:
    if streams:
        connection.execute(RENEW, {"by": holder, "streams": sorted(streams), "to": expiry(now)})


def held_until(now: datetime) -> datetime:
    """A lease this holder took that lasts until at least this is still its own to use (by
    then its heartbeat has renewed it): one that lapsed, or nearly, may be another's now. See
    ``STILL_HELD``."""
    return now + timedelta(seconds=LEASE_SECONDS / 2)


def alive(holder: str) -> bool:
    """Whether the process named in a lease of this host still runs."""
    try:
        pid = int(holder.split(":")[1])
    except (IndexError, ValueError):
        return True
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it runs, as another user
    try:  # a killed process nobody has reaped yet is a zombie: it delivers nothing
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def free_dead_of_host(connection: Connection, holder: str, now: datetime) -> None:
    """A lease held by a process of this pid space that no longer runs (killed, crashed) is
    let go at once rather than at its expiry; other hosts' leases simply lapse."""
    host = holder.split(":")[0]
    held = connection.execute(
        select(DeliveryLease.holder)
        .where(DeliveryLease.holder.startswith(f"{host}:"), DeliveryLease.until >= now)
        .distinct()
    ).scalars()
    dead = [each for each in held if not alive(each)]
    if dead:
        until = now + timedelta(seconds=slack.LATE_LANDING_SECONDS)
        connection.execute(LEFT_UNSURE, {"dead": dead, "until": until})
        connection.execute(delete(DeliveryLease).where(DeliveryLease.holder.in_(dead)))


def _left_unsure(streams: ColumnElement[bool]) -> Update:
    """A process that died (or stalled past its lease) may have left a redraw of each of its
    streams' undelivered messages on its way to Slack, which Slack may still apply over a newer
    version sent after it: such a call began before its lease was found dead or lapsed, so each
    of those messages is unsure until ``LATE_LANDING_SECONDS`` from then, as after a call of
    unknown outcome (``delivery.sending``)."""
    return (
        update(SlackMessage)
        .where(
            streams,
            exists().where(
                OutboxEntry.stream == SlackMessage.stream,
                OutboxEntry.surface == SlackMessage.surface,
                OutboxEntry.done_at.is_(None),
            ),
        )
        .values(unsure_until=func.greatest(SlackMessage.unsure_until, bindparam("until")))
    )


LEFT_UNSURE = _left_unsure(
    SlackMessage.stream.in_(
        select(DeliveryLease.stream).where(
            DeliveryLease.holder.in_(bindparam("dead", expanding=True))
        )
    )
)
"""The messages of the streams dead holders of this host held, unsure (see ``_left_unsure``)."""
LAPSED_UNSURE = _left_unsure(SlackMessage.stream.in_(bindparam("streams", expanding=True)))
"""The messages of streams whose leases lapsed in another holder's hands, unsure."""


LAPSED_DUE = (
    select(DeliveryLease.stream)
    .where(
        DeliveryLease.until < bindparam("now"),
        DeliveryLease.holder != bindparam("by"),
        exists().where(
            OutboxEntry.stream == DeliveryLease.stream,
            OutboxEntry.done_at.is_(None),
            OutboxEntry.due_at <= bindparam("now"),
        ),
    )
    .order_by(DeliveryLease.stream)
    .limit(1000)
)
"""Streams with entries due whose leases lapsed in another holder's hands: found apart from
``DUE_AND_FREE``, whose thousand rows a process busy with its own streams may fill."""
_LAPSED_IN_ORDER = (
    select(DeliveryLease.stream)
    .where(
        DeliveryLease.stream.in_(bindparam("streams", expanding=True)),
        DeliveryLease.until < bindparam("now"),
        DeliveryLease.holder != bindparam("by"),
    )
    .order_by(DeliveryLease.stream)
    .with_for_update()
    .scalar_subquery()
)
LET_GO_LAPSED = delete(DeliveryLease).where(DeliveryLease.stream.in_(_LAPSED_IN_ORDER))
"""The streams' leases, if they lapsed in another holder's hands still (not renewed since),
locked in the streams' order as a step and a landing lock them, so none waits on another in a
cycle."""


def take_over_lapsed(connection: Connection, holder: str, now: datetime) -> list[int]:
    """Streams with entries due whose leases lapsed in another process's hands (on another
    host, or dead before any sweep let them go): their messages with versions still to send
    are unsure for ``LATE_LANDING_SECONDS``, then the leases are let go, for any process to
    claim; those streams, to kick. Only here is a lapsed lease taken from another, so every
    takeover marks its messages, once (a holder that renews in between keeps its lease, and
    its messages are marked in vain)."""
    found = {"now": now, "by": holder}
    streams = list(connection.scalars(LAPSED_DUE, found))
    if streams:
        until = now + timedelta(seconds=slack.LATE_LANDING_SECONDS)
        connection.execute(LAPSED_UNSURE, {"streams": streams, "until": until})
        connection.execute(LET_GO_LAPSED, {**found, "streams": streams})
    return streams


def due_and_free(
    connection: Connection, holder: str, now: datetime
) -> list[tuple[int, str | None]]:
    """Streams with entries due and no live lease but perhaps ``holder``'s own (at most 1,000):
    each with the holder of its lease, if any."""
    return [
        (stream, lease_holder)
        for stream, lease_holder in connection.execute(DUE_AND_FREE, {"now": now, "by": holder})
    ]


DUE_AND_FREE = (
    select(OutboxEntry.stream, DeliveryLease.holder)
    .outerjoin(DeliveryLease, DeliveryLease.stream == OutboxEntry.stream)
    .where(OutboxEntry.done_at.is_(None), OutboxEntry.due_at <= bindparam("now"))
    .where(
        or_(
            DeliveryLease.until.is_(None),
            DeliveryLease.until < bindparam("now"),
            DeliveryLease.holder == bindparam("by"),
        )
    )
    .distinct()
    .limit(1000)
)
