"""Structured logs: one JSON object a line, carrying the workspace, channel and game it is about.

Listeners and timers open a :func:`log_context` with the ids they know; every line logged inside
it, by Varulv or by a library, carries them. Log lines hold ids and phases only: never a card, a
night choice or a ballot, so an operator's log cannot spoil a game that is still running.
"""

from __future__ import annotations

import json
import logging
import logging.config
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from slackapp.config import SettingsError, log_level_from_env

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
ID_FIELDS = ("team_id", "channel_id", "game_id", "stream", "user_id")
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
                "filters": ["database_outage"],
            }
        },
        # Named, not a callable: uvicorn's spawned workers get this configuration pickled.
        "filters": {"database_outage": {"()": "slackapp.logs.database_outage"}},
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
            # Its retries name the whole response_url at INFO, and that address lets anyone
            # post as Varulv in the channel for half an hour.
            "slack_sdk.webhook.client": {"level": "WARNING"},
            "slack_bolt": {"level": "INFO"},
        },
    }


def configure_logging(level: str | None = None) -> None:
    logging.config.dictConfig(logging_config(level))
    quiet_libraries()


# -- ERROR means a person was let down or data is at risk ---------------------------------------


class Lowered(logging.Filter):
    """A library's ERROR line about input Varulv already handles, as a WARNING (or dropped).

    ``lines`` maps a piece of the message to the app's own words for it, or to None to keep
    the library's; a line whose message has none of them, or has one of ``keep``, passes
    unchanged; one with a piece of ``drop`` is left out (the app logs its own line for it).
    """

    def __init__(
        self,
        lines: Mapping[str, str | None],
        drop: tuple[str, ...] = (),
        keep: tuple[str, ...] = (),
    ) -> None:
        super().__init__()
        self.lines = dict(lines)
        self.drop = drop
        self.keep = keep

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        message = record.getMessage()
        if any(piece in message for piece in self.keep):
            return True
        if any(piece in message for piece in self.drop):
            return False
        for piece, words in self.lines.items():
            if piece in message:
                record.levelno, record.levelname = logging.WARNING, "WARNING"
                if words is not None:
                    record.msg, record.args = f"{words} ({message})", None
                return True
        return True


class Untrue(logging.Filter):
    """A library's line, at any level, that says something untrue of Varulv: left out."""

    def __init__(self, *pieces: str) -> None:
        super().__init__()
        self.pieces = pieces

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(piece in message for piece in self.pieces)


NOT_INSTALLED_LINE = "the AuthorizeResult (returned value from authorize) for it was not found"
SEND_FAILED_LINE = "Failed to send a request to Slack API server"
SOCKET_MODE_LOGGER = "slack_sdk.socket_mode.builtin.client"
"""The Socket Mode client's logger (slackapp.server gives it this one by name)."""
LIBRARY_LINES: dict[str, logging.Filter] = {
    # Bolt reads SLACK_BOT_TOKEN itself and warns, at every start, that it goes unused beside
    # the client Varulv gives it; that client holds that very token.
    "slack_bolt.App": Untrue("As you gave `client` as well, `token` will be unused."),
    # A request from a workspace that removed Varulv or revoked its token: the person is told
    # how to add it again (app.not_installed_answer); nothing of Varulv's failed.
    "slack_bolt.MultiTeamsAuthorization": Lowered(
        {
            NOT_INSTALLED_LINE: "a request from a workspace where Varulv is not installed "
            "(removed, or its token revoked); answered with how to add it again"
        }
    ),
    # One workspace: Slack failing auth.test for a moment is checked again on the next request;
    # a token Slack refuses for good stays an ERROR, as nobody can play until it is replaced.
    "slack_bolt.SingleTeamAuthorization": Lowered(
        {
            "Failed to authorize with the given token": "Slack did not confirm the bot token "
            "just now; it is checked again on the next request"
        },
        keep=("invalid_auth", "token_revoked", "account_inactive", "not_authed", "token_expired"),
    ),
    # A forged command's response_url that is no web address: the app's own line ("could not
    # answer privately") says so, once; a connection that fails answering is tried again by the
    # answer's retry handlers first (slackapp.delivery.slack.answer_client).
    "slack_sdk.webhook.client": Lowered({SEND_FAILED_LINE: None}, drop=("Invalid URL detected",)),
    # Socket Mode: a connection cut off fails a check a second, and is made again after five
    # (slackapp.server); failing to connect again stays an ERROR.
    SOCKET_MODE_LOGGER: Lowered(
        {
            "Failed to check the state of sock": "the Socket Mode connection failed a check; "
            "it is made again after five"
        }
    ),
    # A timeout or a dropped connection is retried, by slack_sdk's retry handlers and then by
    # the deliverer; a call that fails for good is logged by the app with its game.
    "slack_sdk.web.base_client": Lowered(
        {
            SEND_FAILED_LINE: "a Slack API call did not reach Slack; it is retried where its "
            "retry handlers allow, and whoever made it logs it if it fails for good"
        },
        drop=("Invalid URL detected",),
    ),
}


