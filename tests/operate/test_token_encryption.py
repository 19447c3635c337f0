"""Slack tokens at rest: encrypted with VARULV_TOKEN_KEY (Fernet), readable by everything that
reads the store, encrypted by the migration when they were stored before, re-encrypted by
``varulv rotate-token-key``, and never silently unreadable."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from cryptography.fernet import Fernet
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from sqlalchemy import Engine, text

from slackapp.db.engine import make_engine
from slackapp.db.installations import installation_store
from slackapp.db.migrate import alembic_config, upgrade
from slackapp.db.tokens import NO_KEY, SEALED, TokenKeyError, TokenKeys
from slackapp.serving import free_port
from tests.databases import fresh_database, migrated_database
from tests.operate.test_startup import MULTI_CREDENTIALS, assert_refused, varulv

CLIENT_ID = MULTI_CREDENTIALS["SLACK_CLIENT_ID"]
OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()
ROTATING_TOKEN = "xoxe.xoxb-1-" + "M" * 140
"""As long as a rotating token gets: encrypted, far past slack_sdk's 200 characters."""


@pytest.fixture
def engine(postgres: str) -> Iterator[Engine]:
    engine = make_engine(migrated_database(postgres, "tokens"))
    yield engine
    engine.dispose()


def stored_tokens(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT bot_token, bot_refresh_token FROM slack_bots UNION ALL "
                "SELECT bot_token, user_token FROM slack_installations"
            )
        ).all()
    return [token for row in rows for token in row if token]


def org_installation(token: str = ROTATING_TOKEN) -> Installation:
    return Installation(
        app_id="A0001",
        enterprise_id="E0ORG",
        team_id=None,
        user_id="U0ADMIN",
        bot_token=token,
        bot_refresh_token="xoxe-1-refresh",
        bot_token_expires_in=43200,
        bot_id="B0001",
        bot_user_id="U0BOT",
        user_token="xoxp-user",
        is_enterprise_install=True,
        installed_at=time.time(),
    )


def test_tokens_are_stored_encrypted_and_found_as_slack_gave_them(engine: Engine) -> None:
    store = installation_store(engine, CLIENT_ID, (OLD,))
    store.save(org_installation())
    store.save_bot(
        Bot(
            app_id="A0001",
            team_id="T0TEAM",
            bot_token="xoxb-team",
            bot_id="B0002",
            bot_user_id="U0BOT2",
            installed_at=time.time(),
        )
    )
    stored = stored_tokens(engine)
    assert len(stored) == 5 and all(token.startswith(SEALED) for token in stored), stored
    assert not any("xox" in token[: len(SEALED) + 5] for token in stored)

    bot = store.find_bot(enterprise_id="E0ORG", team_id="T0ANY", is_enterprise_install=True)
    assert bot is not None and bot.bot_token == ROTATING_TOKEN
    assert bot.bot_refresh_token == "xoxe-1-refresh"
    found = store.find_installation(
        enterprise_id="E0ORG", team_id=None, user_id="U0ADMIN", is_enterprise_install=True
    )
    assert found is not None and (found.bot_token, found.user_token) == (
        ROTATING_TOKEN,
        "xoxp-user",
    )
    team = store.find_bot(enterprise_id=None, team_id="T0TEAM")
    assert team is not None and team.bot_token == "xoxb-team"

    with pytest.raises(TokenKeyError, match="VARULV_TOKEN_KEY is not set"):
        installation_store(engine, CLIENT_ID).find_bot(enterprise_id=None, team_id="T0TEAM")
    other = installation_store(engine, CLIENT_ID, (NEW,))
    with pytest.raises(TokenKeyError, match="does not hold"):
        other.find_bot(enterprise_id=None, team_id="T0TEAM")
    store.delete_all(enterprise_id=None, team_id="T0TEAM")
    assert store.find_bot(enterprise_id=None, team_id="T0TEAM") is None


def test_the_migration_encrypts_the_tokens_stored_before(
    postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(fresh_database(postgres, "tokens_before"))
    try:
        config = alembic_config()
        with engine.connect() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "0008")
            connection.commit()
        plain = SQLAlchemyInstallationStore(client_id=CLIENT_ID, engine=engine)
        plain.save(org_installation("xoxb-short-enough-before"))
        assert "xoxb-short-enough-before" in stored_tokens(engine)

        monkeypatch.setenv("VARULV_TOKEN_KEY", OLD)
        upgrade(engine)
        assert all(token.startswith(SEALED) for token in stored_tokens(engine))
        store = installation_store(engine, CLIENT_ID, (OLD,))
        bot = store.find_bot(enterprise_id="E0ORG", team_id=None, is_enterprise_install=True)
        assert bot is not None and bot.bot_token == "xoxb-short-enough-before"
    finally:
        engine.dispose()


def test_rotating_the_key_re_encrypts_every_token_and_serve_needs_the_key(
    postgres: str, tmp_path: Path
) -> None:
    url = migrated_database(postgres, "tokens_rotated")
    engine = make_engine(url)
    try:
        installation_store(engine, CLIENT_ID, (OLD,)).save(org_installation())
        before = stored_tokens(engine)
        env = {"DATABASE_URL": url}

        assert_refused(varulv(["rotate-token-key"], env, tmp_path / "a"), "VARULV_TOKEN_KEY")
        rotated = varulv(
            ["rotate-token-key"], {**env, "VARULV_TOKEN_KEY": f"{NEW},{OLD}"}, tmp_path / "b"
        )
        assert rotated.returncode == 0, rotated.stderr
        assert "encrypted 5 stored tokens" in rotated.stdout
        after = stored_tokens(engine)
        assert set(after).isdisjoint(before)
        new_only = TokenKeys([NEW])
        assert {new_only.open(token) for token in after} == {
            ROTATING_TOKEN,
            "xoxe-1-refresh",
            "xoxp-user",
        }
        with pytest.raises(TokenKeyError):
            TokenKeys([OLD]).open(after[0])

        serve = {**MULTI_CREDENTIALS, **env, "PORT": str(free_port())}
        assert_refused(varulv(["serve"], serve, tmp_path / "c"), NO_KEY)
        bad = varulv(["serve"], {**serve, "VARULV_TOKEN_KEY": "not-a-key"}, tmp_path / "d")
        assert_refused(bad, "VARULV_TOKEN_KEY must be Fernet keys", "key 1 of 1")

        sealed = sorted(stored_tokens(engine))
        for where, key in (("no key", {}), ("old key", {"VARULV_TOKEN_KEY": OLD})):
            refused = varulv(
                ["rotate-token-key", "--to-plain-text"], {**env, **key}, tmp_path / where
            )
            said = assert_refused(refused, "every key the stored tokens were encrypted with")
            assert "--to-plain-text again; nothing changed" in said
            assert "the new key" not in said
        assert sorted(stored_tokens(engine)) == sealed

        plain = varulv(
            ["rotate-token-key", "--to-plain-text"],
            {**env, "VARULV_TOKEN_KEY": NEW},
            tmp_path / "e",
        )
        assert plain.returncode == 0, plain.stderr
        assert ROTATING_TOKEN in stored_tokens(engine)
    finally:
        engine.dispose()
