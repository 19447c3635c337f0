"""Configuration: the one module that reads the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from slackapp.game.settings import DAY, NIGHT, VOTE

SLACK_DEFAULT_API_URL = "https://slack.com/api/"
BOT_SCOPES = ("chat:write", "commands", "im:write", "users:read")
"""Every bot scope Varulv asks for; manifest.yml lists exactly these (a test checks)."""
COMMAND = "/varulv"
COMMAND_WORDS = ("help", "settings", "schedule", "stop", "score", "last", "forget me")
"""What may follow the command, besides nothing (or ``start``) to open a table; the manifests'
usage hint lists them in this order (a test checks)."""
USAGE_HINT = f"[{' | '.join(COMMAND_WORDS)}]"
INSTALL_PATH = "/slack/install"
OAUTH_REDIRECT_PATH = "/slack/oauth_redirect"


DEFAULT_PORT = 3000
DEFAULT_HOST = "0.0.0.0"
DEFAULT_METRICS_PORT = 9464
"""``/metrics``'s own port, never the one Slack posts to (the OpenTelemetry Prometheus
exporter's; nothing else of a usual host takes it)."""
DEFAULT_RETENTION_DAYS = 90
"""``VARULV_RETENTION_DAYS`` when unset: how many days an ended game is kept."""
DATABASE_WAIT_SECONDS = 30
"""How long ``varulv serve`` keeps trying to reach the database at start before it gives up."""
DATABASE_CONNECTIONS = 30
"""Connections a process opens to PostgreSQL at most (``VARULV_DATABASE_CONNECTIONS``); a thread
that needs one more waits for one to come back. All are kept once opened: with 10 kept and 20
more opened for each burst and closed after it, every burst of 50 ``/varulv`` started new
backends and parsed its statements anew on them (PostgreSQL's CPU a ``/varulv``: 2.4-2.6 ms
kept, 3.3-4.0 ms not)."""


class SettingsError(ValueError):
    """A setting Varulv cannot start with; the message is one line that names it."""


def _whole_number(name: str, default: int, low: int, high: int, unit: str) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise SettingsError(f"{name} must be {unit} from {low} to {high}, not {raw!r}")
    return value


def _seconds(name: str, default: int, bounds: tuple[int, int]) -> int:
    """A phase length: the same bounds as a channel's settings form."""
    return _whole_number(name, default, *bounds, "a whole number of seconds")


def port_number(raw: str, name: str = "the port", lowest: int = 1) -> int:
    """A TCP port to listen on, from text a person typed (0, where allowed, is any free one)."""
    try:
        port = int(raw)
    except ValueError:
        port = -1
    if not lowest <= port <= 65535:
        raise SettingsError(f"{name} must be a number from {lowest} to 65535, not {raw!r}")
    return port


def port_from_env() -> int:
    """``PORT`` as the platform gives it, else 3000."""
    raw = os.environ.get("PORT", "").strip()
    return port_number(raw, "PORT") if raw else DEFAULT_PORT


def metrics_port_from_env() -> int | None:
    """``VARULV_METRICS_PORT``: where ``/metrics`` is served, else 9464; 0 serves none."""
    raw = os.environ.get("VARULV_METRICS_PORT", "").strip()
    port = port_number(raw, "VARULV_METRICS_PORT", lowest=0) if raw else DEFAULT_METRICS_PORT
    return port or None


def _on_or_off(name: str) -> bool:
    """A switch: ``on`` (the default) or ``off``."""
    raw = os.environ.get(name, "").strip().lower()
    if raw in ("", "on"):
        return True
    if raw == "off":
        return False
    raise SettingsError(f"{name} must be on or off, not {raw!r}")


def prepared_statements_from_env() -> bool:
    """``VARULV_PREPARED_STATEMENTS``: ``on`` (the default) or ``off``, for a pooler between
    the app and PostgreSQL that cannot keep a connection's prepared statements (PgBouncer in
    transaction mode before 1.22, or without ``max_prepared_statements``)."""
    return _on_or_off("VARULV_PREPARED_STATEMENTS")


def phase_lengths_from_env() -> tuple[int, int, int]:
    """The night, day and vote lengths of channels that chose none, in seconds."""
    return (
        _seconds("VARULV_NIGHT_SECONDS", NIGHT.default, NIGHT.bounds),
        _seconds("VARULV_DAY_SECONDS", DAY.default, DAY.bounds),
        _seconds("VARULV_VOTE_SECONDS", VOTE.default, VOTE.bounds),
    )


def log_level_from_env() -> str:
    """``VARULV_LOG_LEVEL`` as given (upper case), else ``INFO``."""
    return (os.environ.get("VARULV_LOG_LEVEL") or "INFO").strip().upper()


def slack_credentials_in_env() -> bool:
    """Whether Slack credentials are set, so that ``varulv`` alone serves Slack."""
    return bool(os.environ.get("SLACK_BOT_TOKEN") or os.environ.get("SLACK_CLIENT_ID"))


