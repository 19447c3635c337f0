"""Requests in one process, deliveries and deadlines in another, told at once by PostgreSQL.

``varulv serve`` answers Slack in its web workers and shows the outbox and keeps the timers in
a background process of its own, so that a thousand messages going out never stand between a
person and the acknowledgement of their click (one interpreter lock per process). A web
worker's step, once committed, sends a NOTIFY: the background process LISTENs, and kicks its
deliverer or arms the deadline at once. A notice is only a wake-up: one lost (the listener
reconnecting, the database restarting) is found by the deliverer's own sweep (every half
second) or the timers' (every two seconds).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

import psycopg
from sqlalchemy import Engine, make_url, text

log = logging.getLogger(__name__)

OUTBOX = "varulv_outbox"
"""A game has new entries in the outbox; the payload is its id."""
DEADLINE = "varulv_deadline"
"""A game's deadline was set; the payload is its id and the deadline (ISO 8601)."""
WAIT_SECONDS = 1.0
"""How long the listener waits for a notice before it looks whether it should stop."""
RECONNECT_SECONDS = 1.0


class Notices:
    """A web worker's deliverer and timers: each kick and deadline is a NOTIFY."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def kick(self, game_id: int) -> None:
        self._notify(OUTBOX, str(game_id))

    def arm(self, game_id: int, at: datetime) -> None:
        self._notify(DEADLINE, f"{game_id} {at.isoformat()}")

    def _notify(self, channel: str, payload: str) -> None:
        try:
            with self.engine.connect() as connection:
                connection.execute(text("SELECT pg_notify(:c, :p)"), {"c": channel, "p": payload})
                connection.commit()
        except Exception as error:  # the background's sweeps find the game soon enough
            log.warning("could not notify the background process: %s", type(error).__name__)


def parse_deadline(payload: str) -> tuple[int, datetime]:
    """A DEADLINE notice's game id and deadline.

    >>> from datetime import UTC
    >>> at = datetime(2026, 12, 1, 10, tzinfo=UTC)
    >>> parse_deadline(f"12 {at.isoformat()}") == (12, at)
    True
    """
    game_id, at = payload.split(" ", 1)
    return int(game_id), datetime.fromisoformat(at)


class Listener:
    """The background process's ear: LISTEN on both channels, on a connection of its own."""

    def __init__(
        self,
        database_url: str,
        on_outbox: Callable[[int], None],
        on_deadline: Callable[[int, datetime], None],
        on_connect: Callable[[], None],
    ) -> None:
        """``on_connect``: run each time the listener (re)connects, to catch up with whatever
        was notified while nobody listened."""
        url = make_url(database_url).set(drivername="postgresql")
        self.conninfo = url.render_as_string(hide_password=False)
        self.on_outbox = on_outbox
        self.on_deadline = on_deadline
        self.on_connect = on_connect
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="varulv-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """At once: the thread (a daemon) notices within WAIT_SECONDS, or dies with the process."""
        self._stopped.set()

    def _listen(self) -> None:
        failing = False
        while not self._stopped.is_set():
            try:
                with psycopg.connect(self.conninfo, autocommit=True) as connection:
                    connection.execute(f"LISTEN {OUTBOX}")
                    connection.execute(f"LISTEN {DEADLINE}")
                    if failing:
                        log.info("listening for the web workers' notices again")
                    failing = False
                    self.on_connect()
                    while not self._stopped.is_set():
                        for notice in connection.notifies(timeout=WAIT_SECONDS):
                            self._heard(notice.channel, notice.payload)
            except Exception as error:
                if not failing:  # once per outage
                    log.warning("not listening for notices: %s", type(error).__name__)
                failing = True
                self._stopped.wait(RECONNECT_SECONDS)

    def _heard(self, channel: str, payload: str) -> None:
        try:
            if channel == OUTBOX:
                self.on_outbox(int(payload))
            elif channel == DEADLINE:
                self.on_deadline(*parse_deadline(payload))
        except Exception:
            log.exception("a notice could not be acted on; the sweeps find its game")
