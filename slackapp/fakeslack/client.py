"""Sending requests to the app the way Slack does: signed with the v0 scheme, timed."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlencode

import requests

from slackapp.fakeslack.models import JSON

SLACK_USER_AGENT = "Slackbot 1.0 (+https://api.slack.com/robots)"


def made_response(status: int, body: bytes = b"", reason: str | None = None) -> requests.Response:
    """An answer made here rather than received over HTTP, read as a received one is: its
    body comes through ``raw``, the file-like object requests reads ``content`` from."""
    response = requests.Response()
    response.status_code = status
    if reason is not None:
        response.reason = reason
    response.raw = io.BytesIO(body)
    return response


def signature(signing_secret: str, timestamp: str, body: str) -> str:
    """Slack's ``X-Slack-Signature``: ``v0=`` + hex HMAC-SHA256 of ``v0:{timestamp}:{body}``."""
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(signing_secret.encode(), base, hashlib.sha256).hexdigest()


def signed_headers(signing_secret: str, body: str, timestamp: int | None = None) -> dict[str, str]:
    """The two headers that let the app verify a request came from Slack."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    return {
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signature(signing_secret, stamp, body),
    }


@dataclass(frozen=True)
class SignedRequest:
    """A request to the app, signed and ready to send: at once, later, or more than once."""

    body: str
    headers: dict[str, str]


class Delivery(Protocol):
    """How what people do reaches the app: signed HTTP requests (AppClient), or Socket Mode."""

    def post_form(
        self, fields: Mapping[str, str], headers: Mapping[str, str] | None = None
    ) -> requests.Response:
        """A slash command (its form fields) or an interaction (``payload``); the app's ack."""
        ...

    def post_json(
        self, payload: JSON, headers: Mapping[str, str] | None = None
    ) -> requests.Response:
        """An Events API callback; the app's ack."""
        ...


class AppClient:
    """Posts signed requests to the app's request URL and times each acknowledgement."""

    def __init__(self, signing_secret: str, app_url: str, timeout: float = 10.0) -> None:
        self.signing_secret = signing_secret
        self.app_url = app_url
        self.timeout = timeout
        self.kept: list[SignedRequest] | None = None
        """While a list, requests are signed and kept here instead of being sent."""
        self._lock = threading.Lock()
        self._latencies: list[float] = []

    @property
    def ack_latencies(self) -> list[float]:
        """Seconds from sending to the app's answer, one per request, oldest first."""
        with self._lock:
            return list(self._latencies)

    def post_form(
        self,
        fields: Mapping[str, str],
        headers: Mapping[str, str] | None = None,
        timestamp: int | None = None,
    ) -> requests.Response:
        """Post form fields, as Slack sends slash commands and interactions."""
        return self.post(urlencode(fields), "application/x-www-form-urlencoded", headers, timestamp)

    def post_json(
        self,
        payload: JSON,
        headers: Mapping[str, str] | None = None,
        timestamp: int | None = None,
    ) -> requests.Response:
        """Post a JSON document, as Slack delivers Events API callbacks."""
        return self.post(json.dumps(payload), "application/json", headers, timestamp)

    def post(
        self,
        body: str,
        content_type: str,
        headers: Mapping[str, str] | None = None,
        timestamp: int | None = None,
    ) -> requests.Response:
        """Sign ``body`` and post it; ``headers`` (e.g. X-Slack-Retry-Num) win over defaults.

        ``timestamp`` lets a test send a stale request the app must refuse.
        """
        all_headers = {
            "Content-Type": content_type,
            "User-Agent": SLACK_USER_AGENT,
            **signed_headers(self.signing_secret, body, timestamp),
            **(headers or {}),
        }
        if self.kept is not None:
            self.kept.append(SignedRequest(body, all_headers))
            return made_response(200)  # as if acknowledged with an empty body
        return self.send(SignedRequest(body, all_headers))

    def send(
        self,
        request: SignedRequest,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> requests.Response:
        """Post a signed request (to ``url``, or the app's request URL), timing the answer."""
        started = time.perf_counter()
        response = requests.post(
            url or self.app_url,
            data=request.body.encode(),
            headers={**request.headers, **(headers or {})},
            timeout=self.timeout,
        )
        with self._lock:
            self._latencies.append(time.perf_counter() - started)
        return response
