"""Authorizing a request from many workspaces by the installation store alone, and keeping
rotating bot tokens fresh.

Bolt's own authorize asks Slack (``auth.test``) who the stored token belongs to on every
request, so every acknowledgement waited for Slack, and an error from it told the person Varulv
was not installed. The store already holds what Slack confirmed when the workspace installed
Varulv: the bot's token, user id and bot id.

With token rotation on, Slack spends a refresh token when it is used: a new pair lost (a crash
between Slack's answer and its save) cannot be got back. So the new pair is saved the moment it
arrives, by one process at a time; a refresh token Slack refused is never tried again; and a
workspace left without a way to refresh says so where someone can act (:class:`Refresher`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from slack_bolt import BoltContext, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_sdk import WebClient
from slack_sdk.errors import SlackClientError, SlackTokenRotationError
from slack_sdk.oauth.installation_store import Bot, InstallationStore
from slack_sdk.oauth.token_rotation import TokenRotator
from sqlalchemy import Engine, select, text

from slackapp import metrics
from slackapp.blocks.home import reinstall_modal, reinstall_view
from slackapp.blocks.words import ENGLISH, Words, words
from slackapp.db.installations import (
    mark_reinstall_needed,
    reinstall_needed,
    token_digest,
)
from slackapp.db.models import ChannelSettings
from slackapp.game.lines import Language
from slackapp.logs import log_context
from slackapp.shapes import slack_id
from slackapp.turns import Turns

log = logging.getLogger(__name__)

ROTATE_MINUTES_BEFORE_EXPIRY = 120
"""Bolt's default: a rotating token is refreshed this long before it expires."""

Authorize = Callable[..., AuthorizeResult | None]

PASSING_REFRESH_ERRORS = frozenset(
    {
        "ratelimited",
        "rate_limited",
        "internal_error",
        "fatal_error",
        "service_unavailable",
        "request_timeout",
    }
)
"""Slack failing a refresh for a moment: the same refresh token is tried again later. Any other
error refuses it for good (``invalid_refresh_token``: spent or revoked)."""
APP_CREDENTIAL_ERRORS = frozenset({"invalid_client_id", "bad_client_secret", "invalid_client"})
"""The app's own credentials refused: every workspace's refresh fails until they are fixed, and
no reinstall would help."""

REINSTALL = "varulv_reinstall"
"""Where authorize leaves the reinstall answer in a request's context."""
REINSTALL_WORDS = "varulv_reinstall_words"
"""Where authorize leaves the reinstall answer in a channel's language: a function of the
workspace and the channel, for a modal's answer (:func:`answer_reinstall`)."""
ADMIN_PAGES = 50
"""``users.list`` pages (200 members each) read to find a workspace's admins: 10,000 members."""
USERS_LIST_TURNS = {"users.list": 20, "views.publish": 100}
"""Slack's Tier 2 and Tier 4, calls a minute per workspace."""


def reinstall_answer(install_url: str | None, w: Words = ENGLISH) -> str:
    """What a person is told in a workspace whose token can no longer be refreshed. English
    where it is given before any listener reads a channel's language (as Bolt's "not
    installed"); a modal's answer is in its channel's language."""
    if install_url:
        return w._(
            "Varulv must be reinstalled here: Slack no longer lets it renew its access to this "
            "workspace. A workspace admin can add it again: {url}",
            url=install_url,
        )
    return w._(
        "Varulv must be reinstalled here: Slack no longer lets it renew its access to this "
        "workspace. A workspace admin can add it again from its “Add to Slack” page."
    )


def from_store(store: InstallationStore, refresher: Refresher | None = None) -> Authorize:
    """Bolt's ``authorize``: the stored bot of the request's workspace, or None when Varulv is
    not installed there (Bolt then says so). A store that does not answer is not an uninstall:
    the request goes on without a token, and the step that needs one says what failed. A
    workspace whose token can no longer be refreshed gets the reinstall answer
    (:func:`answer_reinstall`), with its token while that still works (for the Home tab)."""

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
        if refresher is not None:
            bot = refresher.fresh(bot)
            if refresher.spent(bot):
                context[REINSTALL] = reinstall_answer(refresher.install_url)
                context[REINSTALL_WORDS] = refresher.answer_in_channel
                if refresher.dead(bot):
                    return AuthorizeResult(enterprise_id=bot.enterprise_id, team_id=bot.team_id)
        return AuthorizeResult(
            enterprise_id=bot.enterprise_id,
            team_id=bot.team_id,
            bot_user_id=bot.bot_user_id,
            bot_id=bot.bot_id,
            bot_token=bot.bot_token,
            bot_scopes=bot.bot_scopes,
        )

    return authorize


