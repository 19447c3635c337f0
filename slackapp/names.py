"""People's names, learned off the click path.

Slack draws a person's name itself wherever Varulv writes a mention (``<@U…>`` in mrkdwn), so
most screens need no name at all. A name is written out only where Slack renders no mention:
button labels (the night's and the ballot's), the referee's input, a bot's choice of name.
That name is the one kept in ``people``, read in the step's own transaction
(:meth:`Names.name_for`); someone Varulv has not met yet sits down under the handle their click
carried, and their profile's name is asked of Slack (``users.info``) afterwards, on a thread of
its own, kept, and written over the handle while the lobby is still open. A look-up waits
``LOOKUP_AFTER_SECONDS`` before it starts, so the screen the click brings (the lobby, the seat
taken) is not drawn beside it; *Start* begins any still waiting at once and waits for them, up
to ``NAME_LOOKUP_SECONDS``, so a quick start does not deal the night under handles. Slack's
``user_change`` event keeps a kept name current, and one older than ``NAME_REFRESH`` is asked
again the next time its person sits down.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor, wait
from datetime import datetime, timedelta
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from sqlalchemy import Connection
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db import people
from slackapp.shapes import profile_name
from slackapp.turns import Turns

log = logging.getLogger(__name__)

NAME_REFRESH = timedelta(days=1)
"""A person's kept name is asked of Slack again once it is this old."""
NAME_LOOKUP_SECONDS = 3
"""users.info gets this long, once, after its turn at Slack's limit (``slackapp.turns``); a
429 is not waited out: the handle stands, and the name is asked again next time."""
LOOKUP_THREADS = 2
LOOKUP_AFTER_SECONDS = 0.5
"""How long a look-up waits after the click that asked for it. Begun at once, its call and
transaction ran beside the lobby's, and a lone ``/varulv`` took a tenth longer to show its lobby
on a two-core machine."""

Renamed = Callable[[str, str, str, datetime | None], object]
"""Write a person's name over the one they sat down under at every open lobby: (team, user,
name, and the moment it was learned from Slack, to keep it as the person's name in the same
statement; None: kept already)."""


