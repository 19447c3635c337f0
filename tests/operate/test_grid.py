"""Enterprise Grid: "Add to Slack" and a whole game in a workspace of an organisation, installed
on that workspace alone and on the whole organisation.

Slack stores both under the organisation's id: a workspace's installation inside a Grid with its
``E...`` id beside the team's, an organisation-wide one (``is_enterprise_install``) under the
organisation alone, with no team. Every post, redraw, DM, timer step and Home tab of the game
must find that installation, so every call the game makes acts with the token "Add to Slack"
obtained, and the workspace starts with no valid token at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text

import slackapp.blocks.schedule as schedule_screen
from tests.operate.conftest import PEOPLE, Deployment, install, oauth_deployment

pytestmark = pytest.mark.long(7)

ORG = "E0GRID"
ALVA, BENGT, CARIN, DORIS = PEOPLE
NAMES = {ALVA: "Alva Grid", BENGT: "Bengt Grid", CARIN: "Carin Grid"}
"""Their profiles' display names, which Slack gives at *Start* (their handles are lower case)."""


@pytest.fixture(scope="module")
def grid_workspace(postgres: str) -> Iterator[Deployment]:
    """Varulv added to one workspace of an organisation; the day ends on its two-second timer."""
    with oauth_deployment(postgres, "grid", "T0GRIDWS", enterprise_id=ORG, day=2) as deployment:
        yield deployment


@pytest.fixture(scope="module")
def org_wide(postgres: str) -> Iterator[Deployment]:
    """Varulv added to the whole organisation by its admin; the day ends on its timer."""
    with oauth_deployment(
        postgres, "orgwide", "T0ORGWS", enterprise_id=ORG, org_wide=True, day=2
    ) as deployment:
        yield deployment


def stored_bots(deployment: Deployment) -> list[dict[str, Any]]:
    with deployment.db.connect() as connection:
        rows = connection.execute(
            text("SELECT enterprise_id, team_id, is_enterprise_install, bot_token FROM slack_bots")
        )
        return [dict(row._mapping) for row in rows]


def kept_names(deployment: Deployment) -> dict[str, tuple[str, str]]:
    with deployment.db.connect() as connection:
        rows = connection.execute(text("SELECT team_id, user_id, name FROM people"))
        return {row.user_id: (row.team_id, row.name) for row in rows}


def play_a_whole_game(deployment: Deployment, token: str) -> None:
    """Join, night, a day ended by its timer, ballots and the reveal, then the Home tab; the
    seats named at *Start* in the game's workspace, and a stale name refreshed on the Home tab
    in the workspace the event came from."""
    fake = deployment.fake
    table = deployment.table()
    for user, name in NAMES.items():
        fake.add_user(user, display_name=name)
    table.seat_people(ALVA, [BENGT, CARIN])
    assert not fake.calls_to("users.info"), "sitting down asks Slack nothing"
    table.start(ALVA)
    asked = fake.calls_to("users.info")
    assert sorted(str(call.params.get("user")) for call in asked) == sorted(NAMES)
    assert {call.token for call in asked} == {token}
    workspace = fake.identity.team_id
    assert kept_names(deployment) == {user: (workspace, name) for user, name in NAMES.items()}
    table.play_night([ALVA, BENGT, CARIN])
    table.wait_for_phase("vote")
    table.vote({ALVA: NAMES[BENGT], BENGT: NAMES[CARIN], CARIN: NAMES[BENGT]})
    table.wait_for_phase("over")
    table.reveal()
    table.stored_outcome_matches_referee()
    game = table.game()
    assert (game["team_id"], game["enterprise_id"]) == (fake.identity.team_id, ORG)
    assert table.undelivered() == 0, "every message reached Slack"
    sent = [call for call in fake.calls if call.method.startswith(("chat.", "conversations."))]
    assert sent, "the game posted nothing"
    assert {call.token for call in sent} == {token}, "every call acts with the installed token"
    assert not [call for call in sent if not call.response.get("ok")]

    fake.app_home_opened(ALVA)
    home = table.wait(lambda: fake.home_view(ALVA), "the Home tab")
    assert "1 game," in str(home["blocks"]), "the Home tab counts the game in its workspace"
    assert fake.calls_to("views.publish")[-1].token == token
    assert len(fake.calls_to("users.info")) == len(NAMES), "a fresh name is not asked again"

    # Renamed first: the first opening's look-up may still be to come, and any look-up that
    # finds the name stale from here on learns the new one.
    fake.add_user(ALVA, display_name="Alva Renamed")
    with deployment.db.begin() as connection:  # Alva's name, kept two days ago
        connection.execute(
            text("UPDATE people SET fetched_at = now() - interval '2 days' WHERE user_id = :u"),
            {"u": ALVA},
        )
    fake.app_home_opened(ALVA)
    table.wait(
        lambda: kept_names(deployment)[ALVA] == (workspace, "Alva Renamed") or None,
        "the stale name refreshed in the workspace the event came from",
    )
    assert fake.calls_to("users.info")[-1].token == token


