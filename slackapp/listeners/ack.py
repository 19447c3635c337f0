"""The one way every listener answers Slack: acknowledge at once, then do the work on a step
thread, then answer the person privately with what the step said.

Bolt's lazy listeners deep-copy the whole request for every one they start, and that copy was
the largest part of an acknowledgement; the work needs nothing the listener does not already
hold, so the listener acknowledges and hands those same objects to the app's listener executor
itself: the same threads a lazy listener would run on, without the copy. Commands, clicks
and events all go this way, but two kinds done within their acknowledgement (``within_ack``):
a modal's submission, checked and stored so that a wrong entry keeps the modal open, and a
``/varulv`` opening a table, whose step is short and commits first, its answer in the
acknowledgement.

With an inbox (other commands, and clicks), the request is written down before the
acknowledgement and its work carries that row (``slackapp.inbox``): should this process die
before the step commits, another carries it out. A request the inbox cannot write is not
promised: the person is told the database cannot be reached, and nothing runs.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from slack_bolt import Ack, App
from slack_bolt.context.respond import Respond
from slack_bolt.kwargs_injection.args import Args
from slack_bolt.request import BoltRequest
from slack_sdk.errors import SlackApiError, SlackClientError
from sqlalchemy.exc import SQLAlchemyError

from slackapp.blocks.screen import Screen
from slackapp.blocks.words import ENGLISH, N_, Words
from slackapp.delivery.slack import answer_client
from slackapp.inbox import REPLAYED, AlreadyCarriedOut, Inbox

log = logging.getLogger(__name__)

Listener = Callable[..., Any]
"""A function Bolt calls with the arguments its parameters name (``ack``, ``body``, …)."""

UNAVAILABLE = (
    "Varulv can't reach its database right now, so nothing changed. Try again in a moment."
)
"""In English in every channel: a channel's language is one of its settings, kept in the very
database that could not be reached."""
SLACK_UNAVAILABLE = N_(
    "Slack didn't take that from Varulv just now, so it may not have gone through. "
    "Try again in a moment."
)
BROKEN = N_("Something went wrong in Varulv, so that may not have gone through. Try again.")
Spoken = Callable[[], Words]
"""How a listener learns the words of the table or channel it acts on (a database read)."""


@dataclass(frozen=True)
class Reply:
    """A private answer to the person who acted (None when the screens say it all)."""

    text: str | None = None
    blocks: list[dict[str, Any]] | None = None
    replace_original: bool = False
    """Replace the private message whose button was pressed, instead of adding one."""

    @classmethod
    def shown(cls, screen: Screen | str) -> Reply:
        """A screen, or a line, as the person's private answer."""
        if isinstance(screen, str):
            return cls(screen)
        return cls(screen.text, screen.as_dicts())


def just_ack(ack: Ack) -> None:
    ack()


def acknowledge_then(
    app: App,
    work: Listener,
    acknowledge: Listener = just_ack,
    lanes: Lanes | None = None,
    inbox: Inbox | None = None,
) -> Callable[[Args], None]:
    """A listener that runs ``acknowledge`` now and ``work`` on a step thread, each called with
    the Bolt arguments its parameters name, as if ``work`` were a lazy listener; with
    ``lanes``, after the work of that request's lane ahead of it; with ``inbox``, the request
    written down before the acknowledgement, and its work carrying that row."""
    executor = app.listener_runner.listener_executor
    acknowledge_wants = list(inspect.signature(acknowledge).parameters)
    work_wants = list(inspect.signature(work).parameters)

    def run(given: dict[str, Any], row: int | None) -> None:
        try:
            if inbox is None or row is None:
                work(**given)
            else:
                with inbox.carrying(row):
                    work(**given)
        except AlreadyCarriedOut:  # another process did it first, and answered
            log.info("a request was carried out by another process")
        except Exception:  # nobody is waiting on this thread to hear of it
            log.exception("a listener's work failed")

    def listener(args: Args) -> None:
        row: int | None = None
        if inbox is not None:
            row = args.context.get(REPLAYED)  # a request taken over from a process gone
            if row is None:
                try:
                    row = inbox.record(args.request)
                except SQLAlchemyError:  # an outage is logged once (logs.DatabaseOutage)
                    log.exception("a request could not be written down")
                    unrecorded(args)
                    return
                if row is None:  # Slack's redelivery of a request already written down
                    args.ack()
                    return
        acknowledge(**{name: getattr(args, name) for name in acknowledge_wants})
        given = {name: getattr(args, name) for name in work_wants}
        lane = None if lanes is None else lanes.lane_of(args.body)
        if lanes is None or lane is None:
            executor.submit(run, given, row)
        else:
            aside = lanes.waits_on_slack(args.body)
            executor.submit(lanes.run, lane, functools.partial(run, given, row), aside)

    return listener