LEAVING_EVENTS = frozenset({"app_uninstalled", "tokens_revoked"})


def answer_reinstall(
    body: dict[str, Any], context: BoltContext, next: Callable[[], BoltResponse]
) -> BoltResponse:
    """Bolt middleware: in a workspace that must reinstall Varulv, a command, a click or a
    modal's submission is answered with what to do (a command in its acknowledgement, a click
    through its ``response_url``, a submission by turning the modal into the answer) and goes
    no further, so nobody gets 200 and silence; the Home tab shows the same while the old
    token still works (a click on it too); an uninstall is still handled."""
    answer = context.get(REINSTALL)
    if not answer:
        return next()
    if body.get("type") == "view_submission":
        return BoltResponse(status=200, body=_reinstall_update(body, context, answer))
    if body.get("type") == "view_closed":
        return BoltResponse(status=200, body="")  # nothing was asked: nothing to answer
    event = body.get("event") if body.get("type") == "event_callback" else None
    if isinstance(event, dict):
        if event.get("type") in LEAVING_EVENTS:
            return next()
        if event.get("type") == "app_home_opened":
            _show_on_home(context, slack_id(event.get("user")), answer)
        return BoltResponse(status=200, body="")
    if body.get("command"):
        return BoltResponse(status=200, body=answer)
    _answer_click(body, context, answer)
    return BoltResponse(status=200, body="")


def _answer_click(body: dict[str, Any], context: BoltContext, answer: str) -> None:
    """A click: answered through its ``response_url``; one on the Home tab, which carries
    none, by the tab itself, while it can."""
    respond = context.respond
    if respond is not None:
        try:
            respond(text=answer, response_type="ephemeral", replace_original=False)
        except Exception as error:  # the answer is all there was to do
            log.warning("could not answer that Varulv must be reinstalled: %s", error)
        return
    view, user = body.get("view"), body.get("user")
    user_id = slack_id(user.get("id")) if isinstance(user, dict) else ""
    on_home = isinstance(view, dict) and view.get("type") == "home"
    if on_home and _show_on_home(context, user_id, answer):
        return
    log.info("a click Varulv cannot answer, as it must be reinstalled here")


def _show_on_home(context: BoltContext, user_id: str, answer: str) -> bool:
    """The answer on the person's Home tab, while a token can draw it: whether it was tried."""
    client = context.client
    if not (context.bot_token and client and user_id):
        return False
    _publish_reinstall_home(client, user_id, answer)
    return True


def _reinstall_update(body: dict[str, Any], context: BoltContext, answer: str) -> dict[str, Any]:
    """The modal turned into the reinstall answer (Slack's ``response_action: update``: no
    token needed), in the language of the channel the modal is for."""
    view = body.get("view")
    channel = slack_id(view.get("private_metadata")) if isinstance(view, dict) else ""
    in_channel = context.get(REINSTALL_WORDS)
    spoken = ENGLISH
    if channel and callable(in_channel):
        spoken, answer = in_channel(str(context.team_id or ""), channel)
    return {"response_action": "update", "view": reinstall_modal(answer, spoken).to_dict()}


def _publish_reinstall_home(client: WebClient, user_id: str, answer: str) -> bool:
    try:
        client.views_publish(user_id=user_id, view=reinstall_view(answer))
    except (SlackClientError, OSError) as error:
        log.warning("could not show on the Home tab that Varulv must be reinstalled: %s", error)
        return False
    return True


