"""The Web API clients: one per workspace, and what Slack's errors mean for a delivery; the
client of a person's private answer through a ``response_url``."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from ssl import SSLContext
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry import HttpRequest, HttpResponse, RetryHandler, RetryState
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.oauth.installation_store import InstallationStore
from slack_sdk.webhook import WebhookClient

from slackapp.authorize import Refresher

CALL_TIMEOUT_SECONDS = 10
LATE_LANDING_SECONDS = 30.0
"""How long after a call began Slack may still apply it, though the client gave up on it (at
``CALL_TIMEOUT_SECONDS``) or lost its connection: the client's timeout and the time a request
can spend inside Slack's own front end after that."""


class NotInstalled(Exception):
    """The workspace has no installation (never added, or uninstalled): no token to act with."""


@dataclass(frozen=True)
class WorkspaceId:
    """A workspace as its game stored it: its team id, and its Enterprise Grid organisation's
    id when it belongs to one (the installation is stored under both)."""

    team_id: str
    enterprise_id: str | None = None


ClientFor = Callable[[WorkspaceId], WebClient]
"""A workspace → a Web API client with that workspace's bot token."""


def web_client(token: str | None, api_url: str, wait_out_rate_limits: bool = True) -> WebClient:
    """``wait_out_rate_limits``: on a 429, sleep Retry-After and try again inside the call (for
    calls made while a person waits). Without it (the deliverer's), no call is tried again
    inside the client at all, not even after a dropped connection: the deliverer schedules its
    own retries, and must know of every call whose outcome is unknown (``outcome_unknown``)."""
    if not wait_out_rate_limits:
        return WebClient(
            token=token, base_url=api_url, timeout=CALL_TIMEOUT_SECONDS, retry_handlers=[]
        )
    client = WebClient(token=token, base_url=api_url, timeout=CALL_TIMEOUT_SECONDS)
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=3))
    return client


class Redrawn(Enum):
    """What became of a redraw through a click's ``response_url``."""

    TOOK = "took"
    REFUSED = "refused"
    """An expired or used-up URL: ``chat.update`` instead."""
    UNKNOWN = "unknown"
    """A timeout or a dropped connection: Slack may still apply it (``outcome_unknown``)."""


def redraw_in_place(response_url: str, text: str, blocks: list[dict[str, Any]] | None) -> Redrawn:
    """Redraw the message a click was on through the click's ``response_url``, which Slack
    does not count against ``chat.update``'s limit (a URL may be used five times in thirty
    minutes)."""
    try:
        answer = WebhookClient(response_url, timeout=CALL_TIMEOUT_SECONDS, retry_handlers=[]).send(
            text=text, blocks=blocks, replace_original=True
        )
    except Exception:  # unreachable, or a timeout: chat.update is the way that is left
        return Redrawn.UNKNOWN
    if answer.status_code == 200:
        return Redrawn.TOOK
    return Redrawn.UNKNOWN if answer.status_code >= 500 else Redrawn.REFUSED


ANSWER_RETRIES = 2
"""How often a private answer through a click's or command's ``response_url`` is tried again
(three tries in all) when Slack answers 500, 502 or 503, or 429, or the connection fails before an
answer: slack_sdk's retry handlers, as a person's Web API calls have them, after half a second
and then a second (each with up to a second more at random), or after ``Retry-After``."""
ANSWER_WAITS_AT_MOST_SECONDS = 5
"""The longest ``Retry-After`` a private answer waits out: told to wait longer, it is not
tried again, as the person has moved on by then."""


class BriefRateLimitRetryHandler(RateLimitErrorRetryHandler):
    """slack_sdk's retry of a call refused with 429, after its ``Retry-After``, but only when
    that is at most ``longest`` seconds (or absent: slack_sdk waits a second or two then)."""

    def __init__(self, max_retry_count: int, longest: float) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.longest = longest

    def can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or retry_after(response) > self.longest:
            return False
        return super().can_retry(state=state, request=request, response=response, error=error)


class BadGatewayRetryHandler(RetryHandler):
    """A retry after Slack's front end answered 502, which slack_sdk's server error handler
    leaves out: like a 500, the answer may not have reached Slack. A 504 is not tried again,
    as the answer may still be applied, like a try that timed out."""

    def can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return (
            state.current_attempt < self.max_retry_count
            and response is not None
            and response.status_code == 502
        )


def retry_after(response: HttpResponse) -> float:
    """Slack's ``Retry-After``, in seconds: 0 when there is none, infinity when it is no whole
    number (slack_sdk could not wait for it)."""
    for name, values in response.headers.items():
        if name.lower() == "retry-after":
            value = values[0] if isinstance(values, list) else values
            return float(value) if value.strip().isdigit() else math.inf
    return 0.0


def answer_retries() -> list[RetryHandler]:
    """The retries of a private answer: after a dropped connection, a 500, 502 or 503, or a 429
    with a short ``Retry-After``; ``ANSWER_RETRIES`` in all, whichever failed."""
    return [
        ConnectionErrorRetryHandler(max_retry_count=ANSWER_RETRIES),
        ServerErrorRetryHandler(max_retry_count=ANSWER_RETRIES),
        BadGatewayRetryHandler(max_retry_count=ANSWER_RETRIES),
        BriefRateLimitRetryHandler(ANSWER_RETRIES, ANSWER_WAITS_AT_MOST_SECONDS),
    ]


