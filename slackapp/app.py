"""The Bolt app: the Web API client(s), the game steps, the timers, the listeners.

Two ways to run. With ``SLACK_BOT_TOKEN`` Varulv serves the one workspace that token belongs
to. With ``SLACK_CLIENT_ID`` and ``SLACK_CLIENT_SECRET`` it serves every workspace that adds it
through "Add to Slack" (``/slack/install``): Bolt runs the OAuth flow and keeps installations in
the app's own database, and each game step acts with its own workspace's bot token.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from slack_bolt import App, BoltResponse
from slack_bolt.authorization.authorize import CallableAuthorize
from slack_bolt.oauth.callback_options import CallbackOptions, FailureArgs, SuccessArgs
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.oauth.installation_store import InstallationStore
from slack_sdk.oauth.token_rotation import TokenRotator

from slackapp.acks import AckFirst, StepExecutor
from slackapp.authorize import from_store
from slackapp.config import BOT_SCOPES, INSTALL_PATH, OAUTH_REDIRECT_PATH, Settings
from slackapp.db.engine import make_engine, make_sessions
from slackapp.db.installations import installation_store, oauth_state_store
from slackapp.flow.journal import keep_journal
from slackapp.flow.table import Lengths, NotInstalled, Table
from slackapp.listeners import register
from slackapp.logs import log_context
from slackapp.timers import Deadlines

log = logging.getLogger(__name__)

NOT_INSTALLED = (
    "Varulv isn't installed in this workspace any more. A workspace admin can add it again "
    "from its “Add to Slack” page."
)


@dataclass
class Varulv:
    app: App
    table: Table
    deadlines: Deadlines
    acks: AckFirst = field(default_factory=AckFirst)
    """Requests being acknowledged, which the game steps let go first."""
    signing_secret: str | None = None


def web_client(token: str | None, api_url: str) -> WebClient:
    client = WebClient(token=token, base_url=api_url)
    # Slack's 429 answers carry Retry-After; slack_sdk waits that long and tries again.
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=3))
    return client


class InstalledClients:
    """Each workspace's bot client, from its installation; looked up afresh for every step, so a
    reinstall's new token or an uninstall takes effect at once in every process."""

    def __init__(self, store: InstallationStore, api_url: str) -> None:
        self.store = store
        self.api_url = api_url

    def __call__(self, team_id: str) -> WebClient:
        bot = self.store.find_bot(enterprise_id=None, team_id=team_id)
        if bot is None or not bot.bot_token:
            raise NotInstalled(team_id)
        return web_client(bot.bot_token, self.api_url)


def installed(args: SuccessArgs) -> BoltResponse:
    """Log the new installation, then show Slack's usual "Thank you!" page."""
    with log_context(team_id=args.installation.team_id, user_id=args.installation.user_id):
        log.info("workspace installed")
    return args.default.success(args)


def not_installed(args: FailureArgs) -> BoltResponse:
    log.warning("an installation failed: %s", args.reason)
    return args.default.failure(args)


def build(settings: Settings, database_url: str, acks: AckFirst | None = None) -> Varulv:
    """Wire everything; the caller starts the timers (``deadlines.start()``) once serving.

    ``acks``: what the steps wait for (shared by a server's workers); this process's own if None.
    """
    engine = make_engine(database_url)
    sessions = make_sessions(engine)
    keep_journal(sessions)
    lengths = Lengths(settings.night_seconds, settings.day_seconds, settings.vote_seconds)
    acks = acks or AckFirst()
    if settings.multi_workspace:
        assert settings.client_id and settings.client_secret
        store = installation_store(engine, settings.client_id)
        # Tokenless: Bolt gives each request a copy with that workspace's token, and the OAuth
        # flow exchanges codes with it, so every call honours SLACK_API_URL.
        client = web_client(None, settings.api_url)
        table = Table(
            sessions=sessions,
            client=client,
            lengths=lengths,
            clients=InstalledClients(store, settings.api_url),
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
            callback_options=CallbackOptions(success=installed, failure=not_installed),
        )
        # From the store, without asking Slack on every request (see slackapp.authorize).
        rotator = TokenRotator(
            client_id=settings.client_id, client_secret=settings.client_secret, client=client
        )
        oauth.authorize = CallableAuthorize(  # Bolt takes None as "not installed"
            logger=log,
            func=from_store(store, rotator),  # type: ignore[arg-type]
        )
        app = App(
            signing_secret=settings.signing_secret,
            client=client,
            oauth_settings=oauth,
            user_facing_authorize_error_message=NOT_INSTALLED,
            # Acknowledge as soon as ack() returns; the work runs in lazy listeners after it.
            process_before_response=True,
            listener_executor=StepExecutor(acks),
        )
    else:
        client = web_client(settings.bot_token, settings.api_url)
        table = Table(sessions=sessions, client=client, lengths=lengths)
        app = App(
            signing_secret=settings.signing_secret,
            client=client,
            # Bolt checks the token with auth.test on the first request rather than here, and
            # again on the next one if Slack failed: one hiccup at Slack never stops a boot.
            token_verification_enabled=False,
            process_before_response=True,
            listener_executor=StepExecutor(acks),
        )
    deadlines = Deadlines(table, acks=acks)
    table.alarm = deadlines
    register(app, table)
    return Varulv(
        app=app,
        table=table,
        deadlines=deadlines,
        acks=acks,
        signing_secret=settings.signing_secret,
    )
