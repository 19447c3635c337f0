"""``/varulv schedule``, *I usually play* and ``/varulv last`` through the app and the fake Slack:
the form in the person's own zone, its checks, the stored schedule, removing it; the lobby's
toggle; the last reveal again with the whole game, which ``varulv referee`` resolves to the
outcome the game had."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text

from slackapp.blocks import schedule as schedule_screen
from slackapp.fakeslack.blocks import as_shown, readable_text
from slackapp.game.seasons import Season, SeasonLength
from tests.e2e.driver import Table
from tests.inprocess.test_home import open_home
from tests.operate.conftest import PEOPLE, Deployment
from tests.reliability.support import a_standing_table
from tests.test_schedule_form import element

ALVA, BENGT, CARIN, DORIS = PEOPLE


def open_schedule(deployment: Deployment, table: Table, user: str) -> dict[str, Any]:
    before = {modal["id"] for modal in deployment.fake.modals(user)}
    table.command(user, "schedule")
    return table.wait(
        lambda: next((v for v in deployment.fake.modals(user) if v["id"] not in before), None),
        "the schedule modal",
    )


def stored(deployment: Deployment, channel: str) -> dict[str, Any] | None:
    with deployment.db.connect() as connection:
        row = (
            connection.execute(
                text("SELECT * FROM standing_tables WHERE channel_id = :c"), {"c": channel}
            )
            .mappings()
            .one_or_none()
        )
        return None if row is None else dict(row)


def test_the_schedule_form_sets_shows_and_removes_a_standing_table(
    single_workspace: Deployment,
) -> None:
    fake, table = single_workspace.fake, single_workspace.table()
    owner = single_workspace.owner()  # no table here yet: only admins and owners may set one
    modal = open_schedule(single_workspace, table, owner)
    # The person's own zone, from users.info; the days and the time are theirs to pick.
    assert element(modal, schedule_screen.ZONE)["initial_value"] == "Europe/Stockholm"
    assert "initial_time" not in element(modal, schedule_screen.AT)
    assert "initial_options" not in element(modal, schedule_screen.DAYS)
    assert "No standing table yet" in json.dumps(modal)
    assert "nothing is set until you do" in json.dumps(modal)

    # A plain Save, as the form opened, sets no standing table.
    plain = fake.view_submission(owner).json()
    assert plain["response_action"] == "errors"
    assert set(plain["errors"]) == {schedule_screen.DAYS, schedule_screen.AT}
    assert stored(single_workspace, table.channel) is None, "nothing the person did not choose"

    answer = fake.view_submission(
        owner,
        {
            schedule_screen.DAYS: [],
            schedule_screen.ZONE: "Mars/Olympus",
            schedule_screen.LOBBY: "500",
        },
    ).json()
    assert answer["response_action"] == "errors"
    assert set(answer["errors"]) == {
        schedule_screen.DAYS,
        schedule_screen.AT,
        schedule_screen.ZONE,
        schedule_screen.LOBBY,
    }
    assert stored(single_workspace, table.channel) is None, "bad input changes nothing"

    fake.view_submission(
        owner,
        {
            schedule_screen.DAYS: ["1", "3"],
            schedule_screen.AT: "10:30",
            schedule_screen.ZONE: "America/New_York",
            schedule_screen.LOBBY: "20",
        },
    )
    row = stored(single_workspace, table.channel)
    assert row is not None
    assert (row["weekdays"], row["minute_of_day"], row["zone"], row["lobby_minutes"]) == (
        0b1010,
        10 * 60 + 30,
        "America/New_York",
        20,
    )
    assert row["owner_user_id"] == owner
    announcement = table.board("set a standing table")
    assert "Tuesday and Thursday at 10:30 (America/New_York)" in announcement.text

    # Open again, it shows what is stored and offers to remove it.
    table.command(BENGT, "schedule")
    table.ephemeral(BENGT, "who set the standing table")
    modal = open_schedule(single_workspace, table, owner)
    assert element(modal, schedule_screen.ZONE)["initial_value"] == "America/New_York"
    assert "Now: Tuesday and Thursday at 10:30" in json.dumps(modal)
    fake.view_submission(owner, {schedule_screen.REMOVE: [schedule_screen.REMOVE_IT]})
    assert stored(single_workspace, table.channel) is None
    assert f"<@{owner}> removed" in table.board("removed this channel's standing table").text


def test_a_schedule_in_a_zone_no_longer_known_opens_its_form_to_mend_it(
    single_workspace: Deployment,
) -> None:
    """A standing table set in a zone the time zone database later dropped opens no table; its
    form still opens, with the days, the time and the lobby kept, the lost zone named, and the
    person's own zone offered in its place."""
    fake, table = single_workspace.fake, single_workspace.table()
    owner = single_workspace.owner()
    open_schedule(single_workspace, table, owner)
    fake.view_submission(
        owner,
        {
            schedule_screen.DAYS: ["0", "4"],
            schedule_screen.AT: "15:00",
            schedule_screen.ZONE: "Europe/Oslo",
            schedule_screen.LOBBY: "25",
        },
    )
    table.board("set a standing table")
    with single_workspace.db.begin() as connection:  # as if the zone had left the database
        connection.execute(
            text("UPDATE standing_tables SET zone = 'Mars/Olympus' WHERE channel_id = :c"),
            {"c": table.channel},
        )

    modal = open_schedule(single_workspace, table, owner)
    shown = json.dumps(modal)
    assert "`Mars/Olympus`, a time zone Varulv no longer knows" in shown
    assert "Monday and Friday at 15:00" in shown
    assert element(modal, schedule_screen.ZONE)["initial_value"] == "Europe/Stockholm"
    assert element(modal, schedule_screen.AT)["initial_time"] == "15:00"
    assert {o["value"] for o in element(modal, schedule_screen.DAYS)["initial_options"]} == {
        "0",
        "4",
    }
    assert element(modal, schedule_screen.LOBBY)["initial_value"] == "25"
    fake.close_modal(owner)  # looked at, not saved: the session's next form is on top of none


