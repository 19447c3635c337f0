"""Sending a step's private reply, and turning failures into a clear message."""

from __future__ import annotations

import logging
from collections.abc import Callable

from slack_bolt.context.respond import Respond
from sqlalchemy.exc import SQLAlchemyError

from slackapp.flow.table import Reply

log = logging.getLogger(__name__)

UNAVAILABLE = (
    "Varulv can't reach its database right now, so nothing changed. Try again in a moment."
)


def send(respond: Respond, reply: Reply) -> None:
    if reply.text:
        respond(
            text=reply.text,
            blocks=reply.blocks,
            response_type="ephemeral",
            replace_original=False,
        )


def run_step(respond: Respond, step: Callable[[], Reply]) -> None:
    """Run one game step and answer privately; a failed step has rolled back and says so."""
    try:
        reply = step()
    except SQLAlchemyError:
        log.exception("a game step failed in the database")
        reply = Reply(UNAVAILABLE)
    send(respond, reply)