class Names:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        renamed: Renamed,
        now: Callable[[], datetime],
        after_seconds: float = LOOKUP_AFTER_SECONDS,
    ) -> None:
        self.sessions = sessions
        self.renamed = renamed
        self.now = now
        self.after_seconds = after_seconds
        self.turns = Turns()
        self._lock = threading.Lock()
        self._asked: dict[tuple[str, str], datetime] = {}
        """When this process last made sure of a person's name: asked again a day later."""
        self.lookups: Executor | None = None
        """Where the look-ups run: threads of their own, started on first use."""
        self._under_way: dict[tuple[str, str], Future[None]] = {}
        """Per person (workspace and user), the look-up not finished yet."""
        self._waiting: dict[Future[None], tuple[threading.Timer, Callable[[], None]]] = {}
        """The look-ups not begun yet: each one's timer, and what begins it (once: when the
        timer fires, or at ``settle``)."""

    def name_for(self, connection: Connection, team_id: str, user_id: str, handle: str) -> str:
        """The name a person sits down under, read in the step's own transaction: the one kept
        for them, else the handle their request carried. A kept name still fresh is made sure
        of until ``NAME_REFRESH`` after it was fetched, so ``sat_down`` asks nothing more."""
        known = people.known_in(connection, team_id, user_id)
        if known is None:
            return handle
        if self.now() - known.fetched_at < NAME_REFRESH:
            with self._lock:
                key = (team_id, user_id)
                self._made_sure(key, max(self._asked.get(key, known.fetched_at), known.fetched_at))
        return known.name

    def sat_down(self, client: WebClient, team_id: str, user_id: str, handle: str) -> None:
        """A person sat down (or opened a table), under the name :meth:`name_for` gave: unless
        that was a kept name still fresh, ask Slack for it in the background; returns at once."""
        key, now = (team_id, user_id), self.now()
        with self._lock:
            last = self._asked.get(key)
            if last is not None and now - last < NAME_REFRESH:
                return
            self._made_sure(key, now)
            if self.lookups is None:
                self.lookups = ThreadPoolExecutor(LOOKUP_THREADS, thread_name_prefix="names")
            lookups = self.lookups
            future: Future[None] = Future()
            self._under_way[key] = future
            token, base_url = client.token, client.base_url
            timer = threading.Timer(self.after_seconds, self._begin, [future])
            timer.name, timer.daemon = "names-waiting", True
            self._waiting[future] = (
                timer,
                lambda: self._run(lookups, future, token, base_url, team_id, user_id, handle),
            )
        future.add_done_callback(lambda done: self._finished(key, done))
        timer.start()

    def _begin(self, future: Future[None]) -> None:
        """Start the look-up, unless it started already (``settle`` and the timer both may)."""
        with self._lock:
            waiting = self._waiting.pop(future, None)
        if waiting is not None:
            timer, begin = waiting
            timer.cancel()
            begin()

    def _run(
        self,
        lookups: Executor,
        future: Future[None],
        token: str | None,
        base_url: str,
        team_id: str,
        user_id: str,
        handle: str,
    ) -> None:
        try:
            running = lookups.submit(self._make_sure, token, base_url, team_id, user_id, handle)
        except RuntimeError:  # the process is stopping: over, without a name
            future.set_result(None)
            return
        running.add_done_callback(lambda _: future.set_result(None))

    def _finished(self, key: tuple[str, str], done: Future[None]) -> None:
        with self._lock:
            if self._under_way.get(key) is done:
                del self._under_way[key]

    def settle(
        self, user_ids: list[str] | None = None, seconds: float = NAME_LOOKUP_SECONDS
    ) -> None:
        """Begin the people's look-ups still waiting, in any workspace (everyone's: ``None``),
        and wait for those under way (their names written over their handles at the lobby), up
        to ``seconds``; at once when none is."""
        with self._lock:
            under_way = [
                future
                for (_, user_id), future in self._under_way.items()
                if user_ids is None or user_id in user_ids
            ]
        for future in under_way:
            self._begin(future)
        if under_way:
            wait(under_way, timeout=seconds)

    def _make_sure(
        self, token: str | None, base_url: str, team_id: str, user_id: str, handle: str
    ) -> None:
        try:
            self.turns.wait_for("users.info", token or "")  # Slack's Tier 4, per workspace
            lookup = WebClient(token=token, base_url=base_url, timeout=NAME_LOOKUP_SECONDS)
            try:
                user = lookup.users_info(user=user_id).get("user")
            except (SlackApiError, SlackClientError, OSError) as error:
                # A rate limit, or an old install without users:read; the handle stands.
                log.warning("users.info failed, the name stays as known: %s", error)
                with self._lock:  # asked again the next time they sit down
                    self._asked.pop((team_id, user_id), None)
                return
            self.learned(team_id, user_id, profile_name(user, handle))
        except Exception:
            log.exception("a person's name could not be learned")

    def changed(self, team_id: str, user: Any) -> None:
        """Slack's ``user_change`` (any profile change of anyone in the workspace): the person's
        kept name follows, if Varulv keeps one (it keeps none for people who never played)."""
        user_id = user.get("id") if isinstance(user, dict) else None
        if not isinstance(user_id, str) or not user_id:
            return
        name = profile_name(user, str(user.get("name") or user_id))
        if people.changed(self.sessions, team_id, user_id, name, self.now()):
            self.renamed(team_id, user_id, name, None)

    def learned(self, team_id: str, user_id: str, name: str) -> None:
        now = self.now()
        self.renamed(team_id, user_id, name, now)
        with self._lock:
            self._made_sure((team_id, user_id), now)

    def _made_sure(self, key: tuple[str, str], at: datetime) -> None:
        """(Holding the lock.) The person's name is sure as of ``at``; a long-lived process
        forgets those it made sure of longest ago, once it knows of 100,000."""
        if len(self._asked) > 100_000 and key not in self._asked:
            self._asked = dict(sorted(self._asked.items(), key=lambda kv: kv[1])[50_000:])
        self._asked[key] = at

    def stop(self) -> None:
        with self._lock:
            lookups, self.lookups = self.lookups, None
            waiting, self._waiting = self._waiting, {}
        for future, (timer, _) in waiting.items():
            timer.cancel()
            future.set_result(None)  # never begun: over, and nobody waits for it
        if lookups is not None:
            lookups.shutdown(wait=False, cancel_futures=True)
