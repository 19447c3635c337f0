"""The short-lived and secret things Slack hands out and later checks.

Tokens, OAuth codes, trigger_ids and response_urls all follow Slack's rules
(revocation, one-time codes, single-use 3-second triggers, five uses per response_url)
so the app meets the same failures it would in production.
"""

from __future__ import annotations

import itertools
import math
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

RESPONSE_URL_USES = 5
RESPONSE_URL_TTL = 30 * 60.0


@dataclass
class ResponseHook:
    """Where a response_url posts: a user's view of one conversation, maybe one message."""

    hook_id: str
    user_id: str
    channel: str
    message_ts: str | None
    expires_at: float
    uses_left: int = RESPONSE_URL_USES


class HookError(Exception):
    """A response_url Slack would refuse; the message is Slack's error text."""


class Grants:
    """Issues and checks credentials; thread-safe."""

    def __init__(
        self,
        tokens: Iterable[str],
        *,
        client_id: str,
        client_secret: str,
        trigger_ttl: float = 3.0,
        token_lifetime: int | None = None,
    ) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.trigger_ttl = trigger_ttl
        self.token_lifetime = token_lifetime
        """Seconds a minted bot token lives when the app has token rotation on (Slack's are
        12 hours); None: forever, rotation off."""
        self.clock: Callable[[], float] = time.time
        """The time tokens expire by: a test may move it on rather than wait."""
        self._lock = threading.Lock()
        self._serial = itertools.count(1)
        self._tokens = set(tokens)
        self._revoked: set[str] = set()
        self._triggers: dict[str, tuple[str, float]] = {}
        self._exchanged: set[str] = set()
        self._hooks: dict[str, ResponseHook] = {}
        self._codes: dict[str, str] = {}
        self._expiry: dict[str, float] = {}
        self._refresh_tokens: dict[str, str] = {}
        """Each unused refresh token's team id."""

    # -- tokens ------------------------------------------------------------------

    def token_error(self, token: str | None) -> str | None:
        """The error Slack gives for ``token``, or None when it is good."""
        with self._lock:
            if not token:
                return "not_authed"
            if token in self._revoked:
                return "token_revoked"
            if token not in self._tokens:
                return "invalid_auth"
            return "token_expired" if self.clock() >= self._expiry.get(token, math.inf) else None

    def add_token(self, token: str) -> None:
        """Accept ``token`` from now on."""
        with self._lock:
            self._tokens.add(token)

    def revoke(self, token: str | None = None) -> None:
        """Revoke one token, or every token (as uninstalling the app does)."""
        with self._lock:
            gone = {token} if token else set(self._tokens)
            self._revoked |= gone
            self._tokens -= gone
            if token is None:
                self._refresh_tokens.clear()

    def mint_bot_token(self, team_id: str) -> str:
        """A new, accepted bot token shaped like Slack's (an expiring one with rotation on)."""
        token = f"xoxb-{team_id}-{next(self._serial)}-{secrets.token_hex(12)}"
        if self.token_lifetime is None:
            self.add_token(token)
            return token
        token = f"xoxe.{token}"
        with self._lock:
            self._tokens.add(token)
            self._expiry[token] = self.clock() + self.token_lifetime
        return token

    def mint_refresh_token(self, team_id: str) -> str:
        """A new refresh token for ``team_id``'s bot, good for one refresh."""
        token = f"xoxe-1-{next(self._serial)}-{secrets.token_hex(16)}"
        with self._lock:
            self._refresh_tokens[token] = team_id
        return token

    def redeem_refresh_token(self, token: str) -> str | None:
        """The team a refresh token was issued for, once: Slack revokes a refresh token when it
        is used, and the answer carries the next one. None for unknown or used tokens."""
        with self._lock:
            return self._refresh_tokens.pop(token, None)

    # -- trigger ids ---------------------------------------------------------------

    def issue_trigger(self, user_id: str) -> str:
        """A trigger_id for a modal opened in reply to ``user_id``'s interaction."""
        trigger_id = f"{next(self._serial)}.{int(time.time())}.{secrets.token_hex(16)}"
        with self._lock:
            self._triggers[trigger_id] = (user_id, time.monotonic() + self.trigger_ttl)
        return trigger_id

    def redeem_trigger(self, trigger_id: str) -> str:
        """The user a trigger_id was issued for, once; ValueError with Slack's error otherwise."""
        with self._lock:
            if trigger_id in self._exchanged:
                raise ValueError("exchanged_trigger_id")
            user_id, expires_at = self._triggers.get(trigger_id, ("", 0.0))
            if not user_id:
                raise ValueError("invalid_trigger_id")
            if time.monotonic() > expires_at:
                raise ValueError("expired_trigger_id")
            del self._triggers[trigger_id]
            self._exchanged.add(trigger_id)
        return user_id

    # -- response urls -------------------------------------------------------------

    def issue_hook(self, user_id: str, channel: str, message_ts: str | None) -> str:
        """A new response_url id for an interaction by ``user_id`` in ``channel``."""
        hook_id = f"{next(self._serial)}-{secrets.token_hex(8)}"
        hook = ResponseHook(hook_id, user_id, channel, message_ts, time.time() + RESPONSE_URL_TTL)
        with self._lock:
            self._hooks[hook_id] = hook
        return hook_id

    def use_hook(self, hook_id: str) -> ResponseHook:
        """Spend one use of a response_url; HookError says why Slack would refuse it."""
        with self._lock:
            hook = self._hooks.get(hook_id)
            if hook is None:
                raise HookError("no_active_hooks")
            if time.time() > hook.expires_at:
                raise HookError("expired_url")
            if hook.uses_left <= 0:
                raise HookError("used_url")
            hook.uses_left -= 1
            return hook

    def issued(self, hook_id: str) -> bool:
        """Whether ``hook_id`` names a response_url this Slack gave out."""
        with self._lock:
            return hook_id in self._hooks

    def hook(self, hook_id: str) -> ResponseHook:
        """A response_url's target without spending a use (for acks, which are free)."""
        with self._lock:
            return self._hooks[hook_id]

    def attach_message(self, hook_id: str, ts: str) -> None:
        """Tie a slash command's response_url to the first message it produced.

        Slack lets a command's later responses replace only that message.
        """
        with self._lock:
            hook = self._hooks.get(hook_id)
            if hook is not None and hook.message_ts is None:
                hook.message_ts = ts

    # -- oauth ---------------------------------------------------------------------

    def issue_code(self, user_id: str) -> str:
        """A one-time OAuth code, as Slack appends to the redirect after approval."""
        code = f"{next(self._serial)}.{secrets.token_hex(10)}"
        with self._lock:
            self._codes[code] = user_id
        return code

    def redeem_code(self, code: str) -> str | None:
        """The installing user for ``code``, once; None for unknown or reused codes."""
        with self._lock:
            return self._codes.pop(code, None)

    def client_error(self, client_id: str | None, client_secret: str | None) -> str | None:
        """The error oauth.v2.access gives for these app credentials, or None."""
        if client_id != self.client_id:
            return "invalid_client_id"
        if client_secret != self.client_secret:
            return "bad_client_secret"
        return None
