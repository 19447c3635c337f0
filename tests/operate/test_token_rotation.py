"""Many workspaces with token rotation on: bot tokens expire, and whatever acts with one (a
request's authorize, the deliverer after a timer's step) refreshes it first and keeps the new
one in the installation store.

The stand-in's tokens live an hour here, so every use falls in the window in which Varulv
refreshes (two hours before expiry, as Bolt does); a test that needs a token to expire mid-game
moves the stand-in's clock on rather than waiting.
The tokens are encrypted at rest (VARULV_TOKEN_KEY): every refresh goes through the encryption.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, text

from slackapp.db.tokens import SEALED, TokenKeys
from slackapp.fakeslack import FakeSlack
from slackapp.fakeslack.models import Call
from slackapp.serving import free_port
from tests import faults
from tests.databases import fresh_database
from tests.e2e.conftest import SIGNING_SECRET, AppProcess, start_app
from tests.operate.conftest import PEOPLE, Deployment, install, oauth_deployment
from tests.reliability.support import set_deadline

pytestmark = pytest.mark.long(18)

TEAM = "T0ROTATE"
TOKEN_SECONDS = 3600
"""Less than the two hours before expiry in which Varulv refreshes, so every use refreshes."""
VOTE_SECONDS = 120
"""Longer than the test waits: the vote ends when the test moves its deadline into the past,
once Slack's clock has moved on, so no call can straddle the move."""
ALVA, BENGT, CARIN, _ = PEOPLE
KEY = Fernet.generate_key().decode()


@pytest.fixture(scope="module")
def rotating(postgres: str) -> Iterator[Deployment]:
    with oauth_deployment(
        postgres,
        "rotation",
        TEAM,
        token_lifetime=TOKEN_SECONDS,
        env={"VARULV_TOKEN_KEY": KEY},
        day=2,
        vote=VOTE_SECONDS,
    ) as deployment:
        yield deployment


def refreshes(calls: list[Call]) -> list[Call]:
    return [
        call
        for call in calls
        if call.method == "oauth.v2.access" and call.params.get("grant_type") == "refresh_token"
    ]


def stored_bot(deployment: Deployment, team: str = TEAM) -> tuple[str | None, str | None]:
    """The bot's tokens as stored, decrypted; each is stored encrypted only (with a key)."""
    with deployment.db.connect() as connection:
        (row,) = connection.execute(
            text("SELECT bot_token, bot_refresh_token FROM slack_bots WHERE team_id = :t"),
            {"t": team},
        ).all()
        installed = connection.execute(
            text("SELECT bot_token, bot_refresh_token FROM slack_installations")
        ).all()
    stored = [*row, *(token for tokens in installed for token in tokens)]
    assert all(token.startswith(SEALED) for token in stored), stored
    keys = TokenKeys([KEY])
    return keys.open(row.bot_token), keys.open(row.bot_refresh_token)


