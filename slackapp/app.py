"""The Bolt app: the Web API client(s), the services, the timers, the listeners.

Two ways to run. With ``SLACK_BOT_TOKEN`` Varulv serves the one workspace that token belongs
to. With ``SLACK_CLIENT_ID`` and ``SLACK_CLIENT_SECRET`` it serves every workspace that adds it
through "Add to Slack" (``/slack/install``): Bolt runs the OAuth flow and keeps installations in
the app's own database, and each game step acts with its own workspace's bot token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit, urlunsplit

from slack_bolt import App, BoltResponse
from slack_bolt.authorization.authorize import CallableAuthorize
from slack_bolt.oauth.callback_options import CallbackOptions, FailureArgs, SuccessArgs
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk.oauth.token_rotation import TokenRotator
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from slackapp.authorize import Refresher, answer_reinstall, from_store
from slackapp.blocks.addresses import Addresses
from slackapp.config import BOT_SCOPES, INSTALL_PATH, OAUTH_REDIRECT_PATH, Settings
from slackapp.db import standing
from slackapp.db.engine import make_engine, make_sessions
from slackapp.db.installations import installation_store, oauth_state_store, reinstalled
from slackapp.db.journal import keep_journal
from slackapp.db.retention import Retention
from slackapp.delivery.deliverer import Deliverer
from slackapp.delivery.pacing import Limit, Pacer
from slackapp.delivery.slack import ClientFor, InstalledClients, web_client
from slackapp.dms import DirectMessages
from slackapp.game.machine import ChannelUnwritable, Event, Lengths, WorkspaceLeft
from slackapp.inbox import Inbox
from slackapp.install_page import LandingOAuthFlow, added_page
from slackapp.listeners import register
from slackapp.listeners.ack import ANSWERS, STARTS
from slackapp.logs import log_context
from slackapp.names import Names
from slackapp.services.channel import ChannelService
from slackapp.services.game import GameService
from slackapp.services.standing import SeasonWrapUps, StandingTables, pause_for_channel_of
from slackapp.services.uow import DEADLINE_BATCH, commit_step, utc_now
from slackapp.timers import Deadlines

log = logging.getLogger(__name__)

APP_NAME = "varulv"
"""Bolt's name for the app in its log; unnamed, Bolt reads every caller's source to find one."""


def not_installed_answer(install_url: str | None) -> str:
    """Bolt's one answer to a workspace it finds no installation for (one that removed Varulv,
    or never added it), set when the app is built: where an admin adds it, as the reinstall
    answer says (``slackapp.authorize.reinstall_answer``). English in every channel, since
    Bolt gives it before any listener could read a language."""
    if install_url:
        return (
            f"Varulv isn't installed in this workspace. A workspace admin can add it: {install_url}"
        )
    return (
        "Varulv isn't installed in this workspace. A workspace admin can add it from its "
        "“Add to Slack” page."
    )


STEP_THREADS = 8
"""A step is a short transaction; its Slack work is the deliverer's."""


class StepExecutor(ThreadPoolExecutor):
    """Bolt's threads for the listeners' work after the acknowledgement (the game steps)."""

    def __init__(self, max_workers: int = STEP_THREADS) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix="varulv-step")


@dataclass
class Varulv:
    """Everything wired together at construction; ``start()`` sets the timers and the
    deliverer going once the process serves."""

    app: App
    engine: Engine
    """For what needs a plain connection and no unit of work (the figures ``/metrics`` reads)."""
    sessions: sessionmaker[Session]
    games: GameService
    channels: ChannelService
    deadlines: Deadlines
    deliverer: Deliverer
    standing: StandingTables
    wrap_ups: SeasonWrapUps
    retention: Retention | None = None
    """The daily prune of old ended games, on the timers' sweep."""
    signing_secret: str | None = None
    inbox: Inbox | None = None
    """Commands and clicks written down before they are acknowledged, and taken over from
    processes that died with them."""

    def start(self, timers: bool = True) -> None:
        """Deliver, and take over what processes gone left; with ``timers``, keep the
        deadlines and the sweeps too (else a process that keeps them finds this one's)."""
        if self.inbox is not None:
            self.inbox.start(self.app.dispatch)
        self.deliverer.start()
        if not timers:
            return
        self.deadlines.start(
            self.games.deadlines_due,
            DEADLINE_BATCH,
            also=(self.standing.sweep, self.wrap_ups.sweep)
            + ((self.retention.sweep,) if self.retention else ()),
        )

    def stop(self) -> None:
        """Once no request comes in: the steps already acknowledged to Slack finish (the
        *Start*s waiting for Slack's turns too), then their private answers are sent, and only
        then do deliveries stop."""
        if self.inbox is not None:  # its claims are renewed until the work is done
            self.inbox.stop_taking_over()
        self.deadlines.stop()
        self.app.listener_runner.listener_executor.shutdown(wait=True)
        STARTS.finish()
        ANSWERS.finish()
        if self.inbox is not None:
            self.inbox.stop()
        self.deliverer.stop()


