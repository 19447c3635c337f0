"""Modal submissions: the ``/varulv settings`` modal."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from sqlalchemy.exc import SQLAlchemyError

import slackapp.blocks.settings as settings_screen
from slackapp.db.channels import ChannelChoice, out_of_bounds, save_choice
from slackapp.listeners.ack import acknowledge_then
from slackapp.logs import log_context
from slackapp.shapes import slack_id
from slackapp.steps import Steps

log = logging.getLogger(__name__)

NO_CHANNEL = "This form doesn't say which channel it is for. Open it again with /varulv settings."


def read_choice(view: dict[str, Any]) -> tuple[ChannelChoice | None, dict[str, str]]:
    """The settings entered in the modal, or what to say next to each field that is wrong."""
    values = (view.get("state") or {}).get("values") or {}
    lengths: dict[str, int] = {}
    errors: dict[str, str] = {}
    for name in settings_screen.LENGTH_LABELS:
        raw = ((values.get(name) or {}).get(name) or {}).get("value")
        try:
            lengths[name] = int(str(raw).strip())
        except ValueError:
            errors[name] = "Type a whole number of seconds."
    errors.update(out_of_bounds(lengths))
    if errors:
        return None, errors
    picked = (values.get(settings_screen.BOTS_BLOCK) or {}).get(settings_screen.BOTS_ACTION) or {}
    bots = any(
        option.get("value") == settings_screen.BOTS_OFFERED
        for option in picked.get("selected_options") or []
    )
    return ChannelChoice(bots_allowed=bots, **lengths), {}


def register(app: App, steps: Steps) -> None:
    def save(ack: Ack, body: dict[str, Any], view: dict[str, Any], context: BoltContext) -> None:
        """Check and store within the acknowledgement, so a wrong entry keeps the modal open."""
        team, user = str(context.team_id or ""), str(body["user"]["id"])
        channel = slack_id(view.get("private_metadata"))
        choice, errors = read_choice(view)
        if choice is None:
            ack(response_action="errors", errors=errors)
            return
        if not channel:  # not the modal Varulv opened: nothing to store
            first = next(iter(settings_screen.LENGTH_LABELS))
            ack(response_action="errors", errors={first: NO_CHANNEL})
            return
        with log_context(team_id=team, channel_id=channel, user_id=user):
            try:
                save_choice(steps.sessions, team, channel, user, choice)
            except SQLAlchemyError:
                log.exception("could not store the channel's settings")
                first = next(iter(settings_screen.LENGTH_LABELS))
                ack(
                    response_action="errors",
                    errors={first: "Varulv can't reach its database right now. Try again."},
                )
                return
            log.info("channel settings changed")
        ack()

    def announce(
        body: dict[str, Any], view: dict[str, Any], context: BoltContext, client: WebClient
    ) -> None:
        """Tell the channel, since anyone there may change its settings."""
        choice, _ = read_choice(view)
        team, channel = str(context.team_id or ""), slack_id(view.get("private_metadata"))
        if choice is None or not channel:
            return
        with log_context(team_id=team, channel_id=channel):
            try:
                client.chat_postMessage(
                    channel=channel,
                    text=f"<@{body['user']['id']}> changed the Varulv settings for this "
                    f"channel: {choice.summary()}. The next game uses them.",
                )
            except SlackApiError as error:
                log.warning("could not tell the channel: %s", error.response.get("error"))

    app.view(settings_screen.CALLBACK_ID)(acknowledge_then(app, announce, acknowledge=save))
