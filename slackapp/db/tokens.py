"""Slack tokens encrypted at rest, with Fernet keys from ``VARULV_TOKEN_KEY``.

The installation store keeps each workspace's bot token (and, with token rotation, its refresh
token). With keys set, :class:`SealedInstallationStore` wraps slack_sdk's store: it encrypts the
tokens of what it saves and decrypts those of what it finds, so everything that reads the store
(authorize, the deliverer, the token refresh) sees plain tokens and the table holds only
``fernet:…``. Keys are comma-separated, newest first: tokens are encrypted with the first, and
read with any (``varulv rotate-token-key`` re-encrypts them all with the first).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from logging import Logger
from typing import TYPE_CHECKING, TypeVar

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore
from sqlalchemy import Connection, Engine, select, update

from slackapp.db.slack_tables import TOKEN_COLUMNS, slack_metadata

if TYPE_CHECKING:
    from slackapp.config import Settings

SEALED = "fernet:"
"""What a stored token encrypted by Varulv starts with; Slack's tokens start with ``xox``."""

Stored = TypeVar("Stored", Bot, Installation)


class TokenKeyError(RuntimeError):
    """A stored token that cannot be read with the keys given; the message says what to do."""


NO_KEY = (
    "the database holds encrypted Slack tokens and VARULV_TOKEN_KEY is not set: set it to the "
    "key they were encrypted with"
)
WRONG_KEY = (
    "a Slack token in the database was encrypted with a key VARULV_TOKEN_KEY does not hold: "
    "add that key after the new one (comma-separated) and run varulv rotate-token-key"
)


class TokenKeys:
    """Fernet keys, newest first (what ``VARULV_TOKEN_KEY`` holds)."""

    def __init__(self, keys: Sequence[str]) -> None:
        if not keys:
            raise ValueError("at least one key")
        self.fernet = MultiFernet([Fernet(key) for key in keys])

    def seal(self, token: str | None) -> str | None:
        if not token or token.startswith(SEALED):
            return token
        return SEALED + self.fernet.encrypt(token.encode()).decode()

    def reseal(self, stored: str | None) -> str | None:
        """Encrypted with the newest key, whichever (if any) it was encrypted with."""
        if not stored:
            return stored
        if not stored.startswith(SEALED):
            return self.seal(stored)
        try:
            return SEALED + self.fernet.rotate(stored[len(SEALED) :].encode()).decode()
        except InvalidToken:
            raise TokenKeyError(WRONG_KEY) from None

    def open(self, stored: str | None) -> str | None:
        return open_token(self, stored)


def open_token(keys: TokenKeys | None, stored: str | None) -> str | None:
    """The token as Slack gave it; one stored before encryption was set is plain already."""
    if not stored or not stored.startswith(SEALED):
        return stored
    if keys is None:
        raise TokenKeyError(NO_KEY)
    try:
        return keys.fernet.decrypt(stored[len(SEALED) :].encode()).decode()
    except InvalidToken:
        raise TokenKeyError(WRONG_KEY) from None


def _with_tokens(stored: Stored, change: Callable[[str | None], str | None]) -> Stored:
    """A copy of ``stored`` whose token fields went through ``change``."""
    changed = copy.copy(stored)
    for name in ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token"):
        if hasattr(changed, name):
            setattr(changed, name, change(getattr(changed, name)))
    return changed