class Refresher:
    """Rotating bot tokens refreshed before they expire, by the requests' authorize and the
    deliverer alike (one per process, shared by both).

    A refresh token is good for one refresh, so one thread of one process at a time refreshes
    (the web workers and the background process share the store), each from the newest stored
    bot: one that waited its turn finds the token another refreshed meanwhile in the store. The
    new pair is saved before anything else is done with it. A refresh token Slack refused for
    good is tried once a process at most (and not at all once another process marked it): the
    workspace is marked as needing a reinstall, with one ERROR line and a metric, and its
    installer's Home tab says so while the old token still works.
    """

    def __init__(
        self,
        store: InstallationStore,
        rotator: TokenRotator,
        api_url: str,
        install_url: str | None = None,
    ) -> None:
        self.store = store
        self.rotator = rotator
        self.api_url = api_url
        self.install_url = install_url
        engine = getattr(store, "engine", None)
        self.engine = engine if isinstance(engine, Engine) else None
        self._turn = threading.Lock()
        self._refused: set[str] = set()
        """The digests of the refresh tokens Slack refused, as this process knows them."""
        self._unsaved: dict[tuple[str | None, str | None], Bot] = {}
        """Refreshed bots the store did not take (the database away): used, and saved again,
        rather than the stored one, whose refresh token Slack has spent."""

    def fresh(self, bot: Bot) -> Bot:
        """The bot with a token good for a while yet: refreshed (and the refresh saved) when a
        rotating token expires soon; as stored otherwise, or when Slack would not refresh it
        now (the stored token may well still work), or never will (see :meth:`spent`)."""
        if not _expires_soon(bot) or self.spent(bot):
            return bot
        workspace = (bot.enterprise_id, bot.team_id)
        with self._turn, _one_process_at_a_time(self.engine, bot):
            newest = self._unsaved.get(workspace) or self._newest(bot)
            if workspace in self._unsaved and self._save(newest):
                del self._unsaved[workspace]
            if not _expires_soon(newest):
                return newest  # refreshed while this one waited its turn
            if self.spent(newest) or self._marked(newest):
                return newest
            try:
                refreshed = self.rotator.perform_bot_token_rotation(
                    bot=newest, minutes_before_expiration=ROTATE_MINUTES_BEFORE_EXPIRY
                )
            except SlackTokenRotationError as rotation:  # what Slack answered
                answered = rotation.api_error.response
                code = str(answered.get("error") or answered.status_code)
                if code in PASSING_REFRESH_ERRORS or answered.status_code >= 500:
                    log.warning("could not refresh the bot token just now: %s", code)
                    return self._newest(newest)  # another process may have refreshed it
                self._refuse(newest, code)
                return newest
            except (SlackClientError, OSError) as error:
                log.warning("could not refresh the bot token: %s", error)
                return self._newest(newest)  # another process may have refreshed it
            if refreshed is None:
                return newest
            if not self._save(refreshed):
                self._unsaved[workspace] = refreshed
            return refreshed

    def _save(self, bot: Bot) -> bool:
        try:
            self.store.save_bot(bot)
        except Exception as error:  # the database: kept in memory, and saved at the next use
            log.error("could not save the refreshed bot token: %s", error)
            return False
        return True

    def spent(self, bot: Bot) -> bool:
        """Whether Slack refused the bot's refresh token for good (as far as this process
        knows): the workspace must reinstall Varulv."""
        return bool(bot.bot_refresh_token) and token_digest(bot.bot_refresh_token) in self._refused

    def dead(self, bot: Bot) -> bool:
        """Spent, and its token expired: nothing Varulv sends there can arrive."""
        expires_at = bot.bot_token_expires_at
        return self.spent(bot) and expires_at is not None and expires_at <= time.time()

    def _marked(self, bot: Bot) -> bool:
        """Whether another process found the refresh token refused (and marked it)."""
        if self.engine is None:
            return False
        try:
            marked = reinstall_needed(
                self.engine, bot.enterprise_id, bot.team_id, bot.bot_refresh_token
            )
        except Exception as error:  # the database: try the refresh, which says the same
            log.warning("could not read whether the workspace must reinstall: %s", error)
            return False
        if marked:
            self._refused.add(token_digest(bot.bot_refresh_token))
        return marked

    def _refuse(self, bot: Bot, error: str) -> None:
        """Slack refused the bot's refresh token for good: never again, and say so."""
        self._refused.add(token_digest(bot.bot_refresh_token))
        if error in APP_CREDENTIAL_ERRORS:
            log.error(
                "Slack refused the app's credentials refreshing a bot token (%s): check "
                "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, then restart",
                error,
            )
            return
        metrics.token_refresh_refused(error)
        first = True
        if self.engine is not None:
            try:
                first = mark_reinstall_needed(
                    self.engine, bot.enterprise_id, bot.team_id, bot.bot_refresh_token, error
                )
            except Exception as failure:  # the database: this process still knows
                log.warning("could not mark the workspace as needing a reinstall: %s", failure)
        if not first:
            return
        with log_context(team_id=bot.team_id, enterprise_id=bot.enterprise_id):
            log.error(
                "Slack refused to refresh the bot token for good (%s): Varulv must be "
                "reinstalled in this workspace, where its token expires at %s",
                error,
                bot.bot_token_expires_at,
            )
            self._tell_installer(bot)

    def answer_in_channel(self, team_id: str, channel_id: str) -> tuple[Words, str]:
        """The channel's words and the reinstall answer in them; English when the database
        does not answer (the answer matters more than its language)."""
        spoken = ENGLISH
        if self.engine is not None:
            query = select(ChannelSettings.language).where(
                ChannelSettings.team_id == team_id, ChannelSettings.channel_id == channel_id
            )
            try:
                with self.engine.connect() as connection:
                    language = connection.execute(query).scalar()
                spoken = words(Language(language)) if language else ENGLISH
            except Exception as error:  # the database
                log.warning("the channel's language could not be read: %s", error)
        return spoken, reinstall_answer(self.install_url, spoken)

    def _tell_installer(self, bot: Bot) -> None:
        """The installer's Home tab says what to do, while the old token still works; then,
        on a thread of its own, every admin's and owner's of the workspace."""
        try:
            installation = self.store.find_installation(
                enterprise_id=bot.enterprise_id,
                team_id=bot.team_id,
                is_enterprise_install=bot.is_enterprise_install,
            )
        except Exception as error:  # the database
            log.warning("could not find who installed Varulv: %s", error)
            return
        client = WebClient(token=bot.bot_token, base_url=self.api_url, timeout=10)
        answer = reinstall_answer(self.install_url)
        installer = installation.user_id if installation is not None else None
        if installer and _publish_reinstall_home(client, installer, answer):
            log.info("the installer's Home tab says Varulv must be reinstalled")
        if bot.team_id and not bot.is_enterprise_install:  # users.list names one workspace
            told = threading.Thread(
                target=self._tell_admins,
                args=(client, bot, answer, installer),
                name="varulv-reinstall-notice",
                daemon=True,  # best effort: an admin opening the Home tab is told anyway
            )
            told.start()

    def _tell_admins(self, client: WebClient, bot: Bot, answer: str, installer: str | None) -> None:
        """Every admin and owner of the workspace, as ``users.list`` gives them (one page of
        200 at Tier 2's pace, the Home tabs at Tier 4's), has the notice on the Home tab."""
        turns = Turns(USERS_LIST_TURNS)
        workspace = str(bot.team_id)
        told = 0
        with log_context(team_id=bot.team_id, enterprise_id=bot.enterprise_id):
            for admin in _admins(client, turns, workspace):
                if admin == installer:
                    continue
                turns.wait_for("views.publish", workspace)
                told += _publish_reinstall_home(client, admin, answer)
            log.info("admins' Home tabs say Varulv must be reinstalled", extra={"count": told})

    def _newest(self, bot: Bot) -> Bot:
        """The workspace's bot as stored now; ``bot`` itself if the store does not answer."""
        try:
            stored = self.store.find_bot(
                enterprise_id=bot.enterprise_id,
                team_id=bot.team_id,
                is_enterprise_install=bot.is_enterprise_install,
            )
        except Exception as error:  # the database, most likely
            log.warning("the installation store did not answer: %s", error)
            return bot
        return stored if stored is not None and stored.bot_token else bot