def answer_client(
    response_url: str, proxy: str | None = None, ssl: SSLContext | None = None
) -> WebhookClient:
    """The client of a private answer through a click's or command's ``response_url`` (Bolt's
    ``respond`` takes no retry handlers): tried again as ``answer_retries`` says, each try given
    ``CALL_TIMEOUT_SECONDS``. A try that timed out is not made again, as Slack may still apply
    it."""
    return WebhookClient(
        response_url,
        timeout=CALL_TIMEOUT_SECONDS,
        proxy=proxy,
        ssl=ssl,
        retry_handlers=answer_retries(),
    )


def outcome_unknown(error: Exception) -> bool:
    """Whether Slack may have applied a call that failed: it timed out or lost its connection
    (the request may have reached Slack), or Slack's front end answered 5xx (it may have passed
    the request on). An error Slack answered itself (``ok: false``) changed nothing."""
    if not isinstance(error, SlackApiError):
        return True
    return int(error.response.status_code) >= 500


class InstalledClients:
    """Each workspace's bot client, from its installation; looked up afresh for every use, so a
    reinstall's new token or an uninstall takes effect at once in every process. With
    ``refresher`` (token rotation on), a token that expires soon is refreshed first; one that
    expired with no way to refresh it is as good as no installation (it must be reinstalled)."""

    def __init__(
        self,
        store: InstallationStore,
        api_url: str,
        wait_out_rate_limits: bool = True,
        refresher: Refresher | None = None,
    ) -> None:
        self.store = store
        self.api_url = api_url
        self.wait_out_rate_limits = wait_out_rate_limits
        self.refresher = refresher

    def __call__(self, workspace: WorkspaceId) -> WebClient:
        bot = self.store.find_bot(enterprise_id=workspace.enterprise_id, team_id=workspace.team_id)
        if (bot is None or not bot.bot_token) and workspace.enterprise_id:
            # Installed on the whole organisation: one installation, stored without a team.
            bot = self.store.find_bot(
                enterprise_id=workspace.enterprise_id, team_id=None, is_enterprise_install=True
            )
        if bot is None or not bot.bot_token:
            raise NotInstalled(workspace.team_id)
        if self.refresher is not None:
            bot = self.refresher.fresh(bot)
            if self.refresher.dead(bot):
                raise NotInstalled(workspace.team_id)
        return web_client(bot.bot_token, self.api_url, self.wait_out_rate_limits)


class Failure(Enum):
    TRANSIENT = "transient"
    """Slack is throttling or failing just now: try again later."""
    UNWRITABLE = "unwritable"
    """The conversation refuses the bot for good (left, archived, deactivated person...)."""
    GONE = "gone"
    """The message to redraw no longer exists (someone deleted it)."""
    BROKEN = "broken"
    """Slack refused what was sent: retrying the same would fail the same way."""


TRANSIENT_ERRORS = frozenset(
    {
        "ratelimited",
        "rate_limited",
        "fatal_error",
        "internal_error",
        "service_unavailable",
        "request_timeout",
        "team_added_to_org",
        "token_expired",  # refreshed before the next try
    }
)
UNWRITABLE_ERRORS = frozenset(
    {
        "not_in_channel",
        "channel_not_found",
        "is_archived",
        "is_inactive",  # chat.update's word for an archived (or frozen, or deleted) channel
        "access_denied",
        "restricted_action",
        "restricted_action_read_only_channel",
        "restricted_action_thread_only_channel",
        "restricted_action_non_threadable_channel",
        "team_access_not_granted",
        "ekm_access_denied",
        "account_inactive",
        "user_not_found",
        "user_disabled",
        "cannot_dm_bot",
        "messages_tab_disabled",  # the app's Messages tab is off: it can DM no one
        "invalid_auth",
        "not_authed",
        "token_revoked",
        "missing_scope",
    }
)
GONE_ERRORS = frozenset({"message_not_found", "cant_update_message", "edit_window_closed"})


def classify(error: Exception) -> tuple[Failure, str, float | None]:
    """What a failed call means, Slack's error code, and Slack's Retry-After if it sent one."""
    if not isinstance(error, SlackApiError):
        return Failure.TRANSIENT, type(error).__name__, None  # a timeout, a refused connection
    code = str(error.response.get("error") or "unknown")
    status = error.response.status_code
    if status == 429 or code in TRANSIENT_ERRORS or status >= 500:
        headers = {key.lower(): value for key, value in (error.response.headers or {}).items()}
        raw = headers.get("retry-after")
        retry_after = None
        if isinstance(raw, list):
            raw = raw[0] if raw else None
        try:
            retry_after = float(raw) if raw is not None else None
        except ValueError:
            retry_after = None
        return Failure.TRANSIENT, code, retry_after
    if code in UNWRITABLE_ERRORS:
        return Failure.UNWRITABLE, code, None
    if code in GONE_ERRORS:
        return Failure.GONE, code, None
    return Failure.BROKEN, code, None
