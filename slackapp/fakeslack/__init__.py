"""A local stand-in for Slack, for end-to-end tests and the browser sandbox.

FakeSlack serves the Web API the app calls (messages, DMs, views, OAuth,
response_urls) and plays the workspace's people: it sends the app signed slash
commands, clicks, modal submissions and events, and keeps what each person
would see.
"""

from slackapp.fakeslack.client import AppClient, SignedRequest, signature, signed_headers
from slackapp.fakeslack.fake import DEFAULT_APP_URL, FakeSlack
from slackapp.fakeslack.limits import SLACK, UNLIMITED, Limit, RateLimits
from slackapp.fakeslack.models import JSON, Button, Call, Identity, Message

__all__ = [
    "DEFAULT_APP_URL",
    "JSON",
    "SLACK",
    "UNLIMITED",
    "AppClient",
    "Button",
    "Call",
    "FakeSlack",
    "Identity",
    "Limit",
    "Message",
    "RateLimits",
    "SignedRequest",
    "signature",
    "signed_headers",
]