def test_a_game_whose_token_expires_mid_game_is_revealed_on_its_deadline(
    rotating: Deployment,
) -> None:
    fake = rotating.fake
    done = install(rotating)
    assert done.status_code == 200, done.text
    (granted,) = fake.calls_to("oauth.v2.access")
    assert granted.response["expires_in"] == TOKEN_SECONDS
    assert stored_bot(rotating) == (
        granted.response["access_token"],
        granted.response["refresh_token"],
    )

    table = rotating.table()
    table.seat_people(ALVA, [BENGT, CARIN])
    table.start(ALVA)
    table.play_night([ALVA, BENGT, CARIN])
    table.wait_for_phase("vote")  # the day ended on its timer
    table.wait(lambda: table.undelivered() == 0 or None, "the vote board shown")
    vote_opened = len(fake.calls)

    # Nobody votes: no request reaches Varulv until the vote's deadline, and meanwhile Slack's
    # clock moves on past the lifetime of every token it issued so far.
    fake.grants.clock = lambda: time.time() + TOKEN_SECONDS
    try:
        assert table.game()["phase"] == "vote", "the vote still open once every token expired"
        issued = {call.token for call in fake.calls[:vote_opened] if call.token}
        assert {fake.grants.token_error(token) for token in issued} == {"token_expired"}
        set_deadline(rotating.db, table.game_id(), datetime.now(UTC) - timedelta(seconds=1))
        table.wait_for_phase("over")  # the deadline's sweep ends it
        reveal = table.reveal()
        assert table.game()["phase"] == "over"
        # Every message shown: each call's refresh was saved before the call went out.
        table.wait(lambda: table.undelivered() == 0, "every message of the game shown")
    finally:
        fake.grants.clock = time.time

    calls = fake.calls
    expired = [call for call in calls if call.response.get("error") == "token_expired"]
    assert expired == [], "every call went out with a live token"
    (posted,) = [
        call
        for call in calls[vote_opened:]
        if call.method == "chat.postMessage" and call.response.get("ts") == reveal.ts
    ]
    issued_before = {call.token for call in calls[:vote_opened]}
    assert posted.token not in issued_before, "the reveal went out with a refreshed token"
    after_the_vote_opened = refreshes(calls[vote_opened:])
    assert posted.token in {call.response.get("access_token") for call in after_the_vote_opened}
    assert refreshes(calls[:vote_opened]), "the people's clicks refreshed the token too"

    # Each refresh used the refresh token the one before it gave, and the store has the newest.
    chain = refreshes(calls)
    used = [call.params["refresh_token"] for call in chain]
    given = [granted.response["refresh_token"]] + [call.response["refresh_token"] for call in chain]
    assert all(call.response["ok"] for call in chain), [c.response for c in chain]
    assert used == given[:-1]
    assert stored_bot(rotating) == (chain[-1].response["access_token"], given[-1])


# --- a crash between Slack's refresh and the save ---------------------------------------------

CRASH_TEAM = "T0CRASH"
LONG_LIVED = 3600
"""Less than the two hours before expiry in which Varulv refreshes, so every use refreshes; and
long enough that the token Slack issued before the crash works throughout the test."""
REINSTALL_WORDS = "Varulv must be reinstalled here"


@dataclass
class Crashable:
    """A deployment whose app may be killed and started again on the same port and database."""

    deployment: Deployment
    url: str
    env: dict[str, str]
    port: int

    def restart(self) -> AppProcess:
        app = start_app(self.deployment.fake, self.url, env=self.env, port=self.port, day=2, vote=2)
        self.deployment.app = app
        return app


@pytest.fixture(scope="module")
def crashable(postgres: str) -> Iterator[Crashable]:
    url = fresh_database(postgres, "rotation-crash")
    with FakeSlack(
        SIGNING_SECRET, team_id=CRASH_TEAM, tokens=(), token_lifetime=LONG_LIVED
    ) as fake:
        port = free_port()
        env = {
            "SLACK_BOT_TOKEN": "",
            "SLACK_CLIENT_ID": fake.grants.client_id,
            "SLACK_CLIENT_SECRET": fake.grants.client_secret,
            "SLACK_REDIRECT_URI": f"http://127.0.0.1:{port}/slack/oauth_redirect",
            "VARULV_TOKEN_KEY": KEY,
            "VARULV_METRICS_PORT": str(metrics_port := free_port()),
        }
        app = start_app(fake, url, env=env, port=port, day=2, vote=2)
        engine = create_engine(url)
        metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
        crashable = Crashable(Deployment(fake, app, engine, metrics_url), url, env, port)
        try:
            yield crashable
        finally:
            crashable.deployment.app.stop()
            engine.dispose()


def metric(deployment: Deployment, line: str) -> float | None:
    """The value ``/metrics`` gives the sample ``line`` (its name and labels), None if absent."""
    assert deployment.metrics_url is not None
    scraped = requests.get(deployment.metrics_url, timeout=10)
    assert scraped.status_code == 200, scraped.text
    for sample in scraped.text.splitlines():
        name, _, value = sample.rpartition(" ")
        if name == line:
            return float(value)
    return None


