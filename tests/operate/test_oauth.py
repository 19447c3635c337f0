"""Many workspaces: "Add to Slack", a whole game in the new workspace, and uninstalling it.

The fake workspace here is not the default one (``T0OAUTH``) and starts with no valid token at
all, so everything the app does in it must use the token the OAuth flow obtained.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator

import pytest
import requests
from sqlalchemy import text

from slackapp.fakeslack import SignedRequest, signed_headers
from slackapp.install_page import added_page
from tests.e2e.conftest import SIGNING_SECRET
from tests.operate.conftest import INSTALL_LINK, PEOPLE, Deployment, install, oauth_deployment
from tests.reliability.support import a_standing_table

pytestmark = pytest.mark.long(7)

TEAM = "T0OAUTH"
PRIVACY_URL = "https://varulv.example/privacy?lang=en&v=2"
SUPPORT = "mailto:help@varulv.example"
ALVA, BENGT, CARIN, DORIS = PEOPLE


@pytest.fixture(scope="module")
def many_workspaces(postgres: str) -> Iterator[Deployment]:
    """The app with OAuth credentials and no bot token; the day ends on its two-second timer."""
    env = {"VARULV_PRIVACY_URL": PRIVACY_URL, "VARULV_SUPPORT_URL": SUPPORT}
    with oauth_deployment(postgres, "oauth", TEAM, env=env, day=2) as deployment:
        yield deployment


def installations(deployment: Deployment) -> dict[str, list[str]]:
    """The bot tokens stored for the workspace, per slack_sdk table."""
    with deployment.db.connect() as connection:
        return {
            table: list(
                connection.execute(
                    text(f"SELECT bot_token FROM {table} WHERE team_id = :team"), {"team": TEAM}
                ).scalars()
            )
            for table in ("slack_installations", "slack_bots")
        }


def game_count(deployment: Deployment) -> int:
    with deployment.db.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM games")).scalar_one())


def not_installed_lines(deployment: Deployment) -> list[dict[str, object]] | None:
    """Bolt's lines for requests from a workspace without Varulv, once there are two."""
    lines = [
        line
        for line in deployment.log_lines()
        if "where Varulv is not installed" in str(line["message"])
    ]
    return lines if len(lines) >= 2 else None


def test_install_play_and_uninstall(many_workspaces: Deployment) -> None:
    fake = many_workspaces.fake
    table = many_workspaces.table()

    # Not installed yet: the app says so and opens nothing.
    table.command(ALVA)
    table.ephemeral(ALVA, "isn't installed in this workspace")
    assert game_count(many_workspaces) == 0

    done = install(many_workspaces)
    assert done.status_code == 200, done.text
    assert "Varulv is added" in done.text and "<code>/invite @Varulv</code>" in done.text
    assert f"slack://app?team={TEAM}&amp;id=" in done.text, "a way back into the workspace"
    assert "=deleted;" in done.headers["Set-Cookie"], "the install's cookie is cleared"
    assert "None" not in done.text
    exchange = fake.calls_to("oauth.v2.access")
    assert [call.response["ok"] for call in exchange] == [True]
    token = exchange[0].response["access_token"]
    assert installations(many_workspaces) == {"slack_installations": [token], "slack_bots": [token]}

    # A whole game in the new workspace: clicks for the night and the vote, the timer for the day.
    table.seat_people(ALVA, [BENGT, CARIN])
    table.start(ALVA)
    table.play_night([ALVA, BENGT, CARIN])
    table.wait_for_phase("vote")
    table.vote({ALVA: "bengt", BENGT: "carin", CARIN: "bengt"})
    table.wait_for_phase("over")
    table.reveal()
    table.stored_outcome_matches_referee()
    assert table.game()["team_id"] == TEAM
    sent = [call for call in fake.calls if call.method.startswith(("chat.", "conversations."))]
    assert sent, "the game posted nothing"
    assert {call.token for call in sent} == {token}, "every call acts with the installed token"
    with many_workspaces.db.connect() as connection:
        scored = connection.execute(
            text("SELECT DISTINCT team_id FROM scores WHERE channel_id = :c"), {"c": table.channel}
        ).scalars()
        assert list(scored) == [TEAM]

    # The Home tab, published with the workspace's token, counts the game.
    fake.app_home_opened(ALVA)
    home = table.wait(lambda: fake.home_view(ALVA), "the Home tab")
    assert "1 game," in str(home["blocks"])
    assert fake.calls_to("views.publish")[-1].token == token

    # A table left open in another channel when the workspace uninstalls the app.
    other = many_workspaces.table()
    other.command(DORIS)
    other.lobby()

    answer = fake.app_uninstalled()
    assert answer.status_code == 200, answer.text  # acknowledged first, then handled
    other.wait_for_phase("stopped")  # no open game is left without a workspace
    assert installations(many_workspaces) == {"slack_installations": [], "slack_bots": []}

    # The app no longer acts for that workspace.
    calls_before, games_before = len(fake.calls), game_count(many_workspaces)
    third = many_workspaces.table()
    third.command(BENGT)
    third.ephemeral(BENGT, "isn't installed in this workspace")
    assert game_count(many_workspaces) == games_before
    assert not [c for c in fake.calls[calls_before:] if c.method == "chat.postMessage"]

    # Requests from a workspace without Varulv are not Varulv's errors: one WARNING each.
    not_installed = table.wait(
        lambda: not_installed_lines(many_workspaces),
        "the not-installed lines (before the install, and after the uninstall)",
    )
    assert {line["level"] for line in not_installed} == {"WARNING"}
    errors = [line for line in many_workspaces.log_lines() if line["level"] == "ERROR"]
    assert errors == [], errors


