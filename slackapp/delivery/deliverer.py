"""The deliverer: shows in Slack what the outbox holds, after the step that wrote it committed.

One process at a time delivers a game's messages: it takes a lease on the game (a row with an
expiry, committed at once, so no lock is held while Slack answers), then repeatedly reads the
game's undelivered entries and sends, for each message, only its newest version: a post the
first time, an update after. Messages are independent of each other, so a game's messages are
sent side by side; one message's versions are sent in order, and a version older than the one
a message shows is never sent. The ``ts`` Slack returns is committed as soon as it answers.

Slack throttling or failing: the entry waits (Retry-After, or a growing backoff) and is tried
again. Slack refusing for good: the step machine is told (the channel cannot be written, a
person's DM failed) and decides what follows. A process that dies leaves its lease to expire,
and whichever process is alive takes the game over; the one window a crash cannot close is a
post Slack took whose ``ts`` was not committed yet: that post is made again, identical.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk import WebClient
from sqlalchemy import Connection, and_, bindparam, delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.models import DeliveryLease, Game, OutboxEntry, SlackMessage
from slackapp.delivery.copies import dropped_ts
from slackapp.delivery.landings import DONE, Landing, Landings
from slackapp.delivery.pacing import Pacer
from slackapp.delivery.slack import ClientFor, Failure, NotInstalled, WorkspaceId, classify
from slackapp.game import machine as m
from slackapp.logs import log_context

log = logging.getLogger(__name__)

LEASE_SECONDS = 15.0
"""Longer than a Web API call may take (the client's timeout), renewed before each call."""
DRAIN_THREADS = 8
DRAIN_BATCH = 50
"""Games a drain thread claims, reads and lets go together."""
CALL_THREADS = 16
SWEEP_SECONDS = 0.5
RELEASE_WITHIN_SECONDS = 0.05
"""A game whose last call landed is let go within this long, with the others landing then:
one transaction for them all, and no message waits for it."""
MAX_ATTEMPTS = 10
BACKOFF_CAP_SECONDS = 60.0
SLEEP_AT_MOST_SECONDS = 1.0
"""A call whose turn (see slackapp.delivery.pacing) is nearer waits for it; a later one is put
off in the outbox with its turn kept, so no call thread sleeps long."""

Report = Callable[[int, m.Event], None]
"""Tell the step machine that Slack refused something for good: (game id, the event)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Entry:
    """An undelivered version of a message, read as plain values (no ORM object to build)."""

    game_id: int
    surface: str
    version: int
    channel: str | None
    user_id: str | None
    text: str
    blocks: list[dict[str, Any]] | None
    due_at: datetime
    attempts: int


UNDELIVERED = (
    select(
        OutboxEntry.game_id,
        OutboxEntry.surface,
        OutboxEntry.version,
        OutboxEntry.channel,
        OutboxEntry.user_id,
        OutboxEntry.text,
        OutboxEntry.blocks,
        OutboxEntry.due_at,
        OutboxEntry.attempts,
        Game.team_id,
        Game.enterprise_id,
        SlackMessage.channel,
        SlackMessage.ts,
        SlackMessage.version,
    )
    .join(Game, Game.id == OutboxEntry.game_id)
    .outerjoin(
        SlackMessage,
        and_(
            SlackMessage.game_id == OutboxEntry.game_id,
            SlackMessage.surface == OutboxEntry.surface,
        ),
    )
    .where(
        OutboxEntry.done_at.is_(None), OutboxEntry.game_id.in_(bindparam("games", expanding=True))
    )
    .order_by(OutboxEntry.id)
)
"""The undelivered entries of the games, as the columns of an ``Entry`` in its order, each with
its game's workspace and where its message is in Slack (the channel, ``ts`` and version it
shows), if it was posted: one statement for all a drain reads.

