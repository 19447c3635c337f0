"""Bolt listeners, one module per Slack surface, each with ``register(app, table)``.

Listeners acknowledge at once, then (lazily, after the acknowledgement has gone) parse the
payload, call one game step and send its private reply. They decide nothing themselves.
"""

from __future__ import annotations

from slack_bolt import App

from slackapp.flow.table import Table
from slackapp.listeners import actions, commands, events, views


def register(app: App, table: Table) -> None:
    commands.register(app, table)
    actions.register(app, table)
    events.register(app, table)
    views.register(app, table)
    actions.register_unknown(app)
