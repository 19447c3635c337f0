"""Serving: Bolt over HTTP behind gunicorn (threads), or over Socket Mode."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from typing import Any

from gunicorn.app.base import BaseApplication
from slack_bolt.adapter.wsgi import SlackRequestHandler
from sqlalchemy import text

from slackapp.app import Varulv, build
from slackapp.config import Settings

log = logging.getLogger(__name__)

StartResponse = Callable[..., Any]
EVENTS_PATH = "/slack/events"


class Router:
    """``/slack/events`` to Bolt, ``/healthz`` for the platform, nothing else."""

    def __init__(self, varulv: Varulv) -> None:
        self.varulv = varulv
        self.slack = SlackRequestHandler(varulv.app)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == EVENTS_PATH:
            return self.slack(environ, start_response)
        if path == "/healthz":
            return self.health(start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found\n"]

    def health(self, start_response: StartResponse) -> Iterable[bytes]:
        try:
            with self.varulv.table.sessions() as session:
                session.execute(text("SELECT 1"))
        except Exception:
            log.exception("health check: database unreachable")
            start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"database unreachable\n"]
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok\n"]


class Gunicorn(BaseApplication):  # type: ignore[misc]
    """gunicorn in-process: each worker builds its own app and timers after the fork."""

    def __init__(self, factory: Callable[[], Router], options: dict[str, Any]) -> None:
        self.factory = factory
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Router:
        return self.factory()


def serve_http(settings: Settings, database_url: str) -> None:
    def factory() -> Router:
        varulv = build(settings, database_url)
        varulv.deadlines.start()
        return Router(varulv)

    options = {
        "bind": f"{os.environ.get('HOST', '0.0.0.0')}:{settings.port}",
        "workers": int(os.environ.get("WEB_CONCURRENCY", "1")),
        "worker_class": "gthread",
        "threads": int(os.environ.get("VARULV_THREADS", "8")),
        "timeout": 30,
        "graceful_timeout": 5,
        "accesslog": None,
    }
    log.info("Varulv listens for Slack at http://%s%s", options["bind"], EVENTS_PATH)
    Gunicorn(factory, options).run()


def serve_socket_mode(settings: Settings, database_url: str) -> None:
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    varulv = build(settings, database_url)
    varulv.deadlines.start()
    SocketModeHandler(varulv.app, settings.app_token).start()  # type: ignore[no-untyped-call]
