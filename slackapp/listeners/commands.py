"""``/varulv`` and its words: (start), help, stop, score."""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App
from slack_bolt.context.respond import Respond

import slackapp.blocks.help as help_screen
from slackapp.flow import control, lobby
from slackapp.flow.table import Reply, Table
from slackapp.listeners.replies import run_step

USAGE = "Try `/varulv` to open a table, or `/varulv help`, `/varulv stop`, `/varulv score`."
WORDS = ("", "start", "help", "stop", "score")


def word_of(command: dict[str, Any]) -> str:
    return str(command.get("text") or "").strip().lower()


def register(app: App, table: Table) -> None:
    def acknowledge(ack: Ack, command: dict[str, Any]) -> None:
        word = word_of(command)
        if word == "help":
            screen = help_screen.help_screen()
            ack(text=screen.text, blocks=screen.as_dicts(), response_type="ephemeral")
        elif word not in WORDS:
            ack(text=f"I don't know `/varulv {word[:40]}`. {USAGE}", response_type="ephemeral")
        else:
            ack()

    def handle(command: dict[str, Any], respond: Respond) -> None:
        word = word_of(command)
        team, channel, user = command["team_id"], command["channel_id"], command["user_id"]
        if word in ("", "start"):
            name = str(command.get("user_name") or user)
            run_step(respond, lambda: lobby.open_lobby(table, team, channel, user, name))
        elif word == "stop":
            run_step(respond, lambda: control.stop(table, team, channel, user))
        elif word == "score":
            run_step(respond, lambda: _score(table, team, channel))

    app.command("/varulv")(ack=acknowledge, lazy=[handle])


def _score(table: Table, team: str, channel: str) -> Reply:
    screen = help_screen.leaderboard(channel, control.leaderboard(table, team, channel))
    return Reply(screen.text, screen.as_dicts())
