"""A workspace whose refresh token Slack spent (a refresh whose answer was lost) must reinstall
Varulv: a modal left open there is answered when submitted, in its channel's language, and
every admin and owner of the workspace finds the notice on the Home tab."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text

import slackapp.blocks.schedule as schedule_screen
from slackapp.fakeslack import FakeSlack
from slackapp.game.lines import Language
from tests.operate.conftest import PEOPLE, Deployment, install, oauth_deployment

pytestmark = pytest.mark.long(8)

TEAM = "T0NOTICE"
LONG_LIVED = 3600
"""Less than the two hours before expiry in which Varulv refreshes, so every use refreshes; and
long enough that the last token Slack issued works throughout the test."""
ALVA, BENGT, _, DORIS = PEOPLE
IN_ENGLISH = "Varulv must be reinstalled here"
IN_SWEDISH = "Varulv måste installeras om här"


@pytest.fixture(scope="module")
def notices(postgres: str) -> Iterator[Deployment]:
    with oauth_deployment(
        postgres, "reinstall-notices", TEAM, token_lifetime=LONG_LIVED
    ) as deployment:
        yield deployment


def spend_the_stored_refresh_token(fake: FakeSlack) -> None:
    """Slack takes the newest refresh token, and its answer never reaches Varulv."""
    (*_, newest) = fake.calls_to("oauth.v2.access")
    assert fake.grants.redeem_refresh_token(newest.response["refresh_token"]) == TEAM


def told_on_home(fake: FakeSlack, user: str) -> bool:
    return IN_ENGLISH in json.dumps(fake.home_view(user))


def test_a_submitted_form_and_every_admins_home_say_varulv_must_be_reinstalled(
    notices: Deployment,
) -> None:
    fake = notices.fake
    assert install(notices).status_code == 200
    table = notices.table()
    owner = notices.owner()
    fake.set_role(BENGT, "admin")
    table.command(owner, "settings")
    table.wait(lambda: next(iter(fake.modals(owner)), None), "the settings modal")
    chosen = fake.view_submission(owner, {"language": Language.SWEDISH.value})
    assert chosen.status_code == 200 and not chosen.text.strip(), chosen.text
    table.command(owner, "schedule")
    table.wait(lambda: next(iter(fake.modals(owner)), None), "the schedule form, in Swedish")
    table.wait(lambda: table.undelivered() == 0, "every message shown")

    spend_the_stored_refresh_token(fake)
    fika: dict[str | tuple[str, str], Any] = {
        schedule_screen.DAYS: ["1"],
        schedule_screen.AT: "15:00",
        schedule_screen.ZONE: "Europe/Stockholm",
        schedule_screen.LOBBY: "15",
    }
    submitted = fake.view_submission(owner, fika)

    # The form turns into the answer, in the channel's language, with the install link.
    assert submitted.status_code == 200 and submitted.json()["response_action"] == "update"
    (shown,) = fake.modals(owner)
    words = json.dumps(shown, ensure_ascii=False)
    assert IN_SWEDISH in words and f"{notices.app.url}/slack/install" in words, words
    assert shown["close"]["text"] == "Stäng" and not shown["submit"]
    with notices.db.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM standing_tables")).scalar() == 0

    # Every admin and owner Slack lists, and the installer, find it on the Home tab; nobody
    # else's is touched, and whoever opens the Home tab sees it there too.
    fake.wait_for(lambda: all(told_on_home(fake, user) for user in ("UADMIN", owner, BENGT)))
    assert not told_on_home(fake, ALVA)
    (listed,) = fake.calls_to("users.list")
    assert listed.response["ok"]
    assert fake.app_home_opened(DORIS).status_code == 200
    fake.wait_for(lambda: told_on_home(fake, DORIS), what="Doris's Home tab")
    with notices.db.connect() as connection:
        marked = connection.execute(text("SELECT team_id FROM reinstalls_needed")).scalars()
        assert list(marked) == [TEAM]