def quiet_libraries() -> None:
    """Put the library filters on their loggers (idempotent): an alert on ERROR then fires for
    Varulv's own failures, not for a forged request or a retried timeout."""
    for name, quieter in LIBRARY_LINES.items():
        logger = logging.getLogger(name)
        if quieter not in logger.filters:
            logger.addFilter(quieter)


OUTAGE_STATES = ("08", "57P01", "57P02", "57P03", "53300")
"""SQLSTATEs of a database away: connection exceptions, a server shutting down or starting,
too many connections. A deadlock (40P01) or a serialization failure is an OperationalError
too, with the database there: that is no outage."""


def database_down(error: BaseException | None) -> bool:
    """Whether ``error`` (or what caused it) is the database being unreachable."""
    from psycopg import Error as PsycopgError
    from psycopg import OperationalError as PsycopgOperational
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    seen, down = 0, False
    while error is not None and seen < 10:
        if isinstance(error, PsycopgError) and error.sqlstate is not None:
            return error.sqlstate.startswith(OUTAGE_STATES)  # the server said what it was
        if isinstance(error, OperationalError | InterfaceError | PoolTimeout | PsycopgOperational):
            down = True
        if isinstance(error, DBAPIError):
            if error.connection_invalidated:
                return True
            error = error.orig  # the driver's own error, with the server's SQLSTATE if any
            seen += 1
            continue
        error = error.__cause__ or error.__context__
        seen += 1
    return down


class DatabaseOutage(logging.Filter):
    """While the database is unreachable, one ERROR line when it starts, one WARNING when it
    ends (:meth:`reachable`, on the engine's next new connection), and in between the
    failures it causes as INFO lines without their tracebacks, however many requests, steps
    and sweeps fail meanwhile. Each process says so for itself."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.clock = clock
        self._lock = threading.Lock()
        self.since: float | None = None
        self.failures = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR or not record.exc_info:
            return True
        if not database_down(record.exc_info[1]):
            return True
        error = record.exc_info[1]
        with self._lock:
            first = self.since is None
            if first:
                self.since = self.clock()
            self.failures += 1
        reason = _first_line(error)
        record.exc_info, record.exc_text = None, None
        if first:
            record.msg, record.args = (
                "the database is unreachable (%s); requests are answered that it is, and "
                "steps and deliveries wait for it (first: %s)",
                (reason, record.getMessage()),
            )
            return True
        record.levelno, record.levelname = logging.INFO, "INFO"
        record.msg, record.args = "still no database: %s (%s)", (record.getMessage(), reason)
        return True

    def reachable(self) -> None:
        """The database answered again: say so once, with how long and how much it cost."""
        with self._lock:
            since, failures = self.since, self.failures
            self.since, self.failures = None, 0
        if since is not None:
            logging.getLogger("slackapp.db").warning(
                "the database is reachable again after %.1f s; %d failures meanwhile",
                self.clock() - since,
                failures,
                extra={"count": failures},
            )


def _first_line(error: BaseException | None) -> str:
    lines = str(error).strip().splitlines() if error is not None else []
    return lines[0] if lines else type(error).__name__


DATABASE_OUTAGE = DatabaseOutage()
"""This process's: the handlers of :func:`logging_config` carry it, and every engine tells it
when a connection is made (slackapp.db.engine)."""


def database_outage() -> DatabaseOutage:
    """The process's :data:`DATABASE_OUTAGE`, for ``dictConfig``."""
    return DATABASE_OUTAGE
