"""Bolt listeners, one module per Slack surface, each with ``register(app, steps)``.

Listeners acknowledge at once (``ack.acknowledge_then``), then parse the payload into one of
the phase machine's commands, run that step and send its private answer. They decide nothing
themselves. Commands and clicks are written down in the inbox before they are acknowledged
(``slackapp.inbox``).
"""

from __future__ import annotations

from slack_bolt import App

from slackapp.inbox import Inbox
from slackapp.listeners import actions, commands, events, views
from slackapp.steps import Steps


def register(app: App, steps: Steps, inbox: Inbox | None = None) -> None:
    commands.register(app, steps, inbox)
    actions.register(app, steps, inbox)
    events.register(app, steps)
    views.register(app, steps)
    actions.register_unknown(app, steps, inbox)
