"""Authorizing a request from many workspaces by the installation store alone.

Bolt's own authorize asks Slack (``auth.test``) who the stored token belongs to on every
request, so every acknowledgement waited for Slack, and an error from it told the person Varulv
was not installed. The store already holds what Slack confirmed when the workspace installed
Varulv: the bot's token, user id and bot id.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from slack_bolt import BoltContext
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.errors import SlackClientError
from slack_sdk.oauth.installation_store import Bot, InstallationStore
from slack_sdk.oauth.token_rotation import TokenRotator
from sqlalchemy import Engine, text

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
        if rotator is not None:
            bot = fresh_bot(store, rotator, bot)
        return AuthorizeResult(
            enterprise_id=bot.enterprise_id,
            team_id=bot.team_id,
            bot_user_id=bot.bot_user_id,
            bot_id=bot.bot_id,
            bot_token=bot.bot_token,
            bot_scopes=bot.bot_scopes,
        )

    return authorize


def fresh_bot(store: InstallationStore, rotator: TokenRotator, bot: Bot) -> Bot:
    """The bot with a token good for a while yet: refreshed (and the refresh saved) when a
    rotating token expires soon; as stored otherwise, or when Slack would not refresh it now
    (the stored token may well still work).

    A refresh token is good for one refresh, so one thread of one process at a time refreshes
    (the web workers and the background process share the store), each from the newest stored
    bot: one that waited its turn finds the token another refreshed meanwhile in the store.
    """
    if not _expires_soon(bot):
        return bot
    with _refreshing, _one_process_at_a_time(store, bot):
        newest = _newest(store, bot)
        if not _expires_soon(newest):
            return newest  # refreshed while this one waited its turn
        try:
            refreshed = rotator.perform_bot_token_rotation(
                bot=newest, minutes_before_expiration=ROTATE_MINUTES_BEFORE_EXPIRY
            )
        except (SlackClientError, OSError) as error:
            log.warning("could not refresh the bot token: %s", error)
            return _newest(store, newest)  # another process may have refreshed it
        if refreshed is None:
            return newest
        try:
            store.save_bot(refreshed)
        except Exception as error:  # the database: the new token still works in this call
            log.error("could not save the refreshed bot token: %s", error)
        return refreshed


_refreshing = threading.Lock()


@contextmanager
def _one_process_at_a_time(store: InstallationStore, bot: Bot) -> Iterator[None]:
    """A PostgreSQL advisory lock on the workspace's refresh, when the store is the database's
    (it released with the connection, should this process die holding it). A database that
    does not answer takes no lock: the refresh goes on, and a loser's refresh fails cleanly."""
    engine = getattr(store, "engine", None)
    key = zlib.crc32(f"varulv-token-refresh:{bot.enterprise_id}:{bot.team_id}".encode())
    connection = None
    if isinstance(engine, Engine):
        try:
            connection = engine.connect()
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": key})
        except Exception as error:
            log.warning("refreshing the bot token without a lock: %s", type(error).__name__)
            if connection is not None:
                connection.close()
            connection = None
    try:
        yield
    finally:
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
                connection.commit()
            connection.close()


def _expires_soon(bot: Bot) -> bool:
    expires_at = bot.bot_token_expires_at
    soon = time.time() + ROTATE_MINUTES_BEFORE_EXPIRY * 60
    return bool(bot.bot_refresh_token) and expires_at is not None and expires_at <= soon


def _newest(store: InstallationStore, bot: Bot) -> Bot:
    """The workspace's bot as stored now; ``bot`` itself if the store does not answer."""
    try:
        stored = store.find_bot(
            enterprise_id=bot.enterprise_id,
            team_id=bot.team_id,
            is_enterprise_install=bot.is_enterprise_install,
        )
    except Exception as error:  # the database, most likely
        log.warning("the installation store did not answer: %s", error)
        return bot
    return stored if stored is not None and stored.bot_token else bot