def within_ack(acknowledge: Listener) -> Callable[[Args], None]:
    """A listener whose whole work is its acknowledgement, called with the Bolt arguments its
    parameters name: a modal's submission, checked and stored while Slack waits, so that a
    wrong entry keeps the modal open (what it tells a channel goes through the outbox); a
    ``/varulv`` that opens a table or only reads, answered in its acknowledgement."""
    wants = list(inspect.signature(acknowledge).parameters)

    def listener(args: Args) -> None:
        acknowledge(**{name: getattr(args, name) for name in wants})

    return listener


def unrecorded(args: Args) -> None:
    """Acknowledge a request that could not be written down without promising it: a command's
    acknowledgement says so; a click's cannot (Slack shows nothing of it), so its answer does."""
    if isinstance(args.body.get("command"), str):
        args.ack(text=UNAVAILABLE)
        return
    args.ack()
    send(args.respond, Reply(UNAVAILABLE))


class Lanes:
    """One game's clicks run one after another on one step thread: while a click of a game is
    being stepped, the next click of that game waits here, in memory, and the step thread it
    came on is free at once for another game's click. Without this, a burst at a busy table
    had every step thread waiting on that one game's row lock, and a click at a quiet table
    waited behind them all.

    A click that waits on Slack's turns (``waits_on_slack``: a *Start*, opening its people's
    DMs at Slack's pace, for minutes when many tables start together) runs on a start thread
    instead, and holds its game's lane while it does: a *Join* then comes after the night has
    begun, never in the middle of it, and the step threads go on stepping other games. The
    clicks queued behind it go back to ``steps`` (the step threads) once it is done."""

    def __init__(
        self,
        lane_of: Callable[[dict[str, Any]], Hashable | None],
        waits_on_slack: Callable[[dict[str, Any]], bool] = lambda body: False,
        steps: Executor | None = None,
    ) -> None:
        self.lane_of = lane_of
        """The lane of a request, from its body (None: it waits for nothing)."""
        self.waits_on_slack = waits_on_slack
        """Whether a request, from its body, waits for Slack's turns (on a start thread)."""
        self.steps = steps
        """Where the clicks behind a start go on (None: on the start thread)."""
        self._lock = threading.Lock()
        self._waiting: dict[Hashable, deque[_Queued]] = {}

    def run(self, lane: Hashable, work: Callable[[], None], aside: bool = False) -> None:
        """Run ``work`` now, or, if this lane is busy, after what is ahead of it, on the thread
        that is running the lane; ``aside``: on a start thread, the lane held meanwhile."""
        queued = _Queued(work, aside)
        with self._lock:
            if lane in self._waiting:
                self._waiting[lane].append(queued)
                return
            self._waiting[lane] = deque()
        self._run_lane(lane, queued)

    def _run_lane(self, lane: Hashable, queued: _Queued, here: bool = False) -> None:
        """(This thread holds the lane.) ``queued``, then whatever queues behind it; the work
        that waits on Slack goes to a start thread, which goes on with the lane after it
        (``here``: it runs on this thread too, as it does once the app is stopping)."""
        while True:
            if queued.aside and not here:
                try:
                    STARTS.get().submit(self._run_aside, lane, queued.work)
                    return
                except RuntimeError:  # the start threads are stopping: it runs here
                    pass
            self._step(lane, queued.work)
            with self._lock:
                waiting = self._waiting[lane]
                if not waiting:
                    del self._waiting[lane]
                    return
                queued = waiting.popleft()

    def _run_aside(self, lane: Hashable, work: Callable[[], None]) -> None:
        """(A start thread, holding the lane.) ``work``, then the lane handed back."""
        self._step(lane, work)
        with self._lock:
            waiting = self._waiting[lane]
            if not waiting:
                del self._waiting[lane]
                return
            queued = waiting.popleft()
        if self.steps is not None:
            try:
                self.steps.submit(self._run_lane, lane, queued)
                return
            except RuntimeError:  # the step threads are stopping: the lane goes on here
                self._run_lane(lane, queued, here=True)
                return
        self._run_lane(lane, queued)

    def _step(self, lane: Hashable, work: Callable[[], None]) -> None:
        try:
            work()
        except Exception:  # the lane goes on for the clicks queued behind
            log.exception("a click's work failed (lane %s)", lane)
        except BaseException:  # this thread is ending: the clicks behind go on elsewhere
            self._hand_on(lane)
            raise

    def _hand_on(self, lane: Hashable) -> None:
        with self._lock:
            queued = self._waiting[lane]
            if not queued:
                del self._waiting[lane]
                return
            work = queued.popleft()
        threading.Thread(target=self._run_lane, args=(lane, work, True), name="varulv-lane").start()


@dataclass(frozen=True)
class _Queued:
    work: Callable[[], None]
    aside: bool
    """It waits on Slack's turns: run on a start thread."""


def _thread_pool(threads: int, name: str) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(threads, thread_name_prefix=name)


