"""Slack misbehaving, for the tests: throttling, slowness, forced errors, people and channels
that refuse the bot, and revoked tokens.

Installed as one hook on the stand-in's Web API (``WebApi.hooks``), so the stand-in itself
carries none of it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Self

from slackapp.fakeslack import FakeSlack
from slackapp.fakeslack.webapi import Answerer, ApiAnswer, ApiRequest

REFUSED_BY_TARGET = {
    "conversations.open": "users",
    "chat.postMessage": "channel",
    "chat.postEphemeral": "channel",
    "chat.update": "channel",
    "chat.delete": "channel",
}
"""The methods an unreachable person or channel refuses, and the argument naming them."""


class Faults:
    """Answers queued to replace a method's next real ones, delays, and refused targets."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queued: dict[str, deque[ApiAnswer]] = {}
        self._latency: dict[str | None, float] = {}
        self._unreachable: dict[str, str] = {}

    def __call__(self, request: ApiRequest, answer: Answerer) -> ApiAnswer:
        if delay := self._delay(request.method):
            time.sleep(delay)  # a slow Slack is slow in real time, as the app's timeouts are
        with self._lock:
            queued = self._queued.get(request.method)
            if queued:
                return queued.popleft()
            target = request.params.get(REFUSED_BY_TARGET.get(request.method, ""))
            refusal = self._unreachable.get(str(target)) if target else None
        if refusal:
            return ApiAnswer({"ok": False, "error": refusal})
        return answer(request)

    def queue(self, method: str, answer: ApiAnswer, times: int) -> None:
        with self._lock:
            self._queued.setdefault(method, deque()).extend([answer] * times)

    def set_latency(self, seconds: float, method: str | None) -> None:
        with self._lock:
            self._latency[method] = seconds

    def set_unreachable(self, target: str, error: str) -> None:
        with self._lock:
            if error:
                self._unreachable[target] = error
            else:
                self._unreachable.pop(target, None)

    def _delay(self, method: str) -> float:
        with self._lock:
            return self._latency.get(method, self._latency.get(None, 0.0))


class CrashAfter:
    """Once a call of ``method`` that ``when`` picks has been answered by Slack, ``crash`` runs
    before the answer goes back: what Slack did is done, and the caller never learns of it."""

    def __init__(
        self, method: str, when: Callable[[ApiRequest], bool], crash: Callable[[], None]
    ) -> None:
        self.method = method
        self.when = when
        self.crash = crash
        self.crashed = threading.Event()

    def __call__(self, request: ApiRequest, answer: Answerer) -> ApiAnswer:
        answered = answer(request)
        if request.method == self.method and not self.crashed.is_set() and self.when(request):
            self.crash()
            self.crashed.set()
        return answered


_install_lock = threading.Lock()


def faults(fake: FakeSlack) -> Faults:
    """The faults installed on ``fake``'s Web API, installed on first use."""
    with _install_lock:
        for hook in fake.api.hooks:
            if isinstance(hook, Faults):
                return hook
        installed = Faults()
        fake.api.hooks.append(installed)
        return installed


def rate_limit(fake: FakeSlack, method: str, times: int = 1, retry_after: int = 1) -> None:
    """Answer the next ``times`` calls of ``method`` with HTTP 429 ``ratelimited``."""
    throttled = ApiAnswer(
        {"ok": False, "error": "ratelimited"}, 429, {"Retry-After": str(retry_after)}
    )
    faults(fake).queue(method, throttled, times)


def slow_down(fake: FakeSlack, seconds: float, method: str | None = None) -> None:
    """Answer every Web API call (or every call of ``method``, ``response_url`` included)
    ``seconds`` later, as a loaded Slack does; 0 answers at once again. For the benchmarks,
    which measure against real time: a test holds calls on events instead (``Held``, or a
    barrier hook), so it never waits on the clock."""
    faults(fake).set_latency(seconds, method)


def fail_next(fake: FakeSlack, method: str, error: str, times: int = 1) -> None:
    """Answer the next ``times`` calls of ``method`` with ``{"ok": false, "error": error}``."""
    faults(fake).queue(method, ApiAnswer({"ok": False, "error": error}), times)


