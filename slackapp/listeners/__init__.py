"""Bolt listeners, one module per Slack surface, each with ``register(app, steps)``.

Listeners acknowledge at once (``ack.acknowledge_then``), then parse the payload into one of
the phase machine's commands, run that step and send its private answer. They decide nothing
themselves.
"""

from __future__ import annotations

from slack_bolt import App

from slackapp.listeners import actions, commands, events, views
from slackapp.steps import Steps


def register(app: App, steps: Steps) -> None:
    commands.register(app, steps)
    actions.register(app, steps)
    events.register(app, steps)
    views.register(app, steps)
    actions.register_unknown(app, steps)