def test_a_workspace_of_an_organisation_installs_and_plays(grid_workspace: Deployment) -> None:
    fake = grid_workspace.fake
    table = grid_workspace.table()
    table.command(ALVA)
    table.ephemeral(ALVA, "isn't installed in this workspace")

    done = install(grid_workspace)
    assert done.status_code == 200, done.text
    assert "Varulv is added" in done.text and "slack://app?team=T0GRIDWS" in done.text
    (exchange,) = fake.calls_to("oauth.v2.access")
    assert exchange.response["enterprise"] == {"id": ORG, "name": fake.identity.enterprise_name}
    assert exchange.response["is_enterprise_install"] is False
    token = exchange.response["access_token"]
    assert stored_bots(grid_workspace) == [
        {
            "enterprise_id": ORG,
            "team_id": "T0GRIDWS",
            "is_enterprise_install": False,
            "bot_token": token,
        }
    ]
    play_a_whole_game(grid_workspace, token)

    # A standing table set here keeps the organisation for the tables it opens.
    owner = grid_workspace.owner()
    table.command(owner, "schedule")
    table.wait(lambda: next(iter(fake.modals(owner)), None), "the schedule modal")
    fika: dict[str | tuple[str, str], Any] = {
        schedule_screen.DAYS: ["1"],
        schedule_screen.AT: "15:00",
        schedule_screen.ZONE: "Europe/Stockholm",
        schedule_screen.LOBBY: "15",
    }
    fake.view_submission(owner, fika)
    table.board("set a standing table")
    with grid_workspace.db.connect() as connection:
        kept = connection.execute(
            text("SELECT team_id, enterprise_id FROM standing_tables WHERE channel_id = :c"),
            {"c": table.channel},
        ).one()
    assert tuple(kept) == ("T0GRIDWS", ORG)


def test_an_organisation_wide_install_plays_and_leaves_every_workspace(
    org_wide: Deployment,
) -> None:
    fake = org_wide.fake
    done = install(org_wide)
    assert done.status_code == 200, done.text
    (exchange,) = fake.calls_to("oauth.v2.access")
    assert exchange.response["team"] is None, "installed on no one workspace"
    assert exchange.response["is_enterprise_install"] is True
    token = exchange.response["access_token"]
    assert stored_bots(org_wide) == [
        {"enterprise_id": ORG, "team_id": None, "is_enterprise_install": True, "bot_token": token}
    ]
    play_a_whole_game(org_wide, token)

    # Uninstalled from the organisation: its installation goes, and so do its open tables.
    left_open = org_wide.table()
    left_open.command(DORIS)
    left_open.lobby()
    answer = fake.app_uninstalled()
    assert answer.status_code == 200, answer.text
    left_open.wait_for_phase("stopped")
    assert stored_bots(org_wide) == []
    again = org_wide.table()
    again.command(BENGT)
    again.ephemeral(BENGT, "isn't installed in this workspace")
