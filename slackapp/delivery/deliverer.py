"""The deliverer: shows in Slack what the outbox holds, after the step that wrote it committed.

The pieces, each a module of its own:
- ``leases``: which process delivers a stream now (short leases, renewed by a heartbeat);
- ``reading``: a stream's undelivered outbox rows and where each message is in Slack;
- ``plan``: what to send next, a pure function of those rows;
- ``drain``: what one drain of a batch of streams does next, as pure transitions;
- ``sending``: one call to Slack and what its outcome means (paced by ``pacing``, its failure
  judged by ``policy``);
- ``landings``: what Slack took (``ts``, the version shown), recorded a drain's at a time.

This module carries them out: threads that drain streams (each carrying out its ``drain``'s
actions and telling it what happened) and threads that make the calls (``sending``). A step in
this process takes its streams' leases in its own transaction (``take``) and hands them over
after the commit (``hand_over``): the drain checks the leases and reads what the streams show
outside any transaction, and sends, so no transaction stands between the commit and the first
call. Otherwise ``kick`` (a stream another process held as the step took it) or the sweep (a
crash, a retry's backoff) make a drain claim the streams' leases and read their outbox in one
transaction, then send.
A stream's messages are sent side by side, but its posts to one conversation one at a time, in
the order they were written; one message's versions are sent in order, newest only, never older
than what it shows. The one window a crash cannot close is a post Slack took whose ``ts`` was
not committed yet: that post is made again, identical.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from slack_sdk import WebClient
from sqlalchemy import Connection
from sqlalchemy.orm import Session, sessionmaker

from slackapp import metrics
from slackapp.db.engine import outside_transaction
from slackapp.delivery import drain as draining
from slackapp.delivery import leases, plan
from slackapp.delivery.drain import ToShow
from slackapp.delivery.landings import (
    Landing,
    record,
)
from slackapp.delivery.pacing import Pacer
from slackapp.delivery.policy import Retry, after_failure
from slackapp.delivery.reading import read, read_held
from slackapp.delivery.sending import SLEEP_AT_MOST_SECONDS, Report, Sender, utc_now
from slackapp.delivery.slack import (
    CALL_TIMEOUT_SECONDS,
    ClientFor,
    Failure,
    NotInstalled,
    WorkspaceId,
)
from slackapp.game import machine as m
from slackapp.logs import log_context

log = logging.getLogger(__name__)

DRAIN_THREADS = 8
DRAIN_BATCH = 50
"""Streams a drain thread claims, reads and lets go together."""
CALL_THREADS = 64
"""Calls wait on Slack, not on the processor: at Slack's ~100 ms a call, 64 threads make about
600 calls a second (16 made 160, so a thousand phases ending together took 30 s for their
~4,800 messages however little each cost). A waiting thread costs its stack, not CPU time."""
SWEEP_SECONDS = 0.5
UNDELIVERABLE = "undeliverable"
"""The failure of a message given up after its calls' handling failed every try."""