This and the deliverer's other statements are built once, here: building one is a good part
of the cost of running it, on every read of every drain."""


_LEASE = insert(DeliveryLease).values(
    game_id=bindparam("g"), holder=bindparam("h"), until=bindparam("u")
)
CLAIM = _LEASE.on_conflict_do_update(
    index_elements=[DeliveryLease.game_id],
    set_={"holder": _LEASE.excluded.holder, "until": _LEASE.excluded.until},
    where=or_(
        DeliveryLease.until < bindparam("now"), DeliveryLease.holder == _LEASE.excluded.holder
    ),
).returning(DeliveryLease.game_id)
"""Take or renew a game's lease, unless another live holder has it: one statement, run for
many games at once (SQLAlchemy sends them as one multi-row insert) and compiled once; a
statement built with ``values([...])`` is compiled anew on every call."""


LET_GO = delete(DeliveryLease).where(
    DeliveryLease.game_id.in_(bindparam("games", expanding=True)),
    DeliveryLease.holder == bindparam("holder"),
)
"""Let go of the games' leases this holder has."""
STILL_DUE = (
    select(OutboxEntry.game_id)
    .where(
        OutboxEntry.game_id.in_(bindparam("games", expanding=True)),
        OutboxEntry.done_at.is_(None),
        OutboxEntry.due_at <= bindparam("now"),
    )
    .distinct()
)
"""Those of the games with something due."""


@dataclass(frozen=True, slots=True)
class Shown:
    """Where a message is in Slack, and the version it shows."""

    channel: str
    ts: str
    version: int


@dataclass(frozen=True)
class Pending:
    """One message's undelivered versions, newest last."""

    surface: str
    entries: tuple[Entry, ...]
    shown: Shown | None

    @property
    def newest(self) -> Entry:
        return self.entries[-1]


def _undelivered_up_to(game_id: int, surface: str, version: int) -> tuple[Any, ...]:
    """The undelivered versions of one message, up to ``version``."""
    return (
        OutboxEntry.game_id == game_id,
        OutboxEntry.surface == surface,
        OutboxEntry.version <= version,
        OutboxEntry.done_at.is_(None),
    )


def _alive(holder: str) -> bool:
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