def installed(args: SuccessArgs, engine: Engine) -> BoltResponse:
    """Log the new installation (no longer in need of one, if it was), then say what to do next
    (:func:`~slackapp.install_page.added_page`) with Bolt's response's status and headers
    (which clear the install's cookie)."""
    installation = args.installation
    with log_context(
        team_id=installation.team_id,
        enterprise_id=installation.enterprise_id,
        user_id=installation.user_id,
    ):
        try:
            reinstalled(engine, installation.enterprise_id, installation.team_id)
        except Exception as error:  # the new refresh token is not the refused one anyway
            log.warning("could not clear the workspace's need of a reinstall: %s", error)
        try:
            org_wide = bool(installation.is_enterprise_install)
            with Session(engine) as session, session.begin():
                standing.resume_installed(
                    session, None if org_wide else installation.team_id, installation.enterprise_id
                )
        except Exception as error:  # its admins can save each standing table again
            log.warning("could not let the workspace's standing tables run again: %s", error)
        log.info("workspace installed")
    usual = args.default.success(args)
    page = added_page(
        installation.app_id,
        installation.team_id,
        installation.enterprise_url,
        bool(installation.is_enterprise_install),
    )
    return BoltResponse(status=usual.status, body=page, headers=usual.headers)


def install_url(settings: Settings) -> str | None:
    """The "Add to Slack" page, on the address Slack sends admins back to; None when that is
    Slack's configured one (not known here)."""
    if not settings.redirect_uri:
        return None
    return urlunsplit(urlsplit(settings.redirect_uri)._replace(path=INSTALL_PATH, query=""))


def not_installed(args: FailureArgs) -> BoltResponse:
    log.warning("an installation failed: %s", args.reason)
    return args.default.failure(args)


