"""The floor: a bare Bolt app that only acknowledges ``/varulv`` and every Varulv button.

Same Bolt, same signature check, same gunicorn worker class, workers and threads as ``varulv
serve``; no database, no game. Whatever the real app takes beyond this is the game's cost.

    SLACK_BOT_TOKEN=… SLACK_SIGNING_SECRET=… SLACK_API_URL=… PORT=… python -m benchmarks.floor
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from slack_bolt import Ack, App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient

from slackapp.asgi import Buffered, Worker
from slackapp.blocks import ids
from slackapp.server import MAX_BODY_BYTES, MAX_CONNECTIONS, Gunicorn

ACTIONS = ids.ALL_ACTIONS


def acknowledge(ack: Ack) -> None:
    ack()


def build() -> Buffered:
    env = os.environ
    client = WebClient(token=env["SLACK_BOT_TOKEN"], base_url=env["SLACK_API_URL"])
    app = App(
        token=env["SLACK_BOT_TOKEN"],
        signing_secret=env["SLACK_SIGNING_SECRET"],
        client=client,
        process_before_response=True,
    )
    app.command("/varulv")(acknowledge)
    for action in ACTIONS:
        app.action(ids.pattern(action))(acknowledge)
    slack = SlackRequestHandler(app)

    def route(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == "/healthz":
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok\n"]
        return slack(environ, start_response)

    return Buffered(route, int(env.get("VARULV_THREADS", "8")), MAX_BODY_BYTES, 10)


def main() -> None:
    env = os.environ
    options = {
        "bind": f"127.0.0.1:{env['PORT']}",
        "workers": int(env.get("WEB_CONCURRENCY", "1")),
        "worker_class": Worker,
        "worker_connections": MAX_CONNECTIONS,
        "asgi_lifespan": "off",
        "timeout": 30,
        "accesslog": None,
    }
    Gunicorn(build, options).run()


if __name__ == "__main__":
    main()
