"""Authorizing a request from many workspaces by the installation store alone.

Bolt's own authorize asks Slack (``auth.test``) who the stored token belongs to on every
request, so every acknowledgement waited for Slack, and an error from it told the person Varulv
was not installed. The store already holds what Slack confirmed when the workspace installed
Varulv: the bot's token, user id and bot id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from slack_bolt import BoltContext
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.errors import SlackClientError
from slack_sdk.oauth.installation_store import Bot, InstallationStore
from slack_sdk.oauth.token_rotation import TokenRotator

log = logging.getLogger(__name__)

ROTATE_MINUTES_BEFORE_EXPIRY = 120
"""Bolt's default: a rotating token is refreshed this long before it expires."""

Authorize = Callable[..., AuthorizeResult | None]


def from_store(store: InstallationStore, rotator: TokenRotator | None = None) -> Authorize:
    """Bolt's ``authorize``: the stored bot of the request's workspace, or None when Varulv is
    not installed there (Bolt then says so). A store that does not answer is not an uninstall:
    the request goes on without a token, and the step that needs one says what failed."""

    def authorize(
        enterprise_id: str | None, team_id: str | None, context: BoltContext
    ) -> AuthorizeResult | None:
        try:
            bot = store.find_bot(
                enterprise_id=enterprise_id,
                team_id=team_id,
                is_enterprise_install=context.is_enterprise_install,
            )
        except Exception as error:  # the database, most likely: see the docstring
            log.warning("the installation store did not answer: %s", error)
            return AuthorizeResult(enterprise_id=enterprise_id, team_id=team_id)
        if bot is None or not bot.bot_token:
            return None
        if rotator is not None and bot.bot_refresh_token:
            bot = _rotated(store, rotator, bot)
        return AuthorizeResult(
            enterprise_id=bot.enterprise_id,
            team_id=bot.team_id,
            bot_user_id=bot.bot_user_id,
            bot_id=bot.bot_id,
            bot_token=bot.bot_token,
            bot_scopes=bot.bot_scopes,
        )

    return authorize


def _rotated(store: InstallationStore, rotator: TokenRotator, bot: Bot) -> Bot:
    """The bot with a fresh token if its token expires soon; as it was if Slack would not
    refresh it now (the stored token may well still work)."""
    try:
        refreshed = rotator.perform_bot_token_rotation(
            bot=bot, minutes_before_expiration=ROTATE_MINUTES_BEFORE_EXPIRY
        )
    except (SlackClientError, OSError) as error:
        log.warning("could not refresh the bot token: %s", error)
        return bot
    if refreshed is None:
        return bot
    store.save_bot(refreshed)
    return refreshed
