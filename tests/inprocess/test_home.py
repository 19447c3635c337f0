"""The App Home tab: the seven cards, a game in five lines, your record, your channels' boards."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import text

from slackapp.fakeslack.blocks import readable_text
from slackapp.game import Card
from tests.operate.conftest import Deployment

VIEWER = "U0HOMER"
RIVAL = "U0RIVAL"
FIKA, LUNCH, ELSEWHERE = "C0HOMEFIKA", "C0HOMELUNCH", "C0HOMENOTMINE"


def add_scores(deployment: Deployment, rows: list[tuple[str, str, str, int, int, int]]) -> None:
    with deployment.db.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO scores (team_id, channel_id, user_id, games, wins, points) "
                "VALUES (:team, :channel, :user, :games, :wins, :points)"
            ),
            [
                dict(zip(("team", "channel", "user", "games", "wins", "points"), row, strict=True))
                for row in rows
            ],
        )


def open_home(deployment: Deployment, user: str) -> dict[str, Any]:
    fake = deployment.fake
    fake.app_url = deployment.app.events_url
    before = (fake.home_view(user) or {}).get("hash")
    answer = fake.app_home_opened(user)
    assert answer.status_code == 200, answer.text
    view = fake.wait_for(
        lambda: (v := fake.home_view(user)) and v.get("hash") != before and v, what="the Home tab"
    )
    assert isinstance(view, dict)
    return view


def test_home_shows_cards_steps_record_and_boards(single_workspace: Deployment) -> None:
    single_workspace.fake.add_user(VIEWER, "homer")
    add_scores(
        single_workspace,
        [
            ("T0001", FIKA, VIEWER, 4, 2, 5),
            ("T0001", FIKA, RIVAL, 4, 3, 7),
            ("T0001", LUNCH, VIEWER, 2, 1, 3),
            ("T0001", ELSEWHERE, RIVAL, 9, 9, 18),
            ("T0OTHER", "C0OTHERTEAM", VIEWER, 50, 50, 100),  # another workspace's record
        ],
    )
    view = open_home(single_workspace, VIEWER)
    assert view["type"] == "home"
    shown = readable_text(view["blocks"])

    for card in Card:
        assert f"*{card}*" in shown and card.line in shown, f"{card} and its line"
    steps = re.findall(r"^(\d)\. ", shown.split("*How a game goes*")[1], flags=re.MULTILINE)
    assert steps[:5] == ["1", "2", "3", "4", "5"]
    assert "6" not in steps

    assert "6 games, 3 wins, 8 points" in shown, "both channels of this workspace, no more"
    assert f"<#{FIKA}>" in shown and f"<#{LUNCH}>" in shown
    assert f"<#{ELSEWHERE}>" not in shown, "a channel the viewer never played in"
    assert "C0OTHERTEAM" not in shown
    fika_board = shown.split(f"<#{FIKA}>")[1].split("<#")[0]
    assert fika_board.index(f"<@{RIVAL}>") < fika_board.index(f"<@{VIEWER}>"), "by points"
    assert "← you" in fika_board


def test_home_for_a_newcomer(single_workspace: Deployment) -> None:
    newcomer = "U0NEWBIE"
    single_workspace.fake.add_user(newcomer, "newbie")
    shown = readable_text(open_home(single_workspace, newcomer)["blocks"])
    assert "No games yet" in shown
    assert "Leaderboards" not in shown
    assert all(card.line in shown for card in Card)
