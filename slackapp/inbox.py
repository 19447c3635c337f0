"""Nothing acknowledged is lost: a command or click is written down before Slack is told
Varulv has it, and carried out exactly once, by this process or, should it die, another.

Before the acknowledgement, one autocommit ``INSERT`` records the request (its payload and the
few headers the work reads) in the ``inbox`` table, claimed by this process for
``CLAIM_SECONDS``, renewed while the work waits in its game's lane or runs. The work runs on a
step thread *carrying* its row: the first transaction of that thread that writes anything
marks the row done in the same commit, so a step committed means its request done, and a crash
before the commit leaves it pending. A work that commits nothing (a help text, a refusal) marks
it done in a statement of its own when it returns. Two processes carrying out the same request
(one thought dead, or slow) cannot both commit: the second finds it done under the row's lock
and rolls back (:class:`AlreadyCarriedOut`), quietly.

Every process sweeps: a request whose holder is a process of this pid space that no longer
runs is taken over at once, one whose claim lapsed (another host's) after ``CLAIM_SECONDS``,
and either is handed to Bolt again as the request it was, so it runs through the same
listener, lane and step, and answers through its ``response_url`` (good for 30 minutes).

A digest of the request's body is the row's key: Slack's redelivery of a request it saw no
answer to (``X-Slack-Retry-Num``) is the same body (its headers differ), finds it recorded and
is acknowledged without running again. A done row keeps only that key until it is pruned,
``KEPT_SECONDS`` later.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from slack_bolt import BoltRequest, BoltResponse
from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db import inbox as rows
from slackapp.db.engine import outside_transaction
from slackapp.delivery import leases

log = logging.getLogger(__name__)

CLAIM_SECONDS = leases.LEASE_SECONDS
"""How long a claim outlives its last renewal: another host's dead process's requests wait
at most this (plus a sweep) before a live process carries them out."""
SWEEP_SECONDS = 0.5
"""How often a process renews its claims and looks for requests left behind."""
KEPT_SECONDS = 30 * 60
"""How long a done request's key is kept: Slack's redeliveries come within minutes, and a
``response_url`` answers for 30."""
PRUNE_SECONDS = 60.0
CLAIM_BATCH = 100

REPLAYED = "varulv_inbox_row"
"""The Bolt context key of a request the sweep hands to Bolt again: its inbox row."""
HEADERS_KEPT = ("x-slack-request-timestamp", "x-slack-retry-num", "x-slack-retry-reason")
"""The headers the listeners read, kept with the payload."""

Dispatch = Callable[[BoltRequest], BoltResponse]


class AlreadyCarriedOut(Exception):
    """Another process carried this request out first; this one's transaction rolled back."""


@dataclass
class _Carried:
    row: int
    marked: bool = False
    """The row was marked done by a commit that went through."""
    marking: bool = False
    """A commit under way marks it (``before_commit``): marked once that commit is made."""


_carried: contextvars.ContextVar[_Carried | None] = contextvars.ContextVar(
    "varulv_inbox_carried", default=None
)