def test_reinstall_then_revoked_bot_token(many_workspaces: Deployment) -> None:
    fake = many_workspaces.fake
    done = install(many_workspaces)
    assert done.status_code == 200, done.text
    token = fake.calls_to("oauth.v2.access")[-1].response["access_token"]
    assert installations(many_workspaces) == {"slack_installations": [token], "slack_bots": [token]}

    table = many_workspaces.table()
    table.command(CARIN)
    table.lobby()  # acting again, with the new token

    answer = fake.tokens_revoked()
    assert answer.status_code == 200, answer.text  # acknowledged first, then handled
    table.wait_for_phase("stopped")
    assert installations(many_workspaces) == {"slack_installations": [], "slack_bots": []}


def test_a_stale_install_link_is_refused(many_workspaces: Deployment) -> None:
    """The OAuth state is single-use: replaying Slack's redirect installs nothing twice."""
    page = requests.get(f"{many_workspaces.app.url}/slack/install", timeout=10)
    found = INSTALL_LINK.search(page.text)
    assert found
    back_to_app = many_workspaces.fake.approve_install(html.unescape(found.group(1)))
    cookie = {"Cookie": page.headers["Set-Cookie"].split(";")[0]}
    first = requests.get(back_to_app, headers=cookie, timeout=10)
    assert first.status_code == 200
    replay = requests.get(back_to_app, headers=cookie, timeout=10)
    assert replay.status_code != 200
    forged = requests.get(back_to_app, timeout=10)  # no state cookie: another browser
    assert forged.status_code != 200


def standing_table_paused(deployment: Deployment, channel: str) -> str | None:
    with deployment.db.connect() as connection:
        paused = connection.execute(
            text("SELECT paused FROM standing_tables WHERE team_id = :t AND channel_id = :c"),
            {"t": TEAM, "c": channel},
        ).scalar_one()
    return None if paused is None else str(paused)


def test_a_game_whose_installation_vanished_stops_at_its_deadline(
    many_workspaces: Deployment,
) -> None:
    """Without an installation a timer has no token to act with: the game stops, once, rather
    than failing at every sweep."""
    assert install(many_workspaces).status_code == 200
    table = many_workspaces.table()
    a_standing_table(many_workspaces.db, TEAM, table.channel, DORIS)  # set before Varulv paused
    table.seat_people(DORIS, [ALVA])
    table.click(DORIS, table.lobby(), "Fill with bots")
    table.wait(lambda: len(table.seats()) == 5 or None, "bots seated")
    table.start(DORIS)
    with many_workspaces.db.begin() as connection:
        for installed in ("slack_installations", "slack_bots"):  # gone without an event
            connection.execute(text(f"DELETE FROM {installed} WHERE team_id = :t"), {"t": TEAM})
        connection.execute(  # the night's deadline passes now, not in two minutes
            text("UPDATE games SET deadline = now() - interval '1 second' WHERE id = :id"),
            {"id": table.game_id()},
        )
    table.wait_for_phase("stopped")
    stops = [
        entry
        for entry in many_workspaces.log_lines()
        if entry.get("game_id") == table.game_id() and entry["message"] == "game stopped"
    ]
    assert len(stops) == 1 and stops[0]["team_id"] == TEAM
    paused = table.wait(lambda: standing_table_paused(many_workspaces, table.channel), "paused")
    assert paused == "app_uninstalled", "the channel's standing table waits for a reinstall too"