def errors(deployment: Deployment) -> list[dict[str, Any]]:
    return [line for line in deployment.log_lines() if line.get("level") == "ERROR"]


def test_a_crash_between_slacks_refresh_and_the_save_asks_for_a_reinstall_then_a_game_is_played(
    crashable: Crashable,
) -> None:
    deployment = crashable.deployment
    fake = deployment.fake
    assert install(deployment).status_code == 200
    (granted,) = fake.calls_to("oauth.v2.access")
    table = deployment.table()

    # Slack refreshes the token (spending the refresh token), and the app dies before it has
    # its answer: the new pair is lost with it.
    crashed = faults.crash_after(
        fake,
        "oauth.v2.access",
        when=lambda request: request.params.get("grant_type") == "refresh_token",
        crash=deployment.app.kill,
    )
    with contextlib.suppress(requests.RequestException):
        fake.slash_command(ALVA, text="", channel_id=table.channel)
    assert crashed.wait(60), "the app refreshed its token"
    spent = granted.response["refresh_token"]
    assert [call.params["refresh_token"] for call in refreshes(fake.calls)] == [spent]
    assert stored_bot(deployment, CRASH_TEAM)[1] == spent, "the new pair never reached the store"

    crashable.restart()
    table.aim()
    table.app = deployment.app
    # The first request tries the spent refresh token, once; Slack refuses it for good. The
    # person is told what to do, and so is everyone after, none of them with a refresh.
    table.command(ALVA)
    said = table.ephemeral(ALVA, REINSTALL_WORDS)
    assert f"http://127.0.0.1:{crashable.port}/slack/install" in said.text
    table.command(BENGT)
    table.ephemeral(BENGT, REINSTALL_WORDS)
    fake.app_home_opened(CARIN)
    table.wait(lambda: REINSTALL_WORDS in json.dumps(fake.home_view(CARIN)), "Carin's Home")
    table.command(CARIN, "help")
    table.wait(
        lambda: len(fake.ephemerals(CARIN)) and REINSTALL_WORDS in fake.ephemerals(CARIN)[-1].text,
        "Carin told too",
    )
    tried = refreshes(fake.calls)
    assert [call.params["refresh_token"] for call in tried] == [spent, spent], "once more only"
    assert tried[-1].response["error"] == "invalid_refresh_token"
    # The installer's Home tab says so, while the old token still works there.
    installer = "UADMIN"
    assert REINSTALL_WORDS in json.dumps(fake.home_view(installer))
    assert table.public() == [], "no table was set"

    (logged,) = errors(deployment)
    assert "must be reinstalled" in logged["message"] and logged["team_id"] == CRASH_TEAM
    with deployment.db.connect() as connection:
        marked = connection.execute(text("SELECT team_id, error FROM reinstalls_needed")).all()
    assert [tuple(row) for row in marked] == [(CRASH_TEAM, "invalid_refresh_token")]
    refused = 'varulv_token_refreshes_refused_total{error="invalid_refresh_token"}'
    assert metric(deployment, refused) == 1.0
    assert metric(deployment, "varulv_workspaces_needing_reinstall") == 1.0

    # An admin reinstalls: the mark goes, and a whole game is played.
    assert install(deployment).status_code == 200
    assert metric(deployment, "varulv_workspaces_needing_reinstall") == 0.0
    reinstalled_at = len(fake.calls)
    table.seat_people(ALVA, [BENGT, CARIN])
    table.start(ALVA)
    table.play_night([ALVA, BENGT, CARIN])
    table.wait_for_phase("over")
    table.reveal()
    table.wait(lambda: table.undelivered() == 0, "every message of the game shown")
    after = fake.calls[reinstalled_at:]
    token_errors = {"token_expired", "invalid_auth", "token_revoked", "not_authed"}
    assert [call for call in after if call.response.get("error") in token_errors] == []
    assert all(call.response["ok"] for call in refreshes(after))
    assert errors(deployment) == [logged], "no other ERROR line"
