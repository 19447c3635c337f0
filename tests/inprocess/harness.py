"""The app built in the test process, the way bolt-python tests itself: signed requests go
straight to its WSGI router (signature check, shape check, Bolt), the fake Slack answers its
Web API calls, and its clock is the test's.

Nothing runs behind a test's back: no timer fires and no deliverer thread sweeps. Each request
returns once its steps have run, their private answers have gone out and the outbox has been
drained; :meth:`InProcessApp.pass_time` moves the clock on and fires whatever fell due.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock
from urllib.parse import urlencode

import requests
from sqlalchemy import select

from slackapp import app as wiring
from slackapp.app import StepExecutor, Varulv, build
from slackapp.asgi import environ
from slackapp.config import Settings
from slackapp.db.models import OutboxEntry
from slackapp.delivery.pacing import Limit, Pacer
from slackapp.fakeslack import FakeSlack, SignedRequest, signed_headers
from slackapp.fakeslack.client import SLACK_USER_AGENT, made_response
from slackapp.fakeslack.models import JSON
from slackapp.listeners import ack
from slackapp.logs import quiet_libraries
from slackapp.server import EVENTS_PATH, Router

SETTLE_SECONDS = 60.0
"""How long the app's threads may take to finish what one request started, before a test
fails saying so (never a wait that a passing test sits through)."""


class Clock:
    """The app's clock: the real one, plus however far the test has moved it on. Never behind
    the real one, since the database stamps rows (an outbox entry's ``due_at``) with its own."""

    def __init__(self) -> None:
        self.ahead = timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.ahead

    def advance(self, seconds: float) -> None:
        self.ahead += timedelta(seconds=seconds)


class Tracking:
    """An executor that knows when all it was given has finished."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._idle = threading.Condition()
        self._busy = 0

    def _track(self, fn: Callable[..., Any]) -> Callable[[], Any]:
        with self._idle:
            self._busy += 1

        def counted() -> Any:
            try:
                return fn()
            finally:
                with self._idle:
                    self._busy -= 1
                    self._idle.notify_all()

        return counted

    def idle(self) -> bool:
        with self._idle:
            return self._busy == 0

    def wait_idle(self, what: str) -> None:
        with self._idle:
            if not self._idle.wait_for(lambda: self._busy == 0, SETTLE_SECONDS):
                raise AssertionError(f"the app's {what} did not finish in {SETTLE_SECONDS:g} s")


class TrackedSteps(Tracking, StepExecutor):
    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        return super().submit(self._track(lambda: fn(*args, **kwargs)))


class TrackedPool(Tracking, ThreadPoolExecutor):
    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        return super().submit(self._track(lambda: fn(*args, **kwargs)))


class NoKick:
    """The steps' deliverer while a test drains the outbox itself."""

    def kick(self, game_id: int) -> None:
        pass


class RecentLog(logging.Handler):
    """The app's last log lines, for a failing test to show."""

    def __init__(self, lines: int = 200) -> None:
        super().__init__(logging.INFO)
        self.lines: deque[str] = deque(maxlen=lines)
        self.errors: list[str] = []
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        line = self.format(record)
        self.lines.append(line)
        if record.levelno >= logging.ERROR:
            self.errors.append(line)


UNPACED = Limit(per_second=1e9, burst=1_000_000)


class InProcessApp:
    """Varulv wired as ``varulv serve`` wires it, on ``database_url``, for the fake Slack
    ``fake``; people's requests reach it through :meth:`post_form` / :meth:`post_json` (the
    fake's ``Delivery``). Its timers and deliverer never start: the test is the clock."""

    events_url = None
    """No request URL: the fake hands requests to the app directly."""

    def __init__(
        self,
        fake: FakeSlack,
        database_url: str,
        signing_secret: str,
        bot_token: str,
        lengths: tuple[int, int, int] = (120, 300, 120),
    ) -> None:
        self.fake = fake
        self.signing_secret = signing_secret
        self.clock = Clock()
        settings = Settings(
            bot_token=bot_token,
            signing_secret=signing_secret,
            app_token=None,
            database_url=database_url,
            api_url=fake.api_url,
            port=0,
            night_seconds=lengths[0],
            day_seconds=lengths[1],
            vote_seconds=lengths[2],
            data_dir="",
        )
        with mock.patch.object(wiring, "StepExecutor", TrackedSteps):
            self.varulv: Varulv = build(settings, database_url, now=self.clock.now)
        self.varulv.games.deliverer = NoKick()
        self.varulv.channels.deliverer = NoKick()
        self.varulv.standing.deliverer = NoKick()
        # Pacing has tests of its own; here a paced post would wait for a clock nobody moves.
        self.varulv.deliverer.pacer = Pacer(posts=UNPACED, updates=UNPACED)
        step_threads = self.varulv.app.listener_runner.listener_executor
        assert isinstance(step_threads, TrackedSteps)
        self.step_threads = step_threads
        self.router = Router(self.varulv)
        self.log = RecentLog()
        quiet_libraries()  # as varulv serve's logging does
        self._lock = threading.Lock()
        self._draining = threading.Lock()

    # -- the fake's Delivery ----------------------------------------------------------

    def post_form(
        self, fields: Mapping[str, str], headers: Mapping[str, str] | None = None
    ) -> requests.Response:
        return self.request(urlencode(fields), "application/x-www-form-urlencoded", headers)

    def post_json(
        self, payload: JSON, headers: Mapping[str, str] | None = None
    ) -> requests.Response:
        return self.request(json.dumps(payload), "application/json", headers)

    def request(
        self, body: str, content_type: str, headers: Mapping[str, str] | None = None
    ) -> requests.Response:
        """``body`` signed as Slack signs it, sent to ``/slack/events``."""
        sent = {
            "Content-Type": content_type,
            "User-Agent": SLACK_USER_AGENT,
            **signed_headers(self.signing_secret, body),
            **(headers or {}),
        }
        return self.send_raw(body.encode(), sent)

    def send(
        self,
        request: SignedRequest,
        headers: Mapping[str, str] | None = None,
        database_away: bool = False,
    ) -> requests.Response:
        """A request signed earlier (``FakeSlack.keeping_requests``), as it is or with
        ``headers`` added; a slash command's acknowledgement is shown as Slack shows it.
        ``database_away``: wait for its steps and answers only, reading nothing of the
        database."""
        merged = {**request.headers, **(headers or {})}
        response = self.send_raw(request.body.encode(), merged, database_away)
        self.fake.show_answer(request, response)
        return response

    def send_raw(
        self, body: bytes, headers: Mapping[str, str], database_away: bool = False
    ) -> requests.Response:
        """Any bytes to ``/slack/events``, answered by the router as over HTTP; it returns once
        everything the request started is done and shown. ``elapsed`` is the time to the
        acknowledgement."""
        scope = {
            "method": "POST",
            "path": EVENTS_PATH,
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        }
        started: list[Any] = []

        def start_response(status: str, response_headers: list[tuple[str, str]]) -> None:
            started[:] = [status, response_headers]

        sent_at = time.perf_counter()
        answer = b"".join(self.router(environ(scope, body), start_response))
        response = made_response(int(started[0].split()[0]), answer)
        response.elapsed = timedelta(seconds=time.perf_counter() - sent_at)
        response.headers.update(dict(started[1]))
        if database_away:
            self.step_threads.wait_idle("steps")
            answers = ack.ANSWERS.get()
            assert isinstance(answers, TrackedPool)
            answers.wait_idle("private answers")
        else:
            self.settle()
        return response

    def errors_logged(self) -> list[str]:
        """Every error the app logged, oldest first."""
        return list(self.log.errors)

    # -- the test is the clock ----------------------------------------------------------

    def settle(self) -> None:
        """Until the steps' threads and the private answers are done and nothing is left
        due in the outbox: what people see is then all the app has decided."""
        answers, starts = ack.ANSWERS.get(), ack.STARTS.get()
        assert isinstance(answers, TrackedPool) and isinstance(starts, TrackedPool)
        while True:
            self.step_threads.wait_idle("steps")
            starts.wait_idle("starts")  # they hand the clicks behind them back to the steps
            if not (self.step_threads.idle() and starts.idle()):
                continue
            answers.wait_idle("private answers")
            with self._draining:  # one drain of a game at a time, as the deliverer's queue keeps
                due = self.due_deliveries()
                for game_id in due:
                    self.varulv.deliverer.drain(game_id)
            if not due:
                return

    def due_deliveries(self) -> list[int]:
        """Games with outbox entries due now."""
        with self.varulv.sessions() as session:
            return list(
                session.scalars(
                    select(OutboxEntry.stream)
                    .where(OutboxEntry.done_at.is_(None), OutboxEntry.due_at <= self.clock.now())
                    .distinct()
                )
            )

    def pass_time(self, seconds: float, failures: bool = False) -> None:
        """Move the clock on by ``seconds``, then wake what the timers' sweep would: every
        game whose deadline passed, the standing tables and the seasons; then settle. A
        deadline whose step failed fails the test, unless ``failures`` are expected."""
        self.clock.advance(seconds)
        with self._lock:
            for game_id in self.varulv.deadlines.due_games():
                self.varulv.games.deadline(game_id)
                if not failures and game_id in self.varulv.games.failing:
                    raise AssertionError(f"game {game_id}'s deadline failed:\n{self.log_tail()}")
            self.varulv.standing.sweep()
            self.varulv.wrap_ups.sweep()
        self.settle()

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(list(self.log.lines)[-lines:])

    @contextlib.contextmanager
    def serving(self) -> Iterator[InProcessApp]:
        """While inside, the fake sends people's requests here and the app's log is kept."""
        logging.getLogger().addHandler(self.log)
        self.fake.deliver_over(self)
        try:
            yield self
        finally:
            self.fake.deliver_over(None)
            logging.getLogger().removeHandler(self.log)
            self.varulv.stop()
            self.varulv.sessions.kw["bind"].dispose()


@contextlib.contextmanager
def tracked_answers() -> Iterator[None]:
    """The private answers' threads and the *Start*s', tracked so that
    :meth:`InProcessApp.settle` waits for them."""

    # Made anew whenever another app of this process stopped (finished) them meanwhile.
    def tracked(threads: int, name: str) -> ThreadPoolExecutor:
        return TrackedPool(8, thread_name_prefix=name)

    with (
        mock.patch.object(ack.ANSWERS, "pool", None),
        mock.patch.object(ack.ANSWERS, "make", tracked),
        mock.patch.object(ack.STARTS, "pool", None),
        mock.patch.object(ack.STARTS, "make", tracked),
    ):
        yield