def test_i_usually_play_is_a_toggle_on_the_lobby(single_workspace: Deployment) -> None:
    table = single_workspace.table()
    table.command(ALVA)
    lobby = table.lobby()

    def regulars() -> list[str]:
        with single_workspace.db.connect() as connection:
            return list(
                connection.execute(
                    text("SELECT user_id FROM regulars WHERE channel_id = :c"),
                    {"c": table.channel},
                ).scalars()
            )

    table.click(CARIN, lobby, "I usually play")
    # No standing table here yet: the answer promises no mention, and says how one is set.
    marked = table.ephemeral(CARIN, "Marked: you usually play")
    assert "It has no standing table yet" in marked.rendered_text
    assert "`/varulv schedule`" in marked.text and "so its standing table" not in marked.text
    assert regulars() == [CARIN]
    table.click(CARIN, lobby, "I usually play")
    taken_back = table.ephemeral(CARIN, "Taken back")
    assert taken_back.text == f"Taken back: you no longer usually play in <#{table.channel}>."
    assert regulars() == []

    owner = single_workspace.owner()
    open_schedule(single_workspace, table, owner)
    single_workspace.fake.view_submission(
        owner,
        {
            schedule_screen.DAYS: ["0"],
            schedule_screen.AT: "15:00",
            schedule_screen.ZONE: "Europe/Stockholm",
            schedule_screen.LOBBY: "20",
        },
    )
    table.board("set a standing table")
    table.click(CARIN, lobby, "I usually play")
    marked = table.ephemeral(CARIN, "so its standing table mentions you")
    assert "no standing table" not in marked.rendered_text
    table.click(ALVA, lobby, "Cancel")


def this_month() -> Season:
    now = datetime.now(UTC)
    return Season(now.year, now.month, SeasonLength.MONTH)


def code_block(message_text: str) -> dict[str, Any]:
    found = re.search(r"```\n(.*)\n```", message_text, re.S)
    assert found, message_text
    data = json.loads(as_shown(found.group(1)))  # as a reader copies it out of Slack
    assert isinstance(data, dict)
    return data