@dataclass(frozen=True)
class Taken:
    """The leases a step's transaction took: of ``asked``, every stream the step gave
    something to show, the ``streams`` this process got (another process held the rest: those
    are its to deliver, or, should its lease have lapsed, the sweep's to take over)."""

    asked: frozenset[int]
    streams: frozenset[int]

    @property
    def left(self) -> frozenset[int]:
        """The asked streams this process did not get."""
        return self.asked - self.streams


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
        self._stopped = threading.Event()
        self.sender = Sender(sessions, report, now, pacer or Pacer(), self._stopped)
        self.holder = leases.new_holder()
        self._drains = ThreadPoolExecutor(drain_threads, thread_name_prefix="varulv-deliver")
        self._calls = ThreadPoolExecutor(call_threads, thread_name_prefix="varulv-call")
        self._lock = threading.Lock()
        self._queued: set[int] = set()
        """Streams this process drains or is about to: their leases are renewed."""
        self._waiting: list[int] = []
        self._leased: set[int] = set()
        """Waiting streams whose leases a step took: not renewed while they wait for a drain
        thread (so another process may take one over if none comes within the lease), then
        read without claiming them again if the lease is still this process's."""
        self._again: set[int] = set()
        self._opening: dict[int, datetime] = {}
        """New streams being written with a lease of this process's, until when it lasts: the
        sweep leaves them to ``hand_over`` meanwhile."""
        self._fresh: dict[int, tuple[ToShow, datetime]] = {}
        """What new streams handed over show, and until when their leases last: their first
        read, from memory, while nothing else was written to them and the lease is young."""
        self._wakers: dict[int, Future[None]] = {}
        """Per stream being drained, what wakes its drain to read it again."""
        self._sweeper: threading.Thread | None = None
        self._heart: threading.Thread | None = None
        self._sweep_failing = False

    @property
    def pacer(self) -> Pacer:
        """The pace of its calls, ahead of Slack's rate limits."""
        return self.sender.pacer

    @pacer.setter
    def pacer(self, pacer: Pacer) -> None:
        self.sender.pacer = pacer

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
        """Stop at once; the leases this process holds lapse (the heartbeat is stopped when
        this returns), and whatever fails from now on is left for another to send."""
        self._stopped.set()
        with self._lock:
            for waker in self._wakers.values():
                if not waker.done():
                    waker.set_result(None)
        self._drains.shutdown(wait=False, cancel_futures=True)
        self._calls.shutdown(wait=False, cancel_futures=True)
        if self._heart is not None and self._heart is not threading.current_thread():
            self._heart.join(timeout=leases.RENEW_SECONDS * 2)

    def take(self, connection: Connection, streams: list[int]) -> Taken:
        """In a step's transaction, once its outbox rows are written: take the streams' leases,
        for ``hand_over`` after the commit. The step holds its games' rows (``FOR NO KEY
        UPDATE``) and takes the leases last, in order, so no other transaction waits on it in a
        cycle; it reads nothing more under its lock. A stream this process has queued or is
        draining is left out and kicked after the commit (its drain reads it again, or a claim
        finds it if it was let go meanwhile), so a busy table's steps do not queue on its
        lease's row."""
        asked = frozenset(streams)
        with self._lock:
            free = asked - self._queued
        return Taken(asked, frozenset(leases.claim(connection, self.holder, free, self.now())))

    def new_lease(self, game_id: int) -> tuple[str, datetime]:
        """The holder and expiry of the lease a step writes with the new game ``game_id`` (its
        stream is its id): no other process knows of that game before it commits, so nothing
        is taken from one. Until ``hand_over`` (or ``not_opened``), the sweep leaves it alone."""
        until = leases.expiry(self.now())
        with self._lock:
            self._opening[game_id] = until
        return self.holder, until

    def not_opened(self, game_id: int) -> None:
        """The new game of ``new_lease`` was not written after all (or its step failed)."""
        with self._lock:
            self._opening.pop(game_id, None)

    def hand_over(self, taken: Taken, shown: Mapping[int, ToShow] | None = None) -> None:
        """After the commit of the step that took them: send the streams' messages now. A stream
        this process is draining already is read again by its drain. The streams the step did
        not take are kicked: those another process holds are found by that process as it lets
        them go (or by a sweep, should its lease lapse); those this process had queued are read
        again. Streams handed over while the
        drain threads are busy wait with those kicked, and go as one batch. ``shown``: what
        new streams show, as their step wrote it, read from here instead of the database unless
        something else is written to them first."""
        with self._lock:
            for stream in taken.streams:
                until = self._opening.pop(stream, None)
                if shown and stream in shown and until and stream not in self._queued:
                    self._fresh[stream] = (shown[stream], until)
        for stream in sorted(taken.streams):
            self._queue(stream, leased=True)
        for stream in sorted(taken.left):
            self._queue(stream, leased=False)

    def kick(self, stream: int) -> None:
        """Deliver the stream's new entries now (a step committed some). Streams kicked while
        the drain threads are busy wait together, and the next free thread takes them as one
        batch: one transaction claims them all and reads their outbox, one lets them go."""
        self._queue(stream, leased=False)

    def _queue(self, stream: int, leased: bool) -> None:
        """The stream waits for a drain thread, unless this process drains it already (its
        drain then reads it again); ``leased``: a step took its lease, so it is not claimed."""
        with self._lock:
            if stream in self._queued or not leased:
                # Written to again, or kicked (by the sweep, even before its hand-over went
                # on): whatever a drain sends of it, it reads from the database.
                self._fresh.pop(stream, None)
            if stream in self._queued:
                if stream not in self._waiting:  # being drained: read again
                    self._wake(stream)
                return
            self._queued.add(stream)
            if leased:
                self._leased.add(stream)
            self._waiting.append(stream)
        self._beat()
        try:
            self._drains.submit(self._drain_waiting)
        except RuntimeError:  # stopping: a lease lapses, and another process sends the stream
            with self._lock:
                self._queued.discard(stream)
                self._leased.discard(stream)
                self._fresh.pop(stream, None)

    def _wake(self, stream: int) -> None:
        """(Holding the lock.) The stream's drain reads it again."""
        self._again.add(stream)
        waker = self._wakers.get(stream)
        if waker is not None and not waker.done():
            waker.set_result(None)

    def sweep(self) -> None:
        """Take over the streams with entries due whose leases lapsed in another's hands
        (``leases.take_over_lapsed``), and kick them and every stream with entries due and no
        lease on it but this process's own on a stream it is not draining (or writing: see
        ``new_lease``): one left behind when letting it go failed (the database went away just
        then), which would otherwise hold the stream's messages back until it expired."""
        try:
            with outside_transaction(self.sessions) as session:  # a read or two, twice a second
                now = self.now()
                leases.free_dead_of_host(session.connection(), self.holder, now)
                taken_over = set(leases.take_over_lapsed(session.connection(), self.holder, now))
                due = leases.due_and_free(session.connection(), self.holder, now)
        except Exception as error:
            if not self._sweep_failing:  # once per outage, not every half second
                log.warning("the delivery sweep cannot read the outbox: %s", type(error).__name__)
            self._sweep_failing = True
            return
        if self._sweep_failing:
            log.info("the delivery sweep reads the outbox again")
        self._sweep_failing = False
        with self._lock:
            opening = self._opening.items()
            self._opening = {stream: until for stream, until in opening if until > now}
            draining = self._queued | self._opening.keys()
        for stream in taken_over:
            self.kick(stream)
        for stream, holder in due:
            if stream not in taken_over and (holder != self.holder or stream not in draining):
                self.kick(stream)

    # -- the heartbeat ------------------------------------------------------------------------

    def _beat(self) -> None:
        """Start the heartbeat, the first time this process takes a lease."""
        with self._lock:
            if self._heart is not None:
                return
            self._heart = threading.Thread(target=self._renewing, name="varulv-leases", daemon=True)
        self._heart.start()

    def _renewing(self) -> None:
        while not self._stopped.wait(leases.RENEW_SECONDS):
            with self._lock:
                held = self._queued - self._leased
            if not held:
                continue
            try:
                with self.sessions() as session, session.begin():
                    leases.renew(session.connection(), self.holder, held, self.now())
            except Exception as error:  # the leases may lapse: another process takes over
                log.warning("could not renew the delivery leases: %s", type(error).__name__)

    # -- draining -----------------------------------------------------------------------------

    def _drain_waiting(self) -> None:
        with self._lock:
            batch, self._waiting = self._waiting[:DRAIN_BATCH], self._waiting[DRAIN_BATCH:]
            leased = self._leased.intersection(batch)
            self._leased -= leased
            fresh = {stream: self._fresh.pop(stream) for stream in leased & self._fresh.keys()}
        if batch:
            self._drain_and_follow(batch, leased, fresh)

    def _drain_and_follow(
        self,
        batch: list[int],
        leased: set[int] | None = None,
        fresh: dict[int, tuple[ToShow, datetime]] | None = None,
    ) -> None:
        try:
            self.drain_many(batch, leased, fresh)
        except Exception:
            if not self._stopped.is_set():
                log.exception("delivering streams' messages failed; the sweep tries again")
        with self._lock:
            again = [stream for stream in batch if stream in self._again]
            self._again.difference_update(again)
            self._queued.difference_update(set(batch) - set(again))
            self._waiting += again
        for _ in again:
            with contextlib.suppress(RuntimeError):  # stopping
                self._drains.submit(self._drain_waiting)

    def drain(self, stream: int) -> None:
        """Deliver the stream's entries until none is due, or the next must wait its retry."""
        self.drain_many([stream])

    def drain_many(
        self,
        streams: list[int],
        leased: set[int] | None = None,
        fresh: dict[int, tuple[ToShow, datetime]] | None = None,
    ) -> None:
        """Deliver the streams' entries until none is due, or the next must wait its retry.

        ``leased``: those of the streams whose leases a step has just taken, read first in one
        statement (two at most) outside any transaction, as is every stream read again while
        the drain holds it (the heartbeat renews its lease), unless others are to be claimed
        in the same read; every other read is one transaction that claims the streams and reads
        them, and a stream another process holds is left to it (a lapsed one to the sweep).
        What to read, send and let go, and when, is ``delivery.drain``'s to decide: this carries
        its actions out and tells it what happened (a read, a call that ended, a kick, the
        time it asked to be woken at). ``fresh``: what some of the leased streams show, handed
        over in memory with when their leases were taken, for their first read.
        """
        waker: Future[None] = Future()
        with self._lock:
            for stream in streams:
                self._wakers[stream] = waker
        in_flight: dict[Future[Landing | None], draining.Send] = {}
        state, actions = draining.begin(frozenset(streams), frozenset(leased or ()))
        try:
            while True:
                events = deque(self._carry_out(actions, in_flight, fresh))
                fresh = None  # a read after the first is the database's
                while events:
                    state, actions = draining.advance(state, events.popleft())
                    events.extend(self._carry_out(actions, in_flight))
                if state.over or self._stopped.is_set():
                    break
                waits: list[Future[Any]] = [*in_flight, waker]
                done, _ = wait(waits, None, FIRST_COMPLETED)
                ended = [(f, in_flight.pop(f)) for f in done if f is not waker]
                landed = {action.message: self._landing(f, action) for f, action in ended}
                kicked: set[int] = set()
                if waker.done():
                    with self._lock:
                        waker = Future()
                        for stream in streams:
                            self._wakers[stream] = waker
                        kicked = self._again & set(streams)
                        self._again -= kicked
                state, actions = draining.advance(state, draining.Woke(landed, frozenset(kicked)))
        finally:
            with self._lock:
                for stream in streams:
                    if self._wakers.get(stream) is waker:
                        del self._wakers[stream]
            if in_flight or state.to_record:
                self._left_early(state, in_flight)

    def _left_early(
        self, state: draining.Drain, in_flight: dict[Future[Landing | None], draining.Send]
    ) -> None:
        """A drain ends with calls out or landings unrecorded (stopping, or the database
        failed it): what Slack took is recorded all the same, so nobody posts it again. Its
        calls end within their timeout, and are waited for; a stopping process waits for none,
        and leaves each redraw still out unsure (it may land after whoever delivers next)."""
        if not self._stopped.is_set():
            wait(in_flight, timeout=CALL_TIMEOUT_SECONDS + SLEEP_AT_MOST_SECONDS + 1)
        try:
            for call, action in in_flight.items():
                if not call.done() and isinstance(action.send, plan.Update):
                    self.sender.unsure(action.stream, action.send.pending.surface, self.now())
            taken = [self._landing(call, sent) for call, sent in in_flight.items() if call.done()]
            kept = [*state.to_record, *(x for x in taken if x is not None)]
            if kept:
                record(self.sessions, kept)
        except Exception:
            log.exception("what a drain left could not be recorded")

    def _landing(self, call: Future[Landing | None], sent: draining.Send) -> Landing | None:
        """What Slack took of an ended call (None: nothing, or it failed and was handled). A
        call whose handling raised (a bug, or the database failing as its outcome was written
        down) leaves its message due; the policy treats it as a failure that may pass (put
        off after a backoff, given up after as many tries), or the drain would send it again
        at once, and again, for as long as it lasted."""
        error = call.exception()
        if error is None:
            return call.result()
        if not self._stopped.is_set():
            log.error("a message could not be delivered", exc_info=error)
            pending = sent.send.pending
            surface, version = pending.surface, pending.newest.version
            then = after_failure(Failure.TRANSIENT, UNDELIVERABLE, None, pending.attempts, surface)
            try:
                if isinstance(then, Retry):
                    due = self.now() + timedelta(seconds=then.delay)
                    self.sender.put_off(sent.stream, surface, version, then.attempts, due)
                else:
                    self.sender.done(sent.stream, surface, version, then.code)
            except Exception:
                log.exception("a message that could not be delivered could not be put off")
        return None

    def _carry_out(
        self,
        actions: list[draining.Action],
        in_flight: dict[Future[Landing | None], draining.Send],
        fresh: dict[int, tuple[ToShow, datetime]] | None = None,
    ) -> list[draining.Event]:
        """Do what the drain asked, in order; what happened that it must hear of at once (a
        read, a record). A send's end is heard of when its future is done."""
        events: list[draining.Event] = []
        clients: dict[WorkspaceId, WebClient | NotInstalled] = {}  # one look-up per workspace
        for action in actions:
            match action:
                case draining.ReadStreams(held, claimed):
                    found = self._from_memory(held, fresh or {})
                    rest_held = [stream for stream in held if stream not in found]
                    if rest_held and not claimed:  # else one transaction claims and reads all
                        found |= self._read_held(rest_held)
                    if rest := sorted(set(claimed) | (set(held) - found.keys())):
                        found |= self._claim_and_read(rest)
                    events.append(draining.Read(found, self.now()))
                case draining.Send(stream, workspace, send):
                    client = self._client(stream, workspace, clients)
                    call: Future[Landing | None] = Future()
                    if client is None:  # its messages are given up, and the machine told
                        call.set_result(None)
                    elif not self._send(stream, workspace.team_id, client, send, call):
                        continue  # stopping: a lease lapses, and another process sends it
                    in_flight[call] = action
                case draining.MarkShown(stream, surface, version):
                    self.sender.done(stream, surface, version)
                case draining.WaitFor(stream, surface, version, attempts, until):
                    self.sender.put_off(stream, surface, version, attempts, until)
                case draining.Record(landings, release):
                    still_due = record(self.sessions, landings, self.holder, release, self.now())
                    events.append(draining.Recorded(frozenset(still_due)))
        return events

    def _claim_and_read(self, streams: list[int]) -> dict[int, ToShow]:
        """Take (or renew) the streams' leases and read their undelivered entries, in one
        transaction; a stream another process holds, even one whose lease lapsed, is left out."""
        metrics.delivery_read("claimed")
        with self.sessions() as session, session.begin():
            connection = session.connection()  # plain rows: nothing for the ORM to track
            claimed = leases.claim(connection, self.holder, streams, self.now())
            return read(connection, claimed) if claimed else {}

    def _from_memory(
        self, held: tuple[int, ...], fresh: dict[int, tuple[ToShow, datetime]]
    ) -> dict[int, ToShow]:
        """What the streams handed over in memory show, of those whose leases last long enough
        yet to be this process's still (as ``_read_held`` asks of the database's)."""
        now = self.now()
        return {
            stream: shown
            for stream in held
            if stream in fresh
            for shown, until in [fresh[stream]]
            if leases.held_until(now) <= until
        }

    def _read_held(self, streams: list[int]) -> dict[int, ToShow]:
        """What the streams whose leases this drain holds show (a step took them, or a read of
        the drain found them), of those whose leases this process still has: one read or two,
        in no transaction (nothing to begin, end or write); one with nothing undelivered is read as
        idle, to let go. A stream whose lease lapsed, or nearly, while it waited is left out, for
        a claim to find."""
        metrics.delivery_read("held")
        with outside_transaction(self.sessions) as session:
            held_until = leases.held_until(self.now())
            return read_held(session.connection(), self.holder, streams, held_until)

    # -- sending ------------------------------------------------------------------------------

    def _client(
        self,
        stream: int,
        workspace: WorkspaceId,
        clients: dict[WorkspaceId, WebClient | NotInstalled],
    ) -> WebClient | None:
        """The client of the stream's workspace; None when it is not installed (the stream's
        messages are then given up, and the machine told) or cannot be looked up just now (they
        stay due, for the sweep). ``clients`` keeps this round's client (or its absence) per
        workspace, so a thousand streams of one workspace read its installation once, not a
        thousand times."""
        if workspace not in clients:
            try:
                clients[workspace] = self.clients(workspace)
            except NotInstalled as missing:
                clients[workspace] = missing
            except Exception as error:  # the store unreadable just now: the sweep tries again
                log.warning("no client for a workspace just now: %s", type(error).__name__)
                return None
        client = clients[workspace]
        if isinstance(client, NotInstalled):
            self.sender.give_up_all(stream, "not_installed")
            self.report(stream, m.WorkspaceLeft())
            return None
        return client

    def _send(
        self,
        stream: int,
        team_id: str,
        client: WebClient,
        send: plan.Send,
        call: Future[Landing | None],
    ) -> bool:
        """The send on a call thread; ``call`` done with what Slack took once it has ended.
        False when stopping."""
        try:
            self._calls.submit(self._deliver_logged, stream, team_id, client, send, call)
        except RuntimeError:
            return False
        return True

    def _deliver_logged(
        self,
        stream: int,
        team_id: str,
        client: WebClient,
        send: plan.Send,
        call: Future[Landing | None],
    ) -> None:
        with log_context(stream=stream):
            try:
                call.set_result(self.sender.deliver(stream, team_id, client, send))
            except BaseException as error:
                call.set_exception(error)
