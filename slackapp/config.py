"""Configuration, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass

SLACK_DEFAULT_API_URL = "https://slack.com/api/"
BOT_SCOPES = ("chat:write", "commands", "im:write", "users:read")
"""Every bot scope Varulv asks for; manifest.yml lists exactly these (a test checks)."""
INSTALL_PATH = "/slack/install"
OAUTH_REDIRECT_PATH = "/slack/oauth_redirect"


def _seconds(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = int(raw)
    if value < 1:
        raise ValueError(f"{name} must be a positive number of seconds, not {raw!r}")
    return value


@dataclass(frozen=True)
class Settings:
    bot_token: str | None
    signing_secret: str | None
    app_token: str | None
    database_url: str | None
    api_url: str
    port: int
    night_seconds: int
    day_seconds: int
    vote_seconds: int
    data_dir: str
    client_id: str | None = None
    client_secret: str | None = None
    redirect_uri: str | None = None
    """Where Slack sends an admin back after "Allow"; unset, the app's configured one."""
    request_seconds: int = 10
    """How long a request's head, and then its body, may take to arrive."""

    @property
    def multi_workspace(self) -> bool:
        """With the app's OAuth credentials, any workspace can install it ("Add to Slack")."""
        return bool(self.client_id and self.client_secret)

    def problems(self) -> list[str]:
        """Why ``varulv serve`` cannot start with these settings; empty when it can."""
        if bool(self.client_id) != bool(self.client_secret):
            return ["Set both SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, or neither."]
        if self.multi_workspace:
            if self.app_token:
                return [
                    "Socket Mode (SLACK_APP_TOKEN) serves one workspace with SLACK_BOT_TOKEN; "
                    "“Add to Slack” (SLACK_CLIENT_ID/SECRET) needs HTTP. Unset one of them."
                ]
            if not self.signing_secret:
                return ["varulv serve needs SLACK_SIGNING_SECRET in the environment."]
            return []
        missing = [
            name
            for name, value in (
                ("SLACK_BOT_TOKEN", self.bot_token),
                ("SLACK_SIGNING_SECRET", self.signing_secret or self.app_token),
            )
            if not value
        ]
        if missing:
            return [
                f"varulv serve needs {' and '.join(missing)} in the environment "
                "(or SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_SIGNING_SECRET for "
                "“Add to Slack”)."
            ]
        return []

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        return cls(
            bot_token=env.get("SLACK_BOT_TOKEN") or None,
            signing_secret=env.get("SLACK_SIGNING_SECRET") or None,
            app_token=env.get("SLACK_APP_TOKEN") or None,
            database_url=env.get("DATABASE_URL") or None,
            api_url=env.get("SLACK_API_URL") or SLACK_DEFAULT_API_URL,
            port=int(env.get("PORT") or 3000),
            night_seconds=_seconds("VARULV_NIGHT_SECONDS", 120),
            day_seconds=_seconds("VARULV_DAY_SECONDS", 300),
            vote_seconds=_seconds("VARULV_VOTE_SECONDS", 120),
            data_dir=env.get("VARULV_DATA_DIR") or os.path.join(os.getcwd(), ".pgdata"),
            client_id=env.get("SLACK_CLIENT_ID") or None,
            client_secret=env.get("SLACK_CLIENT_SECRET") or None,
            redirect_uri=env.get("SLACK_REDIRECT_URI") or None,
            request_seconds=_seconds("VARULV_REQUEST_SECONDS", 10),
        )
