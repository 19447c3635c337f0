"""Bolt listeners, one module per Slack surface, each with a ``register`` given the app and the
services it calls (``slackapp.services``).

Listeners acknowledge at once (``ack.acknowledge_then``), then parse the payload into one of
the phase machine's commands, run that step and send its private answer. They decide nothing
themselves. Commands and clicks are written down in the inbox before they are acknowledged
(``slackapp.inbox``).
"""

from __future__ import annotations

from slack_bolt import App

from slackapp.inbox import Inbox
from slackapp.listeners import actions, commands, events, views
from slackapp.names import Names
from slackapp.services.channel import ChannelService
from slackapp.services.game import GameService


def register(
    app: App,
    games: GameService,
    channels: ChannelService,
    names: Names,
    inbox: Inbox | None = None,
) -> None:
    commands.register(app, games, channels, inbox)
    actions.register(app, games, channels, inbox)
    events.register(app, games, channels, names)
    views.register(app, channels)
    actions.register_unknown(app, games, inbox)