def set_unreachable(fake: FakeSlack, target: str, error: str = "cannot_dm_bot") -> None:
    """A person who takes no DM (conversations.open and posts to them fail with ``error``), or,
    given a channel id, a channel the bot may no longer post to (``not_in_channel``,
    ``is_archived``); an empty ``error`` makes it reachable again."""
    faults(fake).set_unreachable(target, error)


def revoke_tokens(fake: FakeSlack, token: str | None = None) -> None:
    """Revoke one token, or all of them; later calls get ``token_revoked``."""
    fake.grants.revoke(token)


class Hook:
    """A hook on the stand-in's Web API while inside ``with``: ``__call__`` sees each call."""

    fake: FakeSlack

    def __enter__(self) -> Self:
        self.fake.api.hooks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.fake.api.hooks.remove(self)

    def __call__(self, request: ApiRequest, answer: Answerer) -> ApiAnswer:
        raise NotImplementedError


class AnswersFailing(Hook):
    """While inside, the first ``times`` private answers through a ``response_url`` that say
    ``saying`` get ``failure`` instead of reaching Slack: a 500, a 429 with ``Retry-After``, or
    the connection dropped with no answer (``ApiAnswer(..., hang_up=True)``). Slack applies
    none of them; the calls after them reach it as usual."""

    def __init__(self, fake: FakeSlack, saying: str, failure: ApiAnswer, times: int = 1) -> None:
        self.fake = fake
        self.saying = saying
        self.failure = failure
        self.left = times
        self._lock = threading.Lock()

    def __call__(self, request: ApiRequest, answer: Answerer) -> ApiAnswer:
        with self._lock:
            failed = (
                self.left > 0
                and request.method == "response_url"
                and self.saying in str(request.params.get("text"))
            )
            if failed:
                self.left -= 1
        return self.failure if failed else answer(request)


class LateLandings(Hook):
    """The first ``times`` redraws (``chat.update``, and posts to a click's ``response_url``
    that replace its message) in the conversations ``channels()`` names reach Slack, but their
    client sees the connection drop, as one that gave up after its timeout does; Slack applies
    them only when the test calls :meth:`land`, after whatever the app sent meanwhile."""

    def __init__(self, fake: FakeSlack, channels: Callable[[], set[str]], times: int) -> None:
        self.fake = fake
        self.channels = channels
        self.left = times
        self.held: list[ApiRequest] = []
        self._landing = False
        self._lock = threading.Lock()

    def __call__(self, request: ApiRequest, answer: Answerer) -> ApiAnswer:
        with self._lock:
            held = not self._landing and self.left > 0 and self._redraws(request)
            if held:
                self.left -= 1
                self.held.append(request)
        return ApiAnswer({}, hang_up=True) if held else answer(request)

    def _redraws(self, request: ApiRequest) -> bool:
        if request.method == "chat.update":
            return str(request.params.get("channel")) in self.channels()
        if request.method != "response_url" or request.params.get("replace_original") is not True:
            return False
        try:
            return self.fake.grants.hook(request.token or "").channel in self.channels()
        except KeyError:
            return False

    def land(self) -> int:
        """Slack applies the held redraws now, in the order they came; how many."""
        with self._lock:
            held, self.held = self.held, []
            self._landing = True
        try:
            for request in held:
                if request.method == "response_url":
                    self.fake.api.respond(request.token or "", request.params)
                else:
                    self.fake.api.handle(request)
        finally:
            with self._lock:
                self._landing = False
        return len(held)


def crash_after(
    fake: FakeSlack, method: str, when: Callable[[ApiRequest], bool], crash: Callable[[], None]
) -> threading.Event:
    """Run ``crash`` (kill the app) once Slack has answered the first call of ``method`` that
    ``when`` picks, before that answer reaches the caller; the event is set once it has."""
    hook = CrashAfter(method, when, crash)
    fake.api.hooks.append(hook)
    return hook.crashed
