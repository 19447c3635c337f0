"""``/varulv`` and its words: (start), help, settings, stop, score."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App
from slack_bolt.context.respond import Respond
from slack_bolt.request import BoltRequest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

import slackapp.blocks.help as help_screen
import slackapp.blocks.settings as settings_screen
from slackapp.db import channels, scores
from slackapp.listeners.ack import Reply, acknowledge_then, is_retry, run_step, send
from slackapp.logs import log_context
from slackapp.shapes import display_name, plain_text, slack_id
from slackapp.steps import Steps

log = logging.getLogger(__name__)

USAGE = (
    "Try `/varulv` to open a table, or `/varulv help`, `/varulv settings`, `/varulv stop`, "
    "`/varulv score`."
)
WORDS = ("", "start", "help", "settings", "stop", "score")
NO_TRIGGER = "Slack didn't send what it takes to open the settings. Try `/varulv settings` again."
COMMAND_SOURCE = ("team_id", "channel_id", "user_id")
"""Where a command was typed and by whom: the signed payload's fields, never the text."""


def word_of(command: dict[str, Any]) -> str:
    return plain_text(str(command.get("text") or "")).lower()


def register(app: App, steps: Steps) -> None:
    def acknowledge(ack: Ack, command: dict[str, Any]) -> None:
        word = word_of(command)
        if word == "help":
            screen = help_screen.help_screen()
            ack(text=screen.text, blocks=screen.as_dicts(), response_type="ephemeral")
        elif word not in WORDS:
            ack(text=f"I don't know `/varulv {word[:40]}`. {USAGE}", response_type="ephemeral")
        else:
            ack()

    def handle(
        command: dict[str, Any], respond: Respond, client: WebClient, request: BoltRequest
    ) -> None:
        word = word_of(command)
        team, channel, user = (slack_id(command.get(key)) for key in COMMAND_SOURCE)
        if not (team and channel and user):
            log.warning("a /varulv without a readable team, channel or user was ignored")
            return
        retry = is_retry(request)
        with log_context(team_id=team, channel_id=channel, user_id=user):
            if word in WORDS:
                log.info("command", extra={"word": word or "start"})
            if word in ("", "start"):
                name = display_name(command.get("user_name"), user)
                run_step(respond, lambda: steps.open_table(team, channel, user, name, retry=retry))
            elif word == "settings":
                _open_settings(steps, client, command, respond)
            elif word == "stop":
                run_step(respond, lambda: steps.stop(team, channel, user, retry=retry))
            elif word == "score":
                run_step(respond, lambda: _score(steps, team, channel))

    app.command("/varulv")(acknowledge_then(app, handle, acknowledge))


def _score(steps: Steps, team: str, channel: str) -> Reply:
    rows = scores.leaderboard(steps.sessions, team, channel)
    screen = help_screen.leaderboard(channel, rows)
    return Reply(screen.text, screen.as_dicts())


def _open_settings(
    steps: Steps, client: WebClient, command: dict[str, Any], respond: Respond
) -> None:
    """Open the modal with the channel's current settings (Slack allows 3 s from the command)."""
    channel = command["channel_id"]
    choice = channels.channel_choice(steps.sessions, command["team_id"], channel, steps.lengths)
    lengths = {
        "night_seconds": choice.night_seconds,
        "day_seconds": choice.day_seconds,
        "vote_seconds": choice.vote_seconds,
    }
    view = settings_screen.settings_modal(channel, lengths, channels.BOUNDS, choice.bots_allowed)
    trigger = command.get("trigger_id")
    if not isinstance(trigger, str) or not trigger:  # Slack opens a form only with one
        send(respond, Reply(NO_TRIGGER))
        return
    try:
        client.views_open(trigger_id=trigger, view=view)
    except SlackApiError as error:
        log.warning("could not open the settings: %s", error.response.get("error"))
        send(respond, Reply("Slack did not open the settings. Try `/varulv settings` again."))
