"""The Bolt app: one Web API client, the game steps, the timers, the listeners."""

from __future__ import annotations

from dataclasses import dataclass

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from slackapp.config import Settings
from slackapp.db.engine import make_engine, make_sessions
from slackapp.flow.table import Lengths, Table
from slackapp.listeners import register
from slackapp.timers import Deadlines


@dataclass
class Varulv:
    app: App
    table: Table
    deadlines: Deadlines


def web_client(settings: Settings) -> WebClient:
    client = WebClient(token=settings.bot_token, base_url=settings.api_url)
    # Slack's 429 answers carry Retry-After; slack_sdk waits that long and tries again.
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=3))
    return client


def build(settings: Settings, database_url: str) -> Varulv:
    """Wire everything; the caller starts the timers (``deadlines.start()``) once serving."""
    client = web_client(settings)
    lengths = Lengths(settings.night_seconds, settings.day_seconds, settings.vote_seconds)
    table = Table(sessions=make_sessions(make_engine(database_url)), client=client, lengths=lengths)
    deadlines = Deadlines(table)
    table.alarm = deadlines
    app = App(
        token=settings.bot_token,
        signing_secret=settings.signing_secret,
        client=client,
        # Acknowledge as soon as ack() returns; the work runs in lazy listeners after it.
        process_before_response=True,
    )
    register(app, table)
    return Varulv(app=app, table=table, deadlines=deadlines)