def test_a_standing_table_waits_while_varulv_is_uninstalled_and_runs_once_it_is_again(
    many_workspaces: Deployment,
) -> None:
    """No token is left to show its lobbies with: it opens none until Varulv is back."""
    fake = many_workspaces.fake
    assert install(many_workspaces).status_code == 200
    channel = many_workspaces.table().channel
    # Beside it, one a post with the token Slack had just revoked paused, and one paused for
    # a reason a new installation does not mend.
    others = {"C0REVOKED": "token_revoked", "C0NOTIN": "not_in_channel"}
    for each, paused_for in {channel: None, **others}.items():
        a_standing_table(many_workspaces.db, TEAM, each, ALVA, paused=paused_for)
    assert fake.app_uninstalled().status_code == 200
    paused = many_workspaces.table().wait(
        lambda: standing_table_paused(many_workspaces, channel), "the standing table paused"
    )
    assert paused == "app_uninstalled"
    assert standing_table_paused(many_workspaces, "C0NOTIN") == "not_in_channel", "as it was"
    assert install(many_workspaces).status_code == 200
    assert standing_table_paused(many_workspaces, channel) is None, "it runs again"
    assert standing_table_paused(many_workspaces, "C0REVOKED") is None, "mended too"
    assert standing_table_paused(many_workspaces, "C0NOTIN") == "not_in_channel", "not mended"


def uninstall_lines(deployment: Deployment) -> list[str]:
    return [
        str(line["message"])
        for line in deployment.log_lines()
        if "uninstall" in str(line["message"])
    ]


def test_an_uninstall_delivered_again_after_a_reinstall_leaves_the_new_installation(
    many_workspaces: Deployment,
) -> None:
    """Slack delivers an event again when it saw no answer (Varulv away for a deploy), up to
    minutes later, with the time it happened: an uninstall that arrives only after the
    workspace added Varulv again is of the installation it removed, and leaves the new one
    its token, its standing tables and its open table."""
    fake = many_workspaces.fake
    assert install(many_workspaces).status_code == 200
    with fake.keeping_requests() as kept:  # never answered
        fake.app_uninstalled()
    assert install(many_workspaces).status_code == 200
    token = fake.calls_to("oauth.v2.access")[-1].response["access_token"]
    table = many_workspaces.table()
    a_standing_table(many_workspaces.db, TEAM, table.channel, ALVA)
    table.command(CARIN)
    table.lobby()
    envelope = json.loads(kept[0].body)
    envelope["event_time"] -= 120  # Slack's second try, two minutes after the removal
    body = json.dumps(envelope)
    again = SignedRequest(body, {**kept[0].headers, **signed_headers(SIGNING_SECRET, body)})
    before = len(uninstall_lines(many_workspaces))
    retry = {"X-Slack-Retry-Num": "2", "X-Slack-Retry-Reason": "timeout"}
    assert fake.send(again, headers=retry).status_code == 200
    fake.wait_for(
        lambda: len(uninstall_lines(many_workspaces)) > before or None,
        what="the late uninstall handled",
    )
    kept_now = installations(many_workspaces)
    assert token in kept_now["slack_installations"] and token in kept_now["slack_bots"]
    assert standing_table_paused(many_workspaces, table.channel) is None
    assert table.game()["phase"] == "lobby"


def test_the_install_page_says_what_varulv_is_and_links_privacy_and_support(
    many_workspaces: Deployment,
) -> None:
    page = requests.get(f"{many_workspaces.app.url}/slack/install", timeout=10)
    assert page.status_code == 200
    assert page.headers["Content-Type"].startswith("text/html")
    assert "slack-app-oauth-state=" in page.headers["Set-Cookie"], "Bolt's state, as before"
    body = page.text
    assert "One Night Ultimate Werewolf" in body and "/varulv" in body
    assert f'href="{html.escape(PRIVACY_URL)}"' in body
    assert f'href="{SUPPORT}"' in body
    assert "deleted after 90 days" in body
    found = INSTALL_LINK.search(body)
    assert found and "state=" in html.unescape(found.group(1)), "the Add to Slack button"
    assert 'alt="Add to Slack"' in body


def test_the_page_after_an_org_wide_install_says_to_add_varulv_to_workspaces() -> None:
    """An org-wide install has no workspace yet: the next step is the organisation's admin
    pages, and no link names a workspace that is not there."""
    page = added_page("A0APP", None, "https://acme.enterprise.slack.com/", org_wide=True)
    assert "add it to the workspaces that should play" in page
    assert (
        'href="https://acme.enterprise.slack.com/manage/organization/apps/profile/A0APP/'
        'workspaces/add"'
    ) in page
    assert "None" not in page and "client/" not in page
    unknown = added_page("A0APP", None, None, org_wide=True)
    assert "the organisation's app settings" in unknown and "<a " not in unknown
