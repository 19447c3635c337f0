"""Sending a step's private reply, and turning failures into a clear message."""

from __future__ import annotations

import logging
from collections.abc import Callable

from slack_bolt.context.respond import Respond
from slack_bolt.request import BoltRequest
from slack_sdk.errors import SlackApiError, SlackClientError
from sqlalchemy.exc import SQLAlchemyError

from slackapp.flow.table import Reply

log = logging.getLogger(__name__)

UNAVAILABLE = (
    "Varulv can't reach its database right now, so nothing changed. Try again in a moment."
)
SLACK_UNAVAILABLE = (
    "Slack didn't take that from Varulv just now, so it may not have gone through. "
    "Try again in a moment."
)
BROKEN = "Something went wrong in Varulv, so that may not have gone through. Try again."


def send(respond: Respond | None, reply: Reply) -> None:
    """Answer privately. An answer Slack won't take is logged: the step itself is done."""
    if not reply.text:
        return
    if respond is None:
        log.warning("no response_url to answer with")
        return
    try:
        respond(
            text=reply.text,
            blocks=reply.blocks,
            response_type="ephemeral",
            replace_original=False,
        )
    except (SlackClientError, OSError, ValueError) as error:
        log.warning("could not answer privately: %s", error)


def run_step(respond: Respond | None, step: Callable[[], Reply]) -> None:
    """Run one game step and answer privately; a failed step has rolled back and says so."""
    try:
        reply = step()
    except SQLAlchemyError:
        log.exception("a game step failed in the database")
        reply = Reply(UNAVAILABLE)
    except (SlackApiError, SlackClientError, OSError) as error:
        # Throttled beyond slack_sdk's retries, or Slack failing: the step rolled back.
        log.warning("a game step failed at Slack: %s", error)
        reply = Reply(SLACK_UNAVAILABLE)
    except Exception:
        log.exception("a game step failed")
        reply = Reply(BROKEN)
    send(respond, reply)


def is_retry(request: BoltRequest) -> bool:
    """Slack is delivering this request again (``X-Slack-Retry-Num``): the first delivery may
    have been handled already, even if its answer never reached Slack."""
    return bool(request.headers.get("x-slack-retry-num"))