def _web_address(name: str, mail: bool = False) -> str | None:
    """An address a page links, from the environment; None when unset."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    schemes = ("https://", "http://", "mailto:") if mail else ("https://", "http://")
    if not raw.startswith(schemes) or any(c.isspace() or c in '"<>' for c in raw):
        kinds = "a web address or a mailto: address" if mail else "a web address"
        raise SettingsError(f"{name} must be {kinds} (https://…), not {raw!r}")
    return raw


def token_keys_from_env() -> tuple[str, ...]:
    """``VARULV_TOKEN_KEY``: Fernet keys, newest first, comma-separated; none when unset."""
    raw = os.environ.get("VARULV_TOKEN_KEY", "")
    keys = tuple(key.strip() for key in raw.split(",") if key.strip())
    if not keys:
        return keys
    from cryptography.fernet import Fernet  # only then: every start would pay for the import

    for place, key in enumerate(keys, 1):
        try:
            Fernet(key)
        except ValueError:
            raise SettingsError(
                f"VARULV_TOKEN_KEY must be Fernet keys (44 characters of URL-safe base64 each, "
                f"newest first, separated by commas); key {place} of {len(keys)} is not one"
            ) from None
    return keys


POSTGRES_SCHEMES = ("postgres://", "postgresql://", "postgresql+psycopg://")
"""How ``DATABASE_URL`` may begin: the platforms' ``postgres://`` or libpq's ``postgresql://``."""


def database_url_from_env() -> str | None:
    """``DATABASE_URL``; None when unset. One that is no PostgreSQL URL is refused in a line that
    never repeats it, since it holds the password."""
    raw = os.environ.get("DATABASE_URL") or None
    if raw is None:
        return None
    from sqlalchemy import make_url  # only then: a start without it need not import it
    from sqlalchemy.exc import ArgumentError

    shape = "postgresql://user:password@host:5432/name"
    scheme, found, _ = raw.partition("://")
    if not raw.startswith(POSTGRES_SCHEMES):
        sane = found and scheme.isascii() and scheme.replace("+", "").isalnum()
        what = f"a {scheme}:// one" if sane and len(scheme) <= 20 else "something else"
        raise SettingsError(f"DATABASE_URL must be a PostgreSQL URL ({shape}), not {what}")
    unreadable = SettingsError(
        f"DATABASE_URL cannot be read as a URL ({shape}): a port that is no number, or "
        "one of :/@?# in the password not written as %3A %2F %40 %3F %23"
    )
    try:
        url = make_url(raw)
    except (ValueError, ArgumentError):
        raise unreadable from None
    if "@" in (url.host or ""):  # an @ of the password read as the host's: it would be logged
        raise unreadable
    return raw


def child_environment(changes: Mapping[str, str | None]) -> dict[str, str]:
    """This process's environment with ``changes`` made (None unsets), for a process it starts."""
    env = {**os.environ, **{name: value for name, value in changes.items() if value is not None}}
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
    return env


def hand_down_database_url(url: str) -> None:
    """``DATABASE_URL`` set to ``url`` for the processes this one starts (uvicorn's workers,
    which read their settings afresh): the embedded database's address once it runs."""
    os.environ["DATABASE_URL"] = url


METRICS_FOLDER_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's own name for it


def metrics_folder_from_env() -> str | None:
    """Where worker processes write their metrics' samples (prometheus_client's multiprocess
    mode); None when they are kept in this process alone."""
    return os.environ.get(METRICS_FOLDER_ENV) or None