def request_key(request: BoltRequest) -> str:
    """What Slack repeats when it delivers the same request again: its body, byte for byte
    over HTTP (a Socket Mode payload, as parsed), digested."""
    raw = request.raw_body or json.dumps(request.body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()


def kept_headers(request: BoltRequest) -> dict[str, str]:
    kept = {}
    for name in HEADERS_KEPT:
        values = request.headers.get(name)
        if values:
            kept[name] = str(values[0])
    return kept


class Inbox:
    """One process's side of the inbox: what it writes down and carries out, and its sweep."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        now: Callable[[], datetime],
        holder: str | None = None,
    ) -> None:
        self.sessions = sessions
        self.now = now
        self.holder = holder or leases.new_holder()
        self._lock = threading.Lock()
        self._held: set[int] = set()
        """Rows this process claimed and has not marked done: their claims are renewed."""
        self._unfinished: set[int] = set()
        """Rows whose work is over but whose mark failed (the database away): marked again."""
        self._stopped = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._dispatch: Dispatch | None = None
        self._pruned_at = 0.0
        self._failing = False
        self._taking_over = True
        event.listen(sessions, "before_commit", self._before_commit)
        event.listen(sessions, "after_commit", self._after_commit)
        event.listen(sessions, "after_rollback", self._after_rollback)

    # -- on the request's thread, before the acknowledgement --------------------------------

    def record(self, request: BoltRequest) -> int | None:
        """Write the request down, held by this process; its row, or None when Slack sent it
        before (it is carried out, or being). Raises what the database raised."""
        until = self.now() + timedelta(seconds=CLAIM_SECONDS)
        with outside_transaction(self.sessions) as session:
            row = rows.record(
                session.connection(),
                request_key(request),
                request.body,
                kept_headers(request),
                self.holder,
                until,
            )
        if row is not None:
            with self._lock:
                self._held.add(row)
        return row

    # -- on the step thread -----------------------------------------------------------------

    @contextmanager
    def carrying(self, row: int) -> Iterator[None]:
        """Run the request's work: the first commit that writes marks the row done; if none
        did, the row is marked done when the work returns (or raises: it answered)."""
        carried = _Carried(row)
        token = _carried.set(carried)
        try:
            yield
        finally:
            _carried.reset(token)
            if not carried.marked:
                self._finish(row)
            else:
                with self._lock:
                    self._held.discard(row)

    def _finish(self, row: int) -> None:
        try:
            with outside_transaction(self.sessions) as session:
                rows.finish(session.connection(), row)
        except Exception as error:  # still held and renewed: the sweep marks it again
            log.warning("could not mark a request done: %s", type(error).__name__)
            with self._lock:
                self._unfinished.add(row)
            return
        with self._lock:
            self._held.discard(row)
            self._unfinished.discard(row)

    def _before_commit(self, session: Session) -> None:
        carried = _carried.get()
        if carried is None or carried.marked:
            return
        wrote, marked = rows.mark_done(session.connection(), carried.row)
        if marked:
            carried.marking = True  # done only if this commit is: its flush or COMMIT may fail
        elif wrote:
            raise AlreadyCarriedOut(f"request {carried.row} was carried out by another process")

    def _after_commit(self, session: Session) -> None:
        carried = _carried.get()
        if carried is not None and carried.marking:
            carried.marked, carried.marking = True, False

    def _after_rollback(self, session: Session) -> None:
        carried = _carried.get()
        if carried is not None:
            carried.marking = False  # the mark went with the rest: the work's end marks it

    # -- the sweep --------------------------------------------------------------------------

    def start(self, dispatch: Dispatch) -> None:
        """Renew this process's claims and take over what others left, every
        ``SWEEP_SECONDS``, handing each request to ``dispatch`` (Bolt's) again."""
        self._dispatch = dispatch
        self._stopped.clear()
        self._sweeper = threading.Thread(target=self._sweeping, name="varulv-inbox", daemon=True)
        self._sweeper.start()

    def stop_taking_over(self) -> None:
        """Take over no more requests (this process is stopping), while the sweep still
        renews the claims of those it is carrying out, so no other process runs them too."""
        self._taking_over = False

    def stop(self) -> None:
        self._stopped.set()
        if self._sweeper is not None and self._sweeper is not threading.current_thread():
            self._sweeper.join(timeout=SWEEP_SECONDS * 4)

    def _sweeping(self) -> None:
        while not self._stopped.wait(SWEEP_SECONDS):
            self.sweep()

    def sweep(self) -> int:
        """One round: renew, take over, prune; how many requests were taken over."""
        try:
            taken = self._sweep_once()
        except Exception as error:
            if not self._failing:  # once per outage, not every half second
                log.warning("the inbox sweep cannot reach the database: %s", type(error).__name__)
            self._failing = True
            return 0
        if self._failing:
            log.info("the inbox sweep reaches the database again")
        self._failing = False
        return taken

    def _sweep_once(self) -> int:
        now = self.now()
        until = now + timedelta(seconds=CLAIM_SECONDS)
        with self._lock:
            held, unfinished = set(self._held), set(self._unfinished)
        for row in unfinished:
            self._finish(row)
        with outside_transaction(self.sessions) as session:
            connection = session.connection()
            rows.renew(connection, self.holder, held, until)
            others = rows.pending_holders(connection, self.holder)
            host = self.holder.split(":")[0]
            dead = [
                holder
                for holder, _ in others
                if holder.startswith(f"{host}:") and not leases.alive(holder)
            ]
            lapsed = any(soonest < now for _, soonest in others)
            taken = []
            if (dead or lapsed) and self._taking_over:
                taken = rows.claim(connection, self.holder, now, dead, held, until, CLAIM_BATCH)
            if time.monotonic() - self._pruned_at > PRUNE_SECONDS:
                rows.prune(connection, now - timedelta(seconds=KEPT_SECONDS))
                self._pruned_at = time.monotonic()
        for row, body, headers in taken:
            self._replay(row, body, headers)
        return len(taken)

    def _replay(self, row: int, body: dict[str, Any], headers: dict[str, str]) -> None:
        """Hand a request taken over to Bolt, as it came: the same listener acknowledges it
        (to nobody) and runs its work, carrying ``row``."""
        with self._lock:
            self._held.add(row)
        if self._dispatch is None:
            return
        log.info("carrying out a request another process acknowledged", extra={"row": row})
        request = BoltRequest(
            body=body, headers=dict(headers), context={REPLAYED: row}, mode="socket_mode"
        )
        try:
            status = self._dispatch(request).status
        except Exception:
            log.exception("a request taken over failed to dispatch")
            status = 500
        if status != 200:  # Bolt answered it itself (an installation gone): no work ran
            log.warning("a request taken over was refused (%s)", status)
            self._finish(row)
