"""Structured logs: one JSON object a line, carrying the workspace, channel and game it is about.

Listeners and timers open a :func:`log_context` with the ids they know; every line logged inside
it, by Varulv or by a library, carries them. Log lines hold ids and phases only: never a card, a
night choice or a ballot, so an operator's log cannot spoil a game that is still running.
"""

from __future__ import annotations

import json
import logging
import logging.config
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from slackapp.config import SettingsError, log_level_from_env

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
ID_FIELDS = ("team_id", "channel_id", "game_id", "user_id")
"""The ids a line may carry, from the context or from ``extra=``."""
EXTRA_FIELDS = ("phase", "previous_phase", "word", "event", "count")
"""Other ``extra=`` keys that are copied into the line; anything else stays out."""

_context: ContextVar[dict[str, str | int]] = ContextVar("varulv_log_context")


@contextmanager
def log_context(**ids: str | int | None) -> Iterator[None]:
    """Add ids to every line logged in this block (on this thread); ``None`` values are skipped."""
    known = {key: value for key, value in ids.items() if value is not None and value != ""}
    token = _context.set({**_context.get({}), **known})
    try:
        yield
    finally:
        _context.reset(token)


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", ids…, "error"?}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
        }
        entry.update(_context.get({}))
        for key in (*ID_FIELDS, *EXTRA_FIELDS):
            value = record.__dict__.get(key)
            if value is not None:
                entry[key] = value
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def logging_config(level: str | None = None) -> dict[str, Any]:
    """The ``dictConfig`` for the app and for uvicorn (``log_config``): JSON on stderr."""
    chosen = (level or log_level_from_env()).strip().upper()
    if chosen not in LEVELS:
        raise SettingsError(f"VARULV_LOG_LEVEL must be one of {', '.join(LEVELS)}, not {chosen!r}")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {
            "json": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"level": chosen, "handlers": ["json"]},
        "loggers": {
            # uvicorn's own lines go through the root handler, as JSON like the rest.
            "uvicorn": {"level": "INFO", "handlers": [], "propagate": True},
            "uvicorn.error": {"level": "INFO", "handlers": [], "propagate": True},
            # One line per Slack request is noise; the app logs what each request did.
            "uvicorn.access": {"level": "WARNING", "handlers": [], "propagate": False},
            "apscheduler": {"level": "WARNING"},
            # slack_sdk logs request bodies at DEBUG, and a night DM's body holds a card.
            "slack_sdk": {"level": "INFO"},
            # Its Web API client checks its own logger's level, not the effective one, and
            # left unset it would write that line (the whole body as text) for every call.
            "slack_sdk.web.base_client": {"level": "INFO"},
            "slack_bolt": {"level": "INFO"},
        },
    }


def configure_logging(level: str | None = None) -> None:
    logging.config.dictConfig(logging_config(level))