def build(
    settings: Settings,
    database_url: str,
    now: Callable[[], datetime] = utc_now,
) -> Varulv:
    """Wire everything; the caller starts the timers and the deliverer once serving.

    ``now``: the one clock every step, deadline and delivery goes by (a test's, to move it on).
    The server checks every request's signature before Bolt sees it, so Bolt does not again.
    """
    engine = make_engine(database_url, settings.database_connections, settings.prepared_statements)
    sessions = make_sessions(engine)
    keep_journal(sessions)
    lengths = Lengths(settings.night_seconds, settings.day_seconds, settings.vote_seconds)
    # The deliverer schedules its own retries, so its clients never sleep inside a call.
    delivering: ClientFor
    oauth_flow: LandingOAuthFlow | None = None
    unknown_workspace: str | None = None  # with one workspace's token, Bolt's own
    if settings.multi_workspace:
        assert settings.client_id and settings.client_secret
        store = installation_store(engine, settings.client_id, settings.token_keys)
        # Tokenless: Bolt gives each request a copy with that workspace's token, and the OAuth
        # flow exchanges codes with it, so every call honours SLACK_API_URL.
        client = web_client(None, settings.api_url)
        # Tokens that expire (token rotation on) are refreshed before use, by the requests'
        # authorize and by the deliverer alike, and the new ones saved in the store.
        rotator = TokenRotator(
            client_id=settings.client_id, client_secret=settings.client_secret, client=client
        )
        refresher = Refresher(store, rotator, settings.api_url, install_url(settings))
        delivering = InstalledClients(
            store, settings.api_url, wait_out_rate_limits=False, refresher=refresher
        )
        oauth = OAuthSettings(
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            scopes=list(BOT_SCOPES),
            redirect_uri=settings.redirect_uri,
            install_path=INSTALL_PATH,
            redirect_uri_path=OAUTH_REDIRECT_PATH,
            installation_store=store,
            installation_store_bot_only=True,  # Varulv acts only as its bot
            state_store=oauth_state_store(engine),
            callback_options=CallbackOptions(
                success=lambda args: installed(args, engine), failure=not_installed
            ),
        )
        # From the store, without asking Slack on every request (see slackapp.authorize).
        oauth.authorize = CallableAuthorize(  # Bolt takes None as "not installed"
            logger=log,
            func=from_store(store, refresher),  # type: ignore[arg-type]
        )
        oauth_flow = LandingOAuthFlow(
            client=client,
            settings=oauth,
            retention_days=settings.retention_days,
            privacy_url=settings.privacy_url,
            support_url=settings.support_url,
        )
        unknown_workspace = not_installed_answer(install_url(settings))
    else:
        client = web_client(settings.bot_token, settings.api_url)
        bot = web_client(settings.bot_token, settings.api_url, wait_out_rate_limits=False)
        delivering = lambda workspace: bot  # noqa: E731 - one workspace, one client
    app = App(
        name=APP_NAME,
        signing_secret=settings.signing_secret,
        client=client,
        oauth_flow=oauth_flow,
        user_facing_authorize_error_message=unknown_workspace,
        # With one workspace's token, Bolt checks it with auth.test on the first request rather
        # than here, and again on the next one if Slack failed: one hiccup at Slack never stops
        # a boot. (Bolt asks nothing of it with an OAuth flow.)
        token_verification_enabled=False,
        # Acknowledge as soon as ack() returns; the work runs on step threads after it.
        process_before_response=True,
        listener_executor=StepExecutor(),
        request_verification_enabled=False,
    )
    if settings.multi_workspace:
        app.use(answer_reinstall)  # a workspace whose token can no longer be refreshed
    # In the database: every process of the deployment paces against the same budget.
    updates = Limit(settings.updates_per_minute / 60, settings.update_burst)
    pacer = Pacer(updates=updates, engine=engine)
    deliverer = Deliverer(
        sessions,
        delivering,
        # The channel service, built below with this deliverer, hears of its notices refused.
        report=lambda stream, event: _report(sessions, stream, event, now, channels),
        pacer=pacer,
        now=now,
    )
    deadlines = Deadlines(sessions, now=now)
    addresses = Addresses(settings.support_url, settings.source_url)
    names = Names(sessions, now)
    games = GameService(sessions, lengths, deliverer, deadlines, now, names, DirectMessages())
    channels = ChannelService(sessions, lengths, deliverer, now, addresses)
    inbox = Inbox(sessions, now)
    register(app, games, channels, names, inbox)
    return Varulv(
        app=app,
        engine=engine,
        sessions=sessions,
        games=games,
        channels=channels,
        deadlines=deadlines,
        deliverer=deliverer,
        standing=StandingTables(sessions, lengths, deliverer, games, now),
        wrap_ups=SeasonWrapUps(sessions, now),
        retention=Retention(sessions, settings.retention_days, now),
        signing_secret=settings.signing_secret,
        inbox=inbox,
    )


def _report(
    sessions: sessionmaker[Session],
    stream: int,
    event: Event,
    now: Callable[[], datetime],
    channels: ChannelService,
) -> None:
    """Slack refused a message for good: for a game's (its stream is the game's id), the
    machine decides what follows, and the deliverer, still delivering that game, sends
    whatever it says next; a channel's notice has no game to tell, but whoever made the change
    it told of is told privately. A channel that refuses the bot also stops its standing
    table (first, so that word can say so), and so does a workspace found without Varulv
    (one that removed it before its standing tables were paused with it), until it is
    installed again."""
    commit_step(sessions, stream, event, now)
    if isinstance(event, WorkspaceLeft):
        pause_for_channel_of(sessions, stream, standing.UNINSTALLED)
    if isinstance(event, ChannelUnwritable):
        paused_for = pause_for_channel_of(sessions, stream, event.error)
        channels.notice_refused(stream, event.error, paused_for)
