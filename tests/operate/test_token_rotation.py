"""Many workspaces with token rotation on: bot tokens expire, and whatever acts with one (a
request's authorize, the deliverer after a timer's step) refreshes it first and keeps the new
one in the installation store.

The stand-in's tokens live four seconds here, so every use falls in the window in which Varulv
refreshes (two hours before expiry, as Bolt does), and a token left unused expires mid-game.
The tokens are encrypted at rest (VARULV_TOKEN_KEY): every refresh goes through the encryption.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import text

from slackapp.db.tokens import SEALED, TokenKeys
from slackapp.fakeslack.models import Call
from tests.operate.conftest import PEOPLE, Deployment, install, oauth_deployment

pytestmark = pytest.mark.long(18)

TEAM = "T0ROTATE"
TOKEN_SECONDS = 4
VOTE_SECONDS = 3 * TOKEN_SECONDS
"""Long enough, with nobody voting, that every token issued before the vote expires in it."""
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


def stored_bot(deployment: Deployment) -> tuple[str | None, str | None]:
    """The bot's tokens as stored, decrypted; each is stored encrypted only."""
    with deployment.db.connect() as connection:
        (row,) = connection.execute(
            text("SELECT bot_token, bot_refresh_token FROM slack_bots WHERE team_id = :t"),
            {"t": TEAM},
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
    vote_opened = len(fake.calls)

    # Nobody votes: no request reaches Varulv until the vote's deadline, and every token
    # Slack issued so far expires meanwhile.
    table.wait_for_phase("over", timeout=VOTE_SECONDS + 15)
    reveal = table.reveal()
    assert table.game()["phase"] == "over"
    # Every message shown: each call's refresh was saved before the call went out.
    table.wait(lambda: table.undelivered() == 0, "every message of the game shown")

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