def hand_down_metrics_folder(folder: str) -> None:
    """The samples' folder named for the workers this process starts, and for
    prometheus_client in each of them, which reads it on import."""
    os.environ[METRICS_FOLDER_ENV] = folder


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
    workers: int = 1
    threads: int = 8
    database_wait_seconds: int = DATABASE_WAIT_SECONDS
    database_connections: int = DATABASE_CONNECTIONS
    """``VARULV_DATABASE_CONNECTIONS``: connections a process opens to PostgreSQL at most, and
    keeps."""
    prepared_statements: bool = True
    """``VARULV_PREPARED_STATEMENTS``: psycopg prepares a statement a connection runs again
    (off: never, for a pooler that cannot keep them)."""
    timers: bool = True
    """``VARULV_TIMERS``: ``varulv serve`` keeps the timers (the deadlines and the sweeps);
    off, it leaves them to ``varulv work``, so that a storm of deadlines never holds up its
    acknowledgements."""
    request_seconds: int = 10
    """How long a request's head, and then its body, may take to arrive."""
    ready_behind_seconds: int = 120
    """``VARULV_READY_BEHIND_SECONDS``: ``/readyz`` fails once a message has been due, or a
    deadline passed, this long ago (a storm of a thousand deadlines takes seconds)."""
    updates_per_minute: int = 50
    """chat.update calls a minute per workspace the deliverer paces itself to (Tier 3)."""
    update_burst: int = 50
    """chat.update calls a workspace may make at once before that pace applies."""
    host: str = DEFAULT_HOST
    metrics_port: int | None = None
    """``VARULV_METRICS_PORT``: ``/metrics`` on a port of its own on ``host`` (None: not
    served), so Slack's public address never shows it."""
    token_keys: tuple[str, ...] = ()
    """``VARULV_TOKEN_KEY``: the stored Slack tokens are encrypted with the first (Fernet)."""
    retention_days: int = DEFAULT_RETENTION_DAYS
    """``VARULV_RETENTION_DAYS``: ended games are deleted after that (slackapp.db.retention)."""
    privacy_url: str | None = None
    """``VARULV_PRIVACY_URL``: the privacy policy the install page links (Slack's review asks)."""
    support_url: str | None = None
    """``VARULV_SUPPORT_URL``: where people ask for help (``https://…`` or ``mailto:…``)."""
    source_url: str | None = None
    """``VARULV_SOURCE_URL``: the project's published source, with the referee file's release;
    the screens that tell people how to check a game name it."""

    @property
    def multi_workspace(self) -> bool:
        """With the app's OAuth credentials, any workspace can install it ("Add to Slack")."""
        return bool(self.client_id and self.client_secret)

    def problems(self, command: str = "serve") -> list[str]:
        """Why ``varulv serve`` (or ``varulv work``, which listens on no ``PORT``) cannot start
        with these settings; empty when it can."""
        serves = command == "serve"
        if serves and self.metrics_port is not None and self.metrics_port == self.port:
            return ["VARULV_METRICS_PORT must differ from PORT: /metrics is never beside Slack."]
        if bool(self.client_id) != bool(self.client_secret):
            return ["Set both SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, or neither."]
        if self.multi_workspace:
            if self.app_token:
                return [
                    "Socket Mode (SLACK_APP_TOKEN) serves one workspace with SLACK_BOT_TOKEN; "
                    "“Add to Slack” (SLACK_CLIENT_ID/SECRET) needs HTTP. Unset one of them."
                ]
            if not self.signing_secret:
                return [f"varulv {command} needs SLACK_SIGNING_SECRET in the environment."]
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
                f"varulv {command} needs {' and '.join(missing)} in the environment "
                "(or SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_SIGNING_SECRET for "
                "“Add to Slack”)."
            ]
        return []

    @classmethod
    def from_env(cls) -> Settings:
        """The settings in the environment; ``SettingsError`` names the first one unusable."""
        env = os.environ
        night_seconds, day_seconds, vote_seconds = phase_lengths_from_env()
        return cls(
            bot_token=env.get("SLACK_BOT_TOKEN") or None,
            signing_secret=env.get("SLACK_SIGNING_SECRET") or None,
            app_token=env.get("SLACK_APP_TOKEN") or None,
            database_url=database_url_from_env(),
            api_url=env.get("SLACK_API_URL") or SLACK_DEFAULT_API_URL,
            port=port_from_env(),
            night_seconds=night_seconds,
            day_seconds=day_seconds,
            vote_seconds=vote_seconds,
            data_dir=env.get("VARULV_DATA_DIR") or os.path.join(os.getcwd(), ".pgdata"),
            client_id=env.get("SLACK_CLIENT_ID") or None,
            client_secret=env.get("SLACK_CLIENT_SECRET") or None,
            redirect_uri=env.get("SLACK_REDIRECT_URI") or None,
            workers=_whole_number("WEB_CONCURRENCY", 1, 1, 64, "a number of processes"),
            threads=_whole_number("VARULV_THREADS", 8, 1, 256, "a number of threads"),
            database_wait_seconds=_whole_number(
                "VARULV_DATABASE_WAIT_SECONDS",
                DATABASE_WAIT_SECONDS,
                0,
                3600,
                "a number of seconds",
            ),
            database_connections=_whole_number(
                "VARULV_DATABASE_CONNECTIONS",
                DATABASE_CONNECTIONS,
                2,
                1000,
                "a number of connections",
            ),
            prepared_statements=prepared_statements_from_env(),
            timers=_on_or_off("VARULV_TIMERS"),
            request_seconds=_whole_number(
                "VARULV_REQUEST_SECONDS", 10, 1, 300, "a number of seconds"
            ),
            ready_behind_seconds=_whole_number(
                "VARULV_READY_BEHIND_SECONDS", 120, 5, 86400, "a number of seconds"
            ),
            host=env.get("HOST") or DEFAULT_HOST,
            metrics_port=metrics_port_from_env(),
            token_keys=token_keys_from_env(),
            privacy_url=_web_address("VARULV_PRIVACY_URL"),
            support_url=_web_address("VARULV_SUPPORT_URL", mail=True),
            source_url=_web_address("VARULV_SOURCE_URL"),
            retention_days=_whole_number(
                "VARULV_RETENTION_DAYS", DEFAULT_RETENTION_DAYS, 1, 36500, "a number of days"
            ),
            updates_per_minute=_whole_number(
                "VARULV_UPDATES_PER_MINUTE", 50, 1, 1_000_000, "a number of calls a minute"
            ),
            update_burst=_whole_number(
                "VARULV_UPDATE_BURST", 50, 1, 1_000_000, "a number of calls"
            ),
        )
