"""Configuration, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass

SLACK_DEFAULT_API_URL = "https://slack.com/api/"


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
        )
