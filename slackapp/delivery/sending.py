"""One call to Slack for a message, and what its outcome means.

A post (the person's DM opened first, for a private word), a redraw (through the click's own
``response_url``, else ``chat.update``), or a second copy deleted (``delivery.copies``); each
waits for its turn at Slack's rate limit (``delivery.pacing``), or is put off in the outbox when
the turn is further off; a failure is retried later, given up, or told to the step machine
(``delivery.policy``); a redraw whose outcome is unknown leaves its message unsure
(``delivery.plan``). What Slack took comes back as a ``Landing``, for the drain to record.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial

from slack_sdk import WebClient
from sqlalchemy.orm import Session, sessionmaker

from slackapp import metrics
from slackapp.delivery import outbox, plan, slack
from slackapp.delivery.copies import dropped_ts
from slackapp.delivery.landings import DONE, UNSURE, Landing
from slackapp.delivery.pacing import Pacer, Turn
from slackapp.delivery.policy import GiveUp, after_failure
from slackapp.delivery.slack import (
    Failure,
    Redrawn,
    classify,
    outcome_unknown,
    redraw_in_place,
)
from slackapp.game import machine as m

log = logging.getLogger(__name__)

LEFT_FOR_LAST_WORDS = 40
"""A redraw that the game will redraw again (a board's count of who confirmed or voted) takes
a turn at ``chat.update``'s limit only while this many calls of the workspace's burst (all but
one of it at most) stay free, for the redraws that end a phase (dawn, the vote closed, a
person's night at dawn): with many tables at once, those are what people wait for."""
SLEEP_AT_MOST_SECONDS = 1.0
"""A call whose turn (see slackapp.delivery.pacing) is nearer waits for it; a later one is put
off in the outbox with its turn kept, so no call thread sleeps long."""

Report = Callable[[int, m.Event], None]
"""Tell the step machine that Slack refused something for good: (the stream, the event). A
game's stream is its id; a notice's is no game's, and only what concerns its channel follows
(a standing table paused, and whoever made the change it told of told privately)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


class Sender:
    """Makes one call at a time on the thread that asks (a deliverer's call threads); safe to
    share between them. ``stopped``: set when the process stops, after which a failure is
    left as it is for whoever delivers next."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        report: Report,
        now: Callable[[], datetime],
        pacer: Pacer,
        stopped: threading.Event,
    ) -> None:
        self.sessions = sessions
        self.report = report
        self.now = now
        self.pacer = pacer
        self._stopped = stopped
        self._lock = threading.Lock()
        self._turns: dict[tuple[int, str], float] = {}
        """Messages put off until their turn: the ``time.monotonic()`` it comes."""

    def deliver(
        self, stream: int, team_id: str, client: WebClient, send: plan.Send
    ) -> Landing | None:
        """Send; what Slack took, if it did."""
        newest, pending = send.entry, send.pending
        started = self.now()
        dropped = dropped_ts(pending.surface)
        if dropped is not None:  # a second copy of a message goes (see slackapp.delivery.copies)
            return self._drop(stream, team_id, client, pending, newest, dropped, started)
        try:
            if isinstance(send, plan.Post):
                channel = newest.channel
                if channel is None:  # a private word: open the DM first
                    opened = client.conversations_open(users=newest.user_id)
                    channel = str(opened["channel"]["id"])
                if self._put_off(stream, pending, lambda: Turn(self.pacer.post(str(channel)))):
                    return None
                posted = client.chat_postMessage(
                    channel=channel, text=newest.text, blocks=newest.sent_blocks
                )
                first: tuple[str, str] | None = (str(posted["channel"]), str(posted["ts"]))
                method = "chat.postMessage"
            elif (url := pending.answer_at(send.shown.ts)) and self._redrawn_in_place(
                stream, pending, url, started
            ):
                first, method = None, "response_url"  # the click's answer: no chat.update
            else:
                turn = partial(self._update_turn, team_id, pending, url is not None)
                if self._put_off(stream, pending, turn):
                    return None
                client.chat_update(
                    channel=send.shown.channel,
                    ts=send.shown.ts,
                    text=newest.text,
                    blocks=newest.sent_blocks,
                )
                first, method = None, "chat.update"
        except Exception as error:
            self._failed(stream, pending, error, started)
            return None
        metrics.delivered(method, pending.entries[0].due_at, utc_now())
        return Landing(stream, pending.surface, newest.version, started, first)

    def _redrawn_in_place(
        self, stream: int, pending: plan.Pending, url: str, started: datetime
    ) -> bool:
        """Whether the click's ``response_url`` took the redraw; one that may still land
        later leaves the message unsure (``chat.update`` then goes at once all the same)."""
        newest = pending.newest
        redrawn = redraw_in_place(url, newest.text, newest.sent_blocks)
        if redrawn is Redrawn.UNKNOWN:
            self.unsure(stream, pending.surface, started)
        return redrawn is Redrawn.TOOK

    def _drop(
        self,
        stream: int,
        team_id: str,
        client: WebClient,
        pending: plan.Pending,
        newest: plan.Entry,
        ts: str,
        started: datetime,
    ) -> Landing | None:
        if self._put_off(stream, pending, lambda: Turn(self.pacer.update(team_id))):
            return None
        try:
            client.chat_delete(channel=str(newest.channel), ts=ts)
        except Exception as error:
            failure, code, _ = classify(error)
            if failure is Failure.TRANSIENT:
                self._failed(stream, pending, error, started)  # retried, as any message is
            else:  # gone already, or out of reach: nothing else hangs on it
                log.info("a second copy of a message was not deleted: %s", code)
                self.done(stream, pending.surface, newest.version, code)
            return None
        return Landing(stream, pending.surface, newest.version, started)

    def _update_turn(self, team_id: str, pending: plan.Pending, clicked: bool) -> Turn:
        """A person's own view after their click is redrawn through the click's response_url;
        if Slack refused that, it takes the next turn, however far off, as a message's last
        word does (no later step changes it, so the turn is never spent in vain). A redraw
        that will itself be redrawn takes one only while ``LEFT_FOR_LAST_WORDS`` of the burst
        stay free: when the budget is short it waits without one, and is redrawn at its newest
        version once one is free."""
        if clicked or pending.newest.settles:
            return Turn(self.pacer.update(team_id))
        return self.pacer.update_sparing(team_id, LEFT_FOR_LAST_WORDS)

    def _put_off(self, stream: int, pending: plan.Pending, turn: Callable[[], Turn]) -> bool:
        """Wait for the message's turn at Slack's rate limit, or, when it is further off, put
        the message off until then (True); one that got no turn is put off without one."""
        key = (stream, pending.surface)
        with self._lock:
            kept = self._turns.pop(key, None)
        now = time.monotonic()
        given = turn() if kept is None else Turn(kept - now)
        wait = given.wait
        metrics.waited_for_turn(_turn_method(pending), wait)
        if not given.taken:
            version, attempts = pending.newest.version, pending.attempts
            self._retry_later(stream, pending.surface, version, attempts, wait)
            return True
        if wait <= SLEEP_AT_MOST_SECONDS:
            if wait > 0:
                time.sleep(wait)
            return False
        with self._lock:
            if len(self._turns) > 10_000:  # those superseded or given up meanwhile
                self._turns = {k: at for k, at in self._turns.items() if at > now}
            self._turns[key] = now + wait
        self._retry_later(stream, pending.surface, pending.newest.version, pending.attempts, wait)
        return True

    # -- failures -----------------------------------------------------------------------------

    def _failed(
        self, stream: int, pending: plan.Pending, error: Exception, started: datetime
    ) -> None:
        if pending.shown is not None and outcome_unknown(error):
            self.unsure(stream, pending.surface, started)  # even when stopping: it may land
        if self._stopped.is_set():
            return  # as it is, for whoever delivers next
        failure, code, retry_after = classify(error)
        metrics.slack_refused(_method_of(error, pending), code)
        surface, version = pending.surface, pending.newest.version
        then = after_failure(failure, code, retry_after, pending.attempts, surface)
        if not isinstance(then, GiveUp):
            log.warning("Slack did not take a message (%s); retrying in %.1f s", code, then.delay)
            self._retry_later(stream, surface, version, then.attempts, then.delay)
            return
        self.done(stream, surface, version, code)
        if then.whole_channel:
            log.warning("the channel cannot be written to: %s", code)
            self._give_up_channel(stream, pending.newest.channel, code)
        elif isinstance(then.report, m.DmFailed):
            log.warning("a person's private message failed for good: %s", code)
        elif failure is Failure.TRANSIENT:
            log.error("Slack kept failing (%s); a message is given up", code)
        elif failure is Failure.UNWRITABLE:
            log.warning("a private word to a person could not be sent: %s", code)
        elif failure is Failure.GONE:
            log.info("a message to redraw is gone (%s): left as it is", code)
        else:
            log.error("Slack refused a message: %s", code)
        if then.report is not None:
            self.report(stream, then.report)

    # -- recording ------------------------------------------------------------------------------

    def done(self, stream: int, surface: str, version: int, failure: str | None = None) -> None:
        """Every undelivered version up to ``version`` is done: with ``failure``, or else the
        older ones superseded."""
        with self.sessions() as session, session.begin():
            session.connection().execute(
                DONE, [{"of_stream": stream, "s": surface, "v": version, "f": failure}]
            )

    def unsure(self, stream: int, surface: str, started: datetime) -> None:
        """A redraw that began at ``started`` may still be applied by Slack, over anything
        sent since, until ``LATE_LANDING_SECONDS`` after: until then no landing makes the
        message known, and then its newest version is sent again (``delivery.plan``)."""
        until = started + timedelta(seconds=slack.LATE_LANDING_SECONDS)
        with self.sessions() as session, session.begin():
            session.connection().execute(
                UNSURE, {"of_stream": stream, "s": surface, "until": until}
            )

    def put_off(
        self, stream: int, surface: str, version: int, attempts: int, due: datetime
    ) -> None:
        """The message's undelivered versions up to ``version`` wait until ``due``."""
        with self.sessions() as session, session.begin():
            outbox.retry_later(session.connection(), stream, surface, version, attempts, due)

    def _retry_later(
        self, stream: int, surface: str, version: int, attempts: int, delay: float
    ) -> None:
        self.put_off(stream, surface, version, attempts, self.now() + timedelta(seconds=delay))

    def _give_up_channel(self, stream: int, channel: str | None, code: str) -> None:
        """Every undelivered message of the stream to that channel is given up with it."""
        with self.sessions() as session, session.begin():
            outbox.give_up(session.connection(), stream, code, channel=channel)

    def give_up_all(self, stream: int, code: str) -> None:
        with self.sessions() as session, session.begin():
            outbox.give_up(session.connection(), stream, code, whole_stream=True)


def _turn_method(pending: plan.Pending) -> str:
    if dropped_ts(pending.surface) is not None:
        return "chat.delete"
    return "chat.postMessage" if pending.shown is None else "chat.update"


def _method_of(error: Exception, pending: plan.Pending) -> str:
    """The method Slack refused, as slack_sdk's error names it where it can."""
    response = getattr(error, "response", None)
    url = str(getattr(response, "api_url", "") or "")
    return url.rstrip("/").rsplit("/", 1)[-1] or _turn_method(pending)
