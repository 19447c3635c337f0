"""Events API: the App Home tab and the app leaving a workspace."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from slack_bolt import App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from slackapp.db.installations import outlived
from slackapp.listeners.ack import acknowledge_then
from slackapp.logs import log_context
from slackapp.names import Names, lookup_client
from slackapp.services.channel import ChannelService
from slackapp.services.game import GameService
from slackapp.shapes import slack_id

log = logging.getLogger(__name__)


def register(app: App, games: GameService, channels: ChannelService, names: Names) -> None:
    def publish_home(
        body: dict[str, Any], event: dict[str, Any], client: WebClient, context: BoltContext
    ) -> None:
        user_id = slack_id(event.get("user"))
        if event.get("tab", "home") != "home" or not user_id:
            return
        team_id = workspace_of(body, context)
        org_wide = bool(context.is_enterprise_install)
        teams = channels.teams_of(team_id, user_id, context.enterprise_id, org_wide)
        publish_home_tab(channels, client, teams, user_id)
        # Shown first: the viewer's kept name, if stale, is asked again once they see the tab.
        names.refresh(lookup_client(client), team_id, user_id)

    def uninstalled(body: dict[str, Any], context: BoltContext) -> None:
        _leave(app, games, body, context, "app uninstalled")

    def tokens_revoked(event: dict[str, Any], body: dict[str, Any], context: BoltContext) -> None:
        store = app.installation_store
        if store is not None:
            for user_id in (event.get("tokens") or {}).get("oauth") or []:
                store.delete_installation(
                    enterprise_id=context.enterprise_id, team_id=context.team_id, user_id=user_id
                )
        if (event.get("tokens") or {}).get("bot"):
            # Varulv acts only as its bot: without that token the installation is of no use.
            _leave(app, games, body, context, "bot token revoked")

    app.event("app_home_opened")(acknowledge_then(app, publish_home))
    app.event("app_uninstalled")(acknowledge_then(app, uninstalled))
    app.event("tokens_revoked")(acknowledge_then(app, tokens_revoked))


def workspace_of(body: dict[str, Any], context: BoltContext) -> str:
    """The workspace an event happened in. An organisation-wide installation's authorization
    names no workspace (Bolt's ``context.team_id`` is None), the envelope's ``team_id`` does."""
    return str(context.team_id or slack_id(body.get("team_id")) or "")


def _leave(
    app: App, games: GameService, body: dict[str, Any], context: BoltContext, why: str
) -> None:
    """Forget the installation and end its open games; scores and settings stay. Varulv
    installed on a whole organisation leaves every workspace of it at once. An event older
    than the installation kept now (Slack's late redelivery) is of one already gone."""
    org_wide = bool(context.is_enterprise_install)
    team_id = None if org_wide else str(context.team_id or "")
    with log_context(team_id=team_id, enterprise_id=context.enterprise_id):
        store = app.installation_store
        event_time = body.get("event_time")
        if store is not None and outlived(
            store, context.enterprise_id, team_id, org_wide, event_time
        ):
            log.info("an uninstall older than the installation kept was ignored: %s", why)
            return
        if store is not None:  # with a single token there is no installation to forget
            store.delete_all(enterprise_id=context.enterprise_id, team_id=team_id)
        stopped = games.workspace_left(team_id, context.enterprise_id)
        log.info("workspace left: %s", why, extra={"count": stopped})


def publish_home_tab(
    channels: ChannelService, client: WebClient, teams: Sequence[str], user_id: str
) -> None:
    """``teams``: the workspaces whose tables hold the person's record (``teams_of``)."""
    view = channels.home_tab(teams, user_id)
    try:
        client.views_publish(user_id=user_id, view=view)
    except SlackApiError as error:  # the tab shows the last one published; Slack asks again
        log.warning("could not publish the Home tab: %s", error.response.get("error"))