class Deliverer:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        clients: ClientFor,
        report: Report,
        now: Callable[[], datetime] = utc_now,
        drain_threads: int = DRAIN_THREADS,
        call_threads: int = CALL_THREADS,
        pacer: Pacer | None = None,
    ) -> None:
        self.sessions = sessions
        self.clients = clients
        self.report = report
        self.now = now
        self.pacer = pacer or Pacer()
        self.landings = Landings(sessions)
        self._turns: dict[tuple[int, str], float] = {}
        """Messages put off until their turn: the ``time.monotonic()`` it comes."""
        self.holder = f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._drains = ThreadPoolExecutor(drain_threads, thread_name_prefix="varulv-deliver")
        self._calls = ThreadPoolExecutor(call_threads, thread_name_prefix="varulv-call")
        self._lock = threading.Lock()
        self._queued: set[int] = set()
        self._waiting: list[int] = []
        self._again: set[int] = set()
        self._wakers: dict[int, Future[None]] = {}
        """Per game being drained, what wakes its drain to read it again."""
        self._stopped = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._sweep_failing = False

    # -- running --------------------------------------------------------------------------

    def start(self, sweep_seconds: float = SWEEP_SECONDS) -> None:
        """Deliver what any process left undelivered (after a crash, a backoff), now and then."""

        def sweeping() -> None:
            while not self._stopped.wait(sweep_seconds):
                self.sweep()

        self.sweep()
        self._sweeper = threading.Thread(target=sweeping, name="varulv-sweep", daemon=True)
        self._sweeper.start()

    def stop(self) -> None:
        self._stopped.set()
        with self._lock:
            for waker in self._wakers.values():
                if not waker.done():
                    waker.set_result(None)
        self._drains.shutdown(wait=False, cancel_futures=True)
        self._calls.shutdown(wait=False, cancel_futures=True)

    def kick(self, game_id: int) -> None:
        """Deliver the game's new entries now (a step committed some). Games kicked while
        the drain threads are busy wait together, and the next free thread takes them as one
        batch: one transaction claims them all and reads their outbox, one lets them go."""
        with self._lock:
            if game_id in self._queued:
                self._again.add(game_id)  # draining already: its drain looks again
                waker = self._wakers.get(game_id)
                if waker is not None and not waker.done():
                    waker.set_result(None)
                return
            self._queued.add(game_id)
            self._waiting.append(game_id)
        try:
            self._drains.submit(self._drain_waiting)
        except RuntimeError:  # stopping
            with self._lock:
                self._queued.discard(game_id)

    def sweep(self) -> None:
        """Kick every game with entries due and no live lease on it but this process's own on
        a game it is not draining: one left behind when letting it go failed (the database
        went away just then), which would otherwise hold the game's messages back until it
        expired."""
        try:
            self._free_leases_of_dead_processes()
            with self.sessions() as session:
                now = self.now()
                due = session.execute(
                    select(OutboxEntry.game_id, DeliveryLease.holder)
                    .outerjoin(DeliveryLease, DeliveryLease.game_id == OutboxEntry.game_id)
                    .where(OutboxEntry.done_at.is_(None), OutboxEntry.due_at <= now)
                    .where(
                        or_(
                            DeliveryLease.until.is_(None),
                            DeliveryLease.until < now,
                            DeliveryLease.holder == self.holder,
                        )
                    )
                    .distinct()
                    .limit(1000)
                ).all()
        except Exception as error:
            if not self._sweep_failing:  # once per outage, not every half second
                log.warning("the delivery sweep cannot read the outbox: %s", type(error).__name__)
            self._sweep_failing = True
            return
        if self._sweep_failing:
            log.info("the delivery sweep reads the outbox again")
        self._sweep_failing = False
        with self._lock:
            draining = set(self._queued)
        for game_id, holder in due:
            if holder != self.holder or game_id not in draining:
                self.kick(game_id)

    def _drain_waiting(self) -> None:
        with self._lock:
            batch, self._waiting = self._waiting[:DRAIN_BATCH], self._waiting[DRAIN_BATCH:]
        if not batch:
            return  # an earlier batch took them
        try:
            self.drain_many(batch)
        except Exception:
            if not self._stopped.is_set():
                log.exception("delivering games' messages failed; the sweep tries again")
        with self._lock:
            again = [game_id for game_id in batch if game_id in self._again]
            self._again.difference_update(again)
            self._queued.difference_update(set(batch) - set(again))
            self._waiting += again
        for _ in again:
            with contextlib.suppress(RuntimeError):  # stopping
                self._drains.submit(self._drain_waiting)

    # -- delivering ---------------------------------------------------------------------------

    def drain(self, game_id: int) -> None:
        """Deliver the game's entries until none is due, or the next must wait its retry."""
        self.drain_many([game_id])

    def drain_many(self, game_ids: list[int]) -> None:
        """Deliver the games' entries until none is due, or the next must wait its retry.

        A game whose lease another live process holds is left to it (it reads what is new
        too). Each read is one transaction to claim the games and read what they have to
        show; every ready message of every game is then sent side by side. A message still
        being sent is never sent again alongside itself, but it does not hold the others
        back: as soon as any call lands, or a step gives one of these games something new,
        the games concerned are read again and whatever else is ready goes out. A game with
        nothing in flight and nothing ready is let go (one transaction for the batch, and for
        those whose last calls land within ``RELEASE_WITHIN_SECONDS``), and one that got
        something due meanwhile is read again.
        """
        waker: Future[None] = Future()
        with self._lock:
            for game_id in game_ids:
                self._wakers[game_id] = waker
        in_flight: dict[Future[None], tuple[int, str]] = {}
        clients: dict[WorkspaceId, WebClient | NotInstalled] = {}  # one look-up per workspace
        to_read, to_release = set(game_ids), set[int]()
        release_by = 0.0  # time.monotonic() when to_release is let go
        held_back: set[int] = set()
        """Games with a newer version of a message that was still in flight when read."""
        try:
            while (to_read or to_release or in_flight) and not self._stopped.is_set():
                if to_read:
                    sending = set(in_flight.values())
                    claimed = self._claim_and_read(sorted(to_read))
                    to_read = set()
                    now = self.now()
                    for game_id, (workspace, pending) in claimed.items():
                        ready = []
                        for each in pending:
                            if (game_id, each.surface) in sending:
                                held_back.add(game_id)
                            elif all(e.due_at <= now for e in each.entries):
                                ready.append(each)
                        if not ready:
                            continue
                        for future, surface in self._send(game_id, workspace, ready, clients):
                            in_flight[future] = (game_id, surface)
                    clients.clear()
                    idle = set(claimed) - {game_id for game_id, _ in in_flight.values()}
                    if idle:  # read, and nothing to send: let go at once
                        to_release |= idle
                        release_by = time.monotonic()
                if to_release and (not in_flight or time.monotonic() >= release_by):
                    # Not one whose message went out meanwhile: it needs its lease still.
                    to_release -= {game_id for game_id, _ in in_flight.values()}
                    if to_release:
                        to_read |= set(self._release(sorted(to_release)))
                    to_release = set()
                if to_read:
                    continue
                if not in_flight:
                    break
                timeout = max(0.0, release_by - time.monotonic()) if to_release else None
                done, _ = wait([*in_flight, waker], timeout, FIRST_COMPLETED)
                for future in done:
                    if future is waker:
                        continue
                    game_id, _surface = in_flight.pop(future)
                    if future.exception() is not None and not self._stopped.is_set():
                        log.error("a message could not be delivered", exc_info=future.exception())
                    if game_id in held_back:  # its newer version may go now
                        held_back.discard(game_id)
                        to_read.add(game_id)
                    elif all(game != game_id for game, _ in in_flight.values()):
                        if not to_release:  # those landing soon after are let go with it
                            release_by = time.monotonic() + RELEASE_WITHIN_SECONDS
                        to_release.add(game_id)  # which finds anything due meanwhile
                if waker.done():
                    with self._lock:
                        waker = Future()
                        for game_id in game_ids:
                            self._wakers[game_id] = waker
                        kicked = self._again & set(game_ids)
                        self._again -= kicked
                    to_read |= kicked
        finally:
            with self._lock:
                for game_id in game_ids:
                    if self._wakers.get(game_id) is waker:
                        del self._wakers[game_id]

    def _send(
        self,
        game_id: int,
        workspace: WorkspaceId,
        ready: list[Pending],
        clients: dict[WorkspaceId, WebClient | NotInstalled],
    ) -> list[tuple[Future[None], str]]:
        """Send each message's newest version (on the call threads), recording what Slack
        took. ``clients`` keeps this round's client (or its absence) per workspace, so a
        thousand games of one workspace read its installation once, not a thousand times."""
        if workspace not in clients:
            try:
                clients[workspace] = self.clients(workspace)
            except NotInstalled as missing:
                clients[workspace] = missing
        client = clients[workspace]
        team_id = workspace.team_id
        if isinstance(client, NotInstalled):
            self._give_up_all(game_id, "not_installed")
            self.report(game_id, m.WorkspaceLeft())
            return []
        try:
            return [
                (
                    self._calls.submit(self._deliver_logged, game_id, team_id, client, each),
                    each.surface,
                )
                for each in ready
            ]
        except RuntimeError:  # stopping
            return []

    def _claim_and_read(self, game_ids: list[int]) -> dict[int, tuple[WorkspaceId, list[Pending]]]:
        """Take (or renew) the games' leases and read their undelivered entries, in one
        transaction; a game another live process holds is left out."""
        now = self.now()
        until = now + timedelta(seconds=LEASE_SECONDS)
        with self.sessions() as session, session.begin():
            connection = session.connection()  # plain rows: nothing for the ORM to track
            # In order, so two processes claiming the same games never wait on each other.
            claimed = connection.scalars(
                CLAIM,
                [
                    {"g": game_id, "h": self.holder, "u": until, "now": now}
                    for game_id in sorted(set(game_ids))
                ],
            ).all()
            return self._read(connection, list(claimed)) if claimed else {}

    def _read(
        self, connection: Connection, game_ids: list[int]
    ) -> dict[int, tuple[WorkspaceId, list[Pending]]]:
        """Each game's workspace, and its undelivered messages with what each shows now."""
        teams: dict[int, WorkspaceId] = {}
        by_surface: dict[tuple[int, str], list[Entry]] = {}
        shown: dict[tuple[int, str], Shown] = {}
        for row in connection.execute(UNDELIVERED, {"games": game_ids}):
            entry = Entry(*row[:9])
            team_id, enterprise_id, channel, ts, version = row[9:]
            teams[entry.game_id] = WorkspaceId(team_id, enterprise_id)
            by_surface.setdefault((entry.game_id, entry.surface), []).append(entry)
            if ts is not None:
                shown[entry.game_id, entry.surface] = Shown(channel, ts, version)
        found: dict[int, tuple[WorkspaceId, list[Pending]]] = {
            game_id: (teams.get(game_id, WorkspaceId("")), []) for game_id in game_ids
        }
        for (game_id, surface), versions in by_surface.items():
            found[game_id][1].append(
                Pending(
                    surface,
                    tuple(sorted(versions, key=lambda e: e.version)),
                    shown.get((game_id, surface)),
                )
            )
        return found

    def _deliver_logged(
        self, game_id: int, team_id: str, client: WebClient, pending: Pending
    ) -> None:
        with log_context(game_id=game_id):
            self._deliver(game_id, team_id, client, pending)

    def _deliver(self, game_id: int, team_id: str, client: WebClient, pending: Pending) -> None:
        newest, shown = pending.newest, pending.shown
        dropped = dropped_ts(pending.surface)
        if dropped is not None:  # a second copy of a message goes (see slackapp.delivery.copies)
            self._drop(game_id, team_id, client, pending, dropped)
            return
        if shown is not None and shown.version >= newest.version:
            self._done(game_id, pending.surface, newest.version)  # already on screen
            return
        try:
            if shown is None:
                channel = newest.channel
                if channel is None:  # a private word: open the DM first
                    opened = client.conversations_open(users=newest.user_id)
                    channel = str(opened["channel"]["id"])
                if self._put_off(game_id, pending, lambda: self.pacer.post(str(channel))):
                    return
                posted = client.chat_postMessage(
                    channel=channel, text=newest.text, blocks=newest.blocks
                )
            else:
                if self._put_off(game_id, pending, lambda: self.pacer.update(team_id)):
                    return
                client.chat_update(
                    channel=shown.channel, ts=shown.ts, text=newest.text, blocks=newest.blocks
                )
        except Exception as error:
            self._failed(game_id, pending, error)
            return
        # Slack has it: keep trying to record that (never post it again for a database blip).
        first = (str(posted["channel"]), str(posted["ts"])) if shown is None else None
        self.landings.record(Landing(game_id, pending.surface, newest.version, first))

    def _drop(
        self, game_id: int, team_id: str, client: WebClient, pending: Pending, ts: str
    ) -> None:
        if self._put_off(game_id, pending, lambda: self.pacer.update(team_id)):
            return
        try:
            client.chat_delete(channel=str(pending.newest.channel), ts=ts)
        except Exception as error:
            failure, code, _ = classify(error)
            if failure is Failure.TRANSIENT:
                self._failed(game_id, pending, error)  # retried, as any message is
            else:  # gone already, or out of reach: nothing else hangs on it
                log.info("a second copy of a message was not deleted: %s", code)
                self._done(game_id, pending.surface, pending.newest.version, code)
            return
        self.landings.record(Landing(game_id, pending.surface, pending.newest.version))

    def _put_off(self, game_id: int, pending: Pending, turn: Callable[[], float]) -> bool:
        """Wait for the message's turn at Slack's rate limit, or, when it is further off, put
        the message off until then (True)."""
        key = (game_id, pending.surface)
        with self._lock:
            kept = self._turns.pop(key, None)
        now = time.monotonic()
        wait = turn() if kept is None else kept - now
        if wait <= SLEEP_AT_MOST_SECONDS:
            if wait > 0:
                time.sleep(wait)
            return False
        with self._lock:
            if len(self._turns) > 10_000:  # those superseded or given up meanwhile
                self._turns = {k: at for k, at in self._turns.items() if at > now}
            self._turns[key] = now + wait
        newest = pending.newest
        attempts = max(entry.attempts for entry in pending.entries)
        self._retry_later(game_id, pending.surface, newest.version, attempts, wait)
        return True

    # -- recording ------------------------------------------------------------------------------

    def _done(self, game_id: int, surface: str, version: int, failure: str | None = None) -> None:
        """Every undelivered version up to ``version`` is done: with ``failure``, or else the
        older ones superseded."""
        with self.sessions() as session, session.begin():
            session.connection().execute(
                DONE, [{"g": game_id, "s": surface, "v": version, "f": failure}]
            )

    def _failed(self, game_id: int, pending: Pending, error: Exception) -> None:
        failure, code, retry_after = classify(error)
        newest = pending.newest
        surface = pending.surface
        if failure is Failure.TRANSIENT:
            attempts = max(entry.attempts for entry in pending.entries) + 1
            if attempts < MAX_ATTEMPTS:
                delay = (
                    retry_after
                    if retry_after is not None
                    else min(BACKOFF_CAP_SECONDS, 0.5 * 2**attempts)
                )
                log.warning("Slack did not take a message (%s); retrying in %.1f s", code, delay)
                self._retry_later(game_id, surface, newest.version, attempts, delay)
                return
            log.error("Slack kept failing (%s); a message of the game is given up", code)
            self._done(game_id, surface, newest.version, code)
            return
        self._done(game_id, surface, newest.version, code)
        key = m.dm_key(surface)
        if failure is Failure.UNWRITABLE and key is not None:
            log.warning("a person's private message failed for good: %s", code)
            self.report(game_id, m.DmFailed(key, code))
        elif failure is Failure.UNWRITABLE and surface.startswith("tell:"):
            log.warning("a private word to a person could not be sent: %s", code)
        elif failure is Failure.UNWRITABLE:
            log.warning("the game's channel cannot be written to: %s", code)
            self._give_up_channel(game_id, newest.channel, code)
            self.report(game_id, m.ChannelUnwritable(code))
        elif failure is Failure.GONE:
            log.info("a message to redraw is gone (%s): left as it is", code)
        else:
            log.error("Slack refused a message of the game: %s", code)

    def _retry_later(
        self, game_id: int, surface: str, version: int, attempts: int, delay: float
    ) -> None:
        with self.sessions() as session, session.begin():
            session.execute(
                update(OutboxEntry)
                .where(*_undelivered_up_to(game_id, surface, version))
                .values(attempts=attempts, due_at=self.now() + timedelta(seconds=delay))
                .execution_options(synchronize_session=False)
            )

    def _give_up_channel(self, game_id: int, channel: str | None, code: str) -> None:
        """Every undelivered message to the game's channel is given up with it."""
        with self.sessions() as session, session.begin():
            session.execute(
                update(OutboxEntry)
                .where(
                    OutboxEntry.game_id == game_id,
                    OutboxEntry.channel == channel,
                    OutboxEntry.done_at.is_(None),
                )
                .values(done_at=func.now(), failure=code)
                .execution_options(synchronize_session=False)
            )

    def _give_up_all(self, game_id: int, code: str) -> None:
        with self.sessions() as session, session.begin():
            session.execute(
                update(OutboxEntry)
                .where(OutboxEntry.game_id == game_id, OutboxEntry.done_at.is_(None))
                .values(done_at=func.now(), failure=code)
                .execution_options(synchronize_session=False)
            )

    # -- the lease ------------------------------------------------------------------------------

    def _release(self, game_ids: list[int]) -> list[int]:
        """Let the games' leases go; those with something due as they went (to claim again)."""
        if not game_ids:
            return []
        with self.sessions() as session, session.begin():
            connection = session.connection()
            connection.execute(LET_GO, {"games": game_ids, "holder": self.holder})
            return list(connection.scalars(STILL_DUE, {"games": game_ids, "now": self.now()}))

    def _free_leases_of_dead_processes(self) -> None:
        """A lease held by a process of this host that no longer runs (killed, crashed) is
        let go at once rather than at its expiry; other hosts' leases simply expire."""
        host = self.holder.split(":")[0]
        with self.sessions() as session, session.begin():
            held = session.execute(
                select(DeliveryLease.game_id, DeliveryLease.holder).where(
                    DeliveryLease.holder.startswith(f"{host}:"),
                    DeliveryLease.until >= self.now(),
                )
            ).all()
            dead = [holder for _, holder in held if not _alive(holder)]
            if dead:
                session.execute(delete(DeliveryLease).where(DeliveryLease.holder.in_(dead)))