def _admins(client: WebClient, turns: Turns, workspace: str) -> Iterator[str]:
    """The workspace's admins and owners (people, not bots nor the deactivated), page by page
    of ``users.list``; the listing ends at the first error (the token expired meanwhile)."""
    cursor = ""
    for _ in range(ADMIN_PAGES):
        turns.wait_for("users.list", workspace)
        try:
            page = client.users_list(limit=200, cursor=cursor or None, team_id=workspace)
        except (SlackClientError, OSError) as error:
            log.warning("could not list the workspace's admins: %s", error)
            return
        for member in page.get("members") or []:
            if not isinstance(member, dict) or member.get("deleted") or member.get("is_bot"):
                continue
            if member.get("is_admin") or member.get("is_owner"):
                yield str(member.get("id"))
        cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
        if not cursor:
            return


@contextmanager
def _one_process_at_a_time(engine: Engine | None, bot: Bot) -> Iterator[None]:
    """A PostgreSQL advisory lock on the workspace's refresh, when the store is the database's
    (it released with the connection, should this process die holding it). A database that
    does not answer takes no lock: the refresh goes on, and a loser's refresh fails cleanly."""
    key = zlib.crc32(f"varulv-token-refresh:{bot.enterprise_id}:{bot.team_id}".encode())
    connection = None
    if engine is not None:
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