class SealedInstallationStore(InstallationStore):
    """slack_sdk's store, its tokens encrypted on the way in and decrypted on the way out;
    every lookup (by team, by enterprise, org-wide installs) is the wrapped store's own.
    Without keys it stores tokens as given, and refuses to hand out one it cannot read."""

    def __init__(
        self,
        store: InstallationStore,
        keys: TokenKeys | None,
        finder: InstallationStore | None = None,
    ) -> None:
        self.store = store
        self.keys = keys
        self.finder = finder or store
        """Where lookups go (the same tables, read outside a transaction: one a request)."""
        self.engine = getattr(store, "engine", None)
        """The wrapped store's database, for the token refresh's lock (slackapp.authorize)."""

    @property
    def logger(self) -> Logger:
        return self.store.logger

    def _sealed(self, stored: Stored) -> Stored:
        return stored if self.keys is None else _with_tokens(stored, self.keys.seal)

    def _opened(self, stored: Stored | None) -> Stored | None:
        if stored is None:
            return None
        return _with_tokens(stored, lambda token: open_token(self.keys, token))

    def save(self, installation: Installation) -> None:
        self.store.save(self._sealed(installation))

    def save_bot(self, bot: Bot) -> None:
        self.store.save_bot(self._sealed(bot))

    def find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        return self._opened(
            self.finder.find_bot(
                enterprise_id=enterprise_id,
                team_id=team_id,
                is_enterprise_install=is_enterprise_install,
            )
        )

    def find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        return self._opened(
            self.finder.find_installation(
                enterprise_id=enterprise_id,
                team_id=team_id,
                user_id=user_id,
                is_enterprise_install=is_enterprise_install,
            )
        )

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.store.delete_bot(enterprise_id=enterprise_id, team_id=team_id)

    def delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        self.store.delete_installation(
            enterprise_id=enterprise_id, team_id=team_id, user_id=user_id
        )

    def delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.store.delete_all(enterprise_id=enterprise_id, team_id=team_id)


def reseal_all(connection: Connection, keys: TokenKeys, to_plain_text: bool = False) -> int:
    """Every stored token encrypted with the newest key (or, ``to_plain_text``, decrypted, so
    that reading them needs no key); how many changed. The caller commits."""
    tables = slack_metadata().tables
    changed = 0
    for name, columns in TOKEN_COLUMNS.items():
        table = tables[name]
        rows = connection.execute(select(table.c.id, *(table.c[c] for c in columns))).all()
        for row in rows:
            values = {}
            for column, stored in zip(columns, row[1:], strict=True):
                new = open_token(keys, stored) if to_plain_text else keys.reseal(stored)
                if new != stored:
                    values[column] = new
            if values:
                connection.execute(update(table).where(table.c.id == row[0]).values(**values))
                changed += len(values)
    return changed


def any_sealed(connection: Connection) -> bool:
    """Whether any stored token is encrypted (so reading it needs a key)."""
    tables = slack_metadata().tables
    for name, columns in TOKEN_COLUMNS.items():
        table = tables[name]
        for column in columns:
            query = select(table.c.id).where(table.c[column].startswith(SEALED)).limit(1)
            if connection.execute(query).first() is not None:
                return True
    return False


def rotate_token_key(engine: Engine, keys: Sequence[str], to_plain_text: bool = False) -> str:
    """``varulv rotate-token-key``: every stored token encrypted with the first key (or
    decrypted); what was done, for a person."""
    decrypting = (
        "every key the stored tokens were encrypted with (comma-separated), and run varulv "
        "rotate-token-key --to-plain-text again; nothing changed"
    )
    if not keys and to_plain_text:
        raise TokenKeyError(f"set VARULV_TOKEN_KEY to {decrypting}")
    if not keys:
        raise TokenKeyError(
            "set VARULV_TOKEN_KEY to the new key, followed by the old ones (comma-separated); "
            "make a key with: python -c 'from cryptography.fernet import Fernet; "
            "print(Fernet.generate_key().decode())'"
        )
    try:
        with engine.begin() as connection:
            changed = reseal_all(connection, TokenKeys(keys), to_plain_text)
    except TokenKeyError:
        if not to_plain_text:
            raise
        raise TokenKeyError(
            f"a Slack token in the database was encrypted with a key VARULV_TOKEN_KEY does not "
            f"hold: set VARULV_TOKEN_KEY to {decrypting}"
        ) from None
    tokens = f"{changed} stored token{'' if changed == 1 else 's'}"
    if to_plain_text:
        return f"decrypted {tokens}: Varulv now runs without VARULV_TOKEN_KEY"
    rest = " (the other keys in VARULV_TOKEN_KEY may now be removed)" if len(keys) > 1 else ""
    return f"encrypted {tokens} with the first key of VARULV_TOKEN_KEY{rest}"


def unreadable_tokens(engine: Engine, settings: Settings) -> str | None:
    """Why ``varulv serve`` could not read the stored tokens, found before it serves."""
    if settings.token_keys or not settings.multi_workspace:
        return None
    with engine.connect() as connection:
        return NO_KEY if any_sealed(connection) else None
