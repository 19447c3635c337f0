"""Events API: the App Home tab."""

from __future__ import annotations

from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

import slackapp.blocks.home as home_screen
from slackapp.flow.home import record_of
from slackapp.flow.table import Table


def register(app: App, table: Table) -> None:
    @app.event("app_home_opened")
    def publish_home(event: dict[str, Any], client: WebClient, context: dict[str, Any]) -> None:
        if event.get("tab", "home") != "home":
            return
        user_id = str(event["user"])
        record, boards = record_of(table, str(context.get("team_id") or ""), user_id)
        client.views_publish(user_id=user_id, view=home_screen.home_view(user_id, record, boards))
