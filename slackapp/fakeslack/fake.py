"""FakeSlack: a local Slack composed of its parts, each in a module of its own.

The workspace's state (:class:`Workspace`), the credentials Slack hands out and checks
(:class:`Grants`), the Web API over both (:class:`WebApi`), the HTTP server in front of it
(:class:`SlackHttpServer`), and the people who act in the workspace (:class:`People`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Self
from urllib.parse import parse_qs, urlencode, urlsplit

from slackapp.fakeslack.client import AppClient
from slackapp.fakeslack.grants import Grants
from slackapp.fakeslack.limits import SLACK, RateLimits
from slackapp.fakeslack.models import Call, Identity
from slackapp.fakeslack.people import People
from slackapp.fakeslack.server import SlackHttpServer
from slackapp.fakeslack.webapi import WebApi
from slackapp.fakeslack.workspace import Workspace

DEFAULT_APP_URL = "http://127.0.0.1:3000/slack/events"


class FakeSlack:
    """A local Slack: serves the Web API the app calls, and sends the app signed requests.

    Use as a context manager (or start()/stop()). What the workspace holds and what the
    people do are its parts' own methods, named here too: messages(), dm_messages(),
    modals(), wait_for()... from :class:`Workspace`; slash_command(), click(),
    click_button(), select(), view_submission(), event()... from :class:`People`.
    """

    def __init__(
        self,
        signing_secret: str,
        team_id: str = "T0001",
        bot_user_id: str = "UBOT",
        *,
        tokens: Iterable[str] = ("xoxb-test",),
        app_url: str = DEFAULT_APP_URL,
        channels: Mapping[str, str] | None = None,
        users: Mapping[str, str] | None = None,
        client_id: str = "1000000000.2000000000",
        client_secret: str = "fake-client-secret",
        verification_token: str = "fake-verification-token",
        trigger_ttl: float = 3.0,
        token_lifetime: int | None = None,
        ack_timeout: float = 10.0,
        host: str = "127.0.0.1",
        port: int = 0,
        enterprise_id: str | None = None,
        org_wide: bool = False,
        limits: RateLimits = SLACK,
    ) -> None:
        """``enterprise_id``: the workspace belongs to that Enterprise Grid organisation;
        ``org_wide``: the app is installed on the whole organisation, not the workspace;
        ``limits``: the rate limits it enforces (Slack's, unless a test wants others)."""
        if org_wide and enterprise_id is None:
            raise ValueError("only an Enterprise Grid organisation has org-wide installs")
        self.identity = Identity(
            team_id=team_id,
            bot_user_id=bot_user_id,
            enterprise_id=enterprise_id,
            org_wide=org_wide,
        )
        self.workspace = Workspace(self.identity, channels=channels, users=users)
        self.grants = Grants(
            tokens,
            client_id=client_id,
            client_secret=client_secret,
            trigger_ttl=trigger_ttl,
            token_lifetime=token_lifetime,
        )
        self.api = WebApi(self.workspace, self.grants, limits)
        self._http = SlackHttpServer(self.api, host, port)
        self._app = AppClient(signing_secret, app_url, ack_timeout)
        self.people = People(
            self.workspace,
            self.grants,
            self.api,
            self._app,
            response_base_url=self._http.base_url,
            verification_token=verification_token,
        )
        workspace, people = self.workspace, self.people
        # What tests and the sandbox page read and set up in the workspace.
        self.add_user = workspace.add_user
        self.set_role = workspace.set_role
        self.user_name = workspace.user_name
        self.add_channel = workspace.add_channel
        self.invite_bot = workspace.invite_bot
        self.archive_channel = workspace.archive_channel
        self.channel_name = workspace.channel_name
        self.channels = workspace.channels
        self.dm_channel = workspace.dm_channel
        self.dm_channels = workspace.dm_channels
        self.next_ts = workspace.next_ts
        self.add_message = workspace.add_message
        self.get_message = workspace.get_message
        self.remove_message = workspace.remove_message
        self.shown_text = workspace.shown_text
        self.shown_name = workspace.shown_name
        self.message = workspace.message
        self.messages = workspace.messages
        self.dm_messages = workspace.dm_messages
        self.ephemerals = workspace.ephemerals
        self.latest = workspace.latest
        self.find_message = workspace.find_message
        self.find_button = workspace.find_button
        self.home_view = workspace.home_view
        self.modals = workspace.modals
        self.close_modal = workspace.close_modal
        self.calls_to = workspace.calls_to
        self.wait_for = workspace.wait_for
        self.wait_for_message = workspace.wait_for_message
        # What the people do.
        self.slash_command = people.slash_command
        self.click = people.click
        self.click_button = people.click_button
        self.select = people.select
        self.click_home_button = people.click_home_button
        self.view_submission = people.view_submission
        self.event = people.event
        self.app_home_opened = people.app_home_opened
        self.app_uninstalled = people.app_uninstalled
        self.tokens_revoked = people.tokens_revoked
        self.keeping_requests = people.keeping_requests
        self.send = people.send
        self.show_answer = people.show_answer
        self.post_to_app = people.post_to_app
        self.deliver_over = people.deliver_over

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> Self:
        """Start serving the Web API."""
        self._http.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._http.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def api_url(self) -> str:
        """The app's ``SLACK_API_URL``: ``http://127.0.0.1:PORT/api/``."""
        return self._http.api_url

    @property
    def app_url(self) -> str:
        """Where requests to the app go (its Request URL in Slack's app settings)."""
        return self._app.app_url

    @app_url.setter
    def app_url(self, url: str) -> None:
        self._app.app_url = url

    @property
    def ack_latencies(self) -> list[float]:
        """Seconds the app took to answer each request, oldest first."""
        return self._app.ack_latencies

    @property
    def calls(self) -> list[Call]:
        """Every request the app made, oldest first."""
        return self.workspace.calls

    @property
    def limits(self) -> RateLimits:
        """The rate limits enforced now; set new ones (every bucket full again) at any time."""
        return self.api.limiter.limits

    @limits.setter
    def limits(self, limits: RateLimits) -> None:
        self.api.limiter.limits = limits

    @property
    def version(self) -> int:
        """A counter bumped by every change in the workspace, for cheap "anything new?" checks."""
        return self.workspace.version

    # -- installing the app ----------------------------------------------------------

    def approve_install(self, authorize_url: str, user_id: str = "UADMIN") -> str:
        """Press "Allow" on the app's install page: the redirect URL with a fresh code.

        ``authorize_url`` is the ``https://slack.com/oauth/v2/authorize?...`` link
        the app offers; its client_id must match and its state is passed back.
        """
        query = {k: v[0] for k, v in parse_qs(urlsplit(authorize_url).query).items()}
        if query.get("client_id") != self.grants.client_id:
            raise ValueError(f"unknown client_id {query.get('client_id')!r}")
        if "redirect_uri" not in query:
            raise ValueError("the install link has no redirect_uri")
        self.workspace.add_user(user_id)
        answer = {"code": self.grants.issue_code(user_id), "state": query.get("state", "")}
        return f"{query['redirect_uri']}?{urlencode(answer)}"