class LazyPool:
    """Threads started on first use. ``finish`` waits for all it was given (a stopping process
    carries out what it acknowledged); a later use starts fresh threads."""

    def __init__(self, threads: int, name: str) -> None:
        self.threads = threads
        self.name = name
        self.pool: ThreadPoolExecutor | None = None
        self.make: Callable[[int, str], ThreadPoolExecutor] = _thread_pool
        """Makes the threads (a test's may track them)."""
        self._lock = threading.Lock()

    def get(self) -> ThreadPoolExecutor:
        with self._lock:
            if self.pool is None:
                self.pool = self.make(self.threads, self.name)
            return self.pool

    def finish(self) -> None:
        with self._lock:
            pool, self.pool = self.pool, None
        if pool is not None:
            pool.shutdown(wait=True)


START_THREADS = 32
"""*Start*s waiting for Slack's turns (``slackapp.turns``) wait on threads of their own, asleep
nearly all the time: as many as let one workspace's lunchtime of *Start*s wait without another
workspace's *Start* waiting behind them."""
STARTS = LazyPool(START_THREADS, "varulv-start")
"""Finished once the step threads are done: what a start hands on then runs on its own
thread."""

ANSWER_THREADS = 32
"""Private answers wait on Slack, not on the database: they go out on threads of their own, so
a step thread is free for the next step as soon as its transaction is done."""
ANSWERS = LazyPool(ANSWER_THREADS, "varulv-answer")


def send(respond: Respond | None, reply: Reply) -> None:
    """Answer privately, on an answer thread, through the request's ``response_url`` (Bolt's
    ``respond`` gives it), tried again when Slack fails it for a moment
    (``slackapp.delivery.slack.answer_client``). An answer Slack won't take is logged: the
    step itself is done.

    An answer Slack applied but whose answer never came back (a 500 after it, a connection
    dropped on the way back) is sent again: one that replaces the message clicked shows the
    same thing again; one that adds a message may show it twice, which the person can read
    past, where an answer never shown leaves them wondering whether their click counted."""
    if not reply.text:
        return
    if respond is None or respond.response_url is None:
        log.warning("no response_url to answer with")
        return
    ANSWERS.get().submit(_answer, respond, respond.response_url, reply.text, reply)


def _answer(respond: Respond, response_url: str, text: str, reply: Reply) -> None:
    try:
        answer = answer_client(response_url, respond.proxy, respond.ssl).send(
            text=text,
            blocks=reply.blocks,
            response_type="ephemeral",
            replace_original=reply.replace_original,
        )
    except (SlackClientError, OSError, ValueError) as error:
        log.warning("could not answer privately: %s", error)
        return
    if answer.status_code != 200:
        said = answer.body[:200]  # Slack's reason ("used_url"), or a gateway's page
        log.warning("could not answer privately: Slack answered %s %s", answer.status_code, said)


def run_step(
    respond: Respond | None,
    step: Callable[[], str | Reply | None],
    spoken: Spoken | None = None,
) -> None:
    """Run one game step and answer privately with :func:`outcome`."""
    send(respond, outcome(step, spoken))


def outcome(step: Callable[[], str | Reply | None], spoken: Spoken | None = None) -> Reply:
    """Run one game step and return the private answer; a failed step has rolled back and
    says so, in the words ``spoken`` gives (English without it, or should that read fail
    too)."""
    try:
        said = step()
        return said if isinstance(said, Reply) else Reply(said)
    except AlreadyCarriedOut:
        raise  # the process that carried it out answered
    except SQLAlchemyError:
        log.exception("a game step failed in the database")
        return Reply(UNAVAILABLE)  # the language is not asked of a database that just failed
    except (SlackApiError, SlackClientError, OSError) as error:
        # Throttled beyond slack_sdk's retries, or Slack failing: the step rolled back.
        log.warning("a game step failed at Slack: %s", error)
        return Reply(words_of(spoken)._(SLACK_UNAVAILABLE))
    except Exception:
        log.exception("a game step failed")
        return Reply(words_of(spoken)._(BROKEN))


def acknowledge_with(ack: Ack, reply: Reply) -> None:
    """Acknowledge with ``reply`` as the private answer: for a command whose step committed
    before its acknowledgement, which then costs no call of its own."""
    if reply.text:
        ack(text=reply.text, blocks=reply.blocks)
    else:
        ack()


def words_of(spoken: Spoken | None) -> Words:
    """The words ``spoken`` reads, or English when there is none or it cannot be read: the
    answer that something failed must not fail itself."""
    if spoken is None:
        return ENGLISH
    try:
        return spoken()
    except Exception:
        log.warning("the language of a failed step's answer could not be read", exc_info=True)
        return ENGLISH


def header(request: BoltRequest, name: str) -> str:
    """The request's first ``name`` header ("" when absent); Bolt keeps each as a list."""
    values = request.headers.get(name.lower()) or [""]
    return str(values[0]).strip()


def is_retry(request: BoltRequest) -> bool:
    """Slack is delivering this request again (``X-Slack-Retry-Num`` of 1 or more): the first
    delivery may have been handled already, even if its answer never reached Slack. Socket
    Mode's first delivery says ``retry_attempt: 0``, which Bolt passes on as "0": not a retry."""
    number = header(request, "x-slack-retry-num")
    return number.isdigit() and int(number) > 0