def test_last_shows_the_reveal_again_and_the_game_the_referee_resolves(
    single_workspace: Deployment, tmp_path: Path
) -> None:
    fake, table = single_workspace.fake, single_workspace.table()
    table.command(DORIS, "last")
    table.ephemeral(DORIS, "No game has been played to the end")

    table.seat_people(ALVA, [BENGT, CARIN], bots=True)
    table.start(ALVA)
    table.play_night([ALVA, BENGT, CARIN])
    table.wait_for_phase("day")
    table.heard_enough([ALVA, BENGT])
    table.wait_for_phase("vote")
    table.vote({ALVA: "bengt", BENGT: "carin", CARIN: "alva"})
    table.wait_for_phase("over")
    table.reveal()
    outcome = table.stored_outcome_matches_referee()

    before = this_month()
    table.command(DORIS, "score")
    board = table.ephemeral(DORIS, "All time in")
    # On the Home tab: this season, and the toggle for the channel.
    home = open_home(single_workspace, ALVA)
    # A run that crosses a month's end meanwhile may show either month's season.
    seasons = {before.name, this_month().name}
    assert any(f"This season: {name}" in board.rendered_text for name in seasons)
    home_text = readable_text(home["blocks"])
    assert any(f"This season ({name}): you, place" in home_text for name in seasons)
    fake.click_home_button(ALVA, "I usually play here")
    table.wait(
        lambda: (
            "I usually play here ✓" in json.dumps(fake.home_view(ALVA), ensure_ascii=False) or None
        ),
        "the Home tab with the toggle on",
    )
    with single_workspace.db.connect() as connection:
        # The first board's toggle: Alva may have boards from other tests' channels too.
        marked = connection.execute(
            text("SELECT channel_id FROM regulars WHERE user_id = :u"), {"u": ALVA}
        ).scalars()
        assert len(list(marked)) == 1

    table.command(DORIS, "last")
    again = table.ephemeral(DORIS, "Anyone can check it")
    assert "The reveal: what really happened" in json.dumps(again.blocks)
    table.click(DORIS, again, "The whole game, for the referee")
    exported = code_block(table.ephemeral(DORIS, "as the referee reads it").text)

    names = {seat["user_id"] or seat["bot_name"]: seat["display_name"] for seat in table.seats()}
    assert exported["seats"] == [names[key] for key in outcome["points"]]
    path = tmp_path / "game.json"
    path.write_text(json.dumps(exported))
    printed = subprocess.run(
        [sys.executable, "-m", "slackapp.cli", "referee", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    resolved = json.loads(printed.stdout)
    assert resolved["points"] == {names[key]: points for key, points in outcome["points"].items()}
    assert resolved["winners"] == [names[key] for key in outcome["winners"]]
    assert resolved["dead"] == [names[key] for key in outcome["dead"]]
    assert resolved["dawn"] == {names[key]: card for key, card in outcome["dawn"].items()}
    assert resolved["winning_team"] == outcome["winning_team"]


def test_the_schedule_form_lists_the_workspaces_other_standing_tables(
    single_workspace: Deployment,
) -> None:
    """A workspace admin sees the workspace's other standing tables on a channel's form:
    where, when, who set each, and which are paused."""
    fake, table = single_workspace.fake, single_workspace.table()
    owner = single_workspace.owner()
    others = {"C00000RUN": None, "C00000STOP": "not_in_channel", table.channel: None}
    for channel, paused in others.items():
        a_standing_table(
            single_workspace.db,
            fake.identity.team_id,
            channel,
            ALVA,
            paused=paused,
            weekdays=31,
            zone="Europe/Stockholm",
        )
    shown = readable_text(open_schedule(single_workspace, table, owner)["blocks"])
    listed = shown[shown.index("Standing tables in other channels here:") :].splitlines()
    assert f"• <#C00000RUN>: Monday to Friday at 10:00 (Europe/Stockholm); set by <@{ALVA}>" in (
        listed
    )
    assert f"• <#C00000STOP>: paused: `not_in_channel`; set by <@{ALVA}>" in listed
    assert f"<#{table.channel}>" not in "\n".join(listed), "the form's own channel is the form"
    fake.close_modal(owner)
    # Who set this channel's table may open its form, but is no admin: a table in a private
    # channel is its members' business.
    setter = readable_text(open_schedule(single_workspace, table, ALVA)["blocks"])
    assert "other channels here" not in setter and "C00000RUN" not in setter
    fake.close_modal(ALVA)
