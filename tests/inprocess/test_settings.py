"""``/varulv settings``: the modal, its checks, and the next game taking the channel's choice."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from slackapp.blocks.settings import BOTS_ACTION, BOTS_OFFERED, OPEN_BLOCK
from slackapp.fakeslack import Message
from slackapp.game.machine import DAY_SECONDS_BOUNDS, NIGHT_SECONDS_BOUNDS, VOTE_SECONDS_BOUNDS
from slackapp.listeners.views import read_choice
from tests.e2e.driver import Table
from tests.operate.conftest import PEOPLE, Deployment

ALVA, BENGT, CARIN, DORIS = PEOPLE


def offers_bots(message: Message) -> bool:
    return any(button.text == "Fill with bots" for button in message.buttons())


def open_settings(deployment: Deployment, table: Table, user: str) -> dict[str, Any]:
    table.command(user, "settings")
    return table.wait(lambda: next(iter(deployment.fake.modals(user)), None), "the settings modal")


def initial_values(modal: dict[str, Any]) -> dict[str, Any]:
    shown: dict[str, Any] = {}
    for block in modal["blocks"]:
        element = block.get("element") or {}
        if element.get("type") == "number_input":
            shown[element["action_id"]] = element["initial_value"]
        elif element.get("type") == "checkboxes":
            shown[element["action_id"]] = [o["value"] for o in element.get("initial_options", [])]
    return shown


def stored(deployment: Deployment, table: Table) -> dict[str, Any] | None:
    with deployment.db.connect() as connection:
        row = (
            connection.execute(
                text("SELECT * FROM channel_settings WHERE channel_id = :c"), {"c": table.channel}
            )
            .mappings()
            .one_or_none()
        )
        return None if row is None else dict(row)


def test_modal_refuses_lengths_out_of_bounds(single_workspace: Deployment) -> None:
    fake, table = single_workspace.fake, single_workspace.table()
    owner = single_workspace.owner()
    modal = open_settings(single_workspace, table, owner)
    assert initial_values(modal) == {
        "night_seconds": "120",
        "day_seconds": "300",
        "vote_seconds": "120",
        BOTS_ACTION: [BOTS_OFFERED],
        OPEN_BLOCK: [],
    }, "a channel without settings shows the defaults, and its owner may open it to everyone"

    answer = fake.view_submission(
        owner,
        {
            "night_seconds": str(NIGHT_SECONDS_BOUNDS[0] - 1),
            "day_seconds": "a while",
            "vote_seconds": str(VOTE_SECONDS_BOUNDS[1] + 1),
        },
    )
    body = answer.json()
    assert body["response_action"] == "errors"
    assert set(body["errors"]) == {"night_seconds", "day_seconds", "vote_seconds"}
    assert "whole number" in body["errors"]["day_seconds"]
    assert fake.modals(owner), "the modal stays open to be corrected"
    assert stored(single_workspace, table) is None

    fake.view_submission(owner, {"night_seconds": "45", "day_seconds": "90", "vote_seconds": "60"})
    assert fake.modals(owner) == []
    assert stored(single_workspace, table) is not None


def test_next_game_uses_the_lengths_and_the_bot_switch(single_workspace: Deployment) -> None:
    fake, table = single_workspace.fake, single_workspace.table()
    table.command(ALVA)
    running = table.lobby()
    running_game = table.game_id()

    owner = single_workspace.owner()  # a lobby's host does not answer for the channel
    open_settings(single_workspace, table, owner)
    fake.view_submission(
        owner,
        {"night_seconds": "45", "day_seconds": "240", "vote_seconds": "75", BOTS_ACTION: []},
    )
    announcement = table.board("changed the Varulv settings")
    assert f"<@{owner}>" in announcement.text
    assert "night 45 seconds, day 4 minutes, vote 1 minute 15 seconds, bots off" in (
        announcement.text
    )
    row = stored(single_workspace, table)
    assert row is not None
    assert (row["night_seconds"], row["day_seconds"], row["vote_seconds"]) == (45, 240, 75)
    assert (row["bots_allowed"], row["updated_by"], row["team_id"]) == (False, owner, "T0001")

    # The table already open keeps what it started with.
    assert table.game()["night_seconds"] == 120
    assert offers_bots(fake.message(running.channel, running.ts))
    table.cancel(ALVA, running)

    table.command(CARIN)
    table.wait(lambda: table.game_id() != running_game or None, "a new game")
    game = table.game()
    assert (game["night_seconds"], game["day_seconds"], game["vote_seconds"]) == (45, 240, 75)
    assert game["bots_allowed"] is False
    lobby = table.lobby()
    assert not offers_bots(lobby)

    # Reopened, the modal shows what is stored; switching bots back on offers them again.
    modal = open_settings(single_workspace, table, owner)
    shown = initial_values(modal)
    shown.pop(OPEN_BLOCK, None)  # the admins' own choice, tested with the permissions
    assert shown == {
        "night_seconds": "45",
        "day_seconds": "240",
        "vote_seconds": "75",
        BOTS_ACTION: [],
    }
    fake.view_submission(owner, {BOTS_ACTION: [BOTS_OFFERED]})
    table.cancel(CARIN, lobby)
    table.command(CARIN)
    assert offers_bots(table.lobby())
    assert table.game()["bots_allowed"] is True


def test_channels_keep_their_own_settings(single_workspace: Deployment) -> None:
    fake = single_workspace.fake
    first, second = single_workspace.table(), single_workspace.table()
    owner = single_workspace.owner()
    open_settings(single_workspace, first, owner)
    fake.view_submission(owner, {"day_seconds": str(DAY_SECONDS_BOUNDS[0])})
    second.command(BENGT)
    second.lobby()
    assert second.game()["day_seconds"] == 300, "another channel keeps the defaults"
    first.command(ALVA)
    first.lobby()
    assert first.game()["day_seconds"] == DAY_SECONDS_BOUNDS[0]


@pytest.mark.parametrize(
    ("entered", "problem"),
    [
        ({"night_seconds": "29"}, "night_seconds"),
        ({"night_seconds": "601"}, "night_seconds"),
        ({"day_seconds": "59"}, "day_seconds"),
        ({"day_seconds": "1801"}, "day_seconds"),
        ({"vote_seconds": "29"}, "vote_seconds"),
        ({"vote_seconds": "1.5"}, "vote_seconds"),
        ({"vote_seconds": None}, "vote_seconds"),
    ],
)
def test_each_bound_is_checked(entered: dict[str, str | None], problem: str) -> None:
    values = {"night_seconds": "30", "day_seconds": "1800", "vote_seconds": "600", **entered}
    state = {name: {name: {"type": "number_input", "value": v}} for name, v in values.items()}
    choice, errors = read_choice({"state": {"values": state}})
    assert choice is None
    assert list(errors) == [problem]


def test_the_bounds_themselves_are_accepted() -> None:
    values = {"night_seconds": "30", "day_seconds": "1800", "vote_seconds": "600"}
    state: dict[str, Any] = {
        name: {name: {"type": "number_input", "value": v}} for name, v in values.items()
    }
    state[BOTS_ACTION] = {BOTS_ACTION: {"type": "checkboxes", "selected_options": []}}
    choice, errors = read_choice({"state": {"values": state}})
    assert errors == {}
    assert choice is not None
    assert (choice.night_seconds, choice.day_seconds, choice.vote_seconds) == (30, 1800, 600)
    assert choice.bots_allowed is False


def test_the_settings_notice_goes_through_the_outbox_even_before_any_game(
    single_workspace: Deployment,
) -> None:
    """The channel hears of its new settings like it hears of a game: an outbox entry, sent by
    the deliverer. It is a notice, a stream of its own that no game carries: the channel that
    has had no game still has none."""
    fake, table = single_workspace.fake, single_workspace.table()
    owner = single_workspace.owner()  # nobody else may change a channel that has no table
    since = len(fake.calls)
    open_settings(single_workspace, table, owner)
    fake.view_submission(owner, {"night_seconds": "60", "day_seconds": "120", "vote_seconds": "60"})
    announcement = table.board("changed the Varulv settings")
    assert f"<@{owner}>" in announcement.text
    with single_workspace.db.connect() as connection:
        sent = connection.execute(
            text(
                "SELECT outbox.team_id, outbox.done_at IS NOT NULL, games.id FROM outbox"
                " LEFT JOIN games ON games.id = outbox.stream"
                " WHERE outbox.channel = :c AND outbox.text = :t"
            ),
            {"c": table.channel, "t": announcement.text},
        ).all()
        games_in_channel = connection.execute(
            text("SELECT count(*) FROM games WHERE channel_id = :c"), {"c": table.channel}
        ).scalar_one()
    assert [tuple(row) for row in sent] == [(fake.identity.team_id, True, None)]
    assert games_in_channel == 0, "no game carries the notice"
    posts = [c for c in fake.calls[since:] if c.method == "chat.postMessage"]
    assert [c.params.get("text") for c in posts] == [announcement.text], "nothing else is shown"
    table.command(DORIS, "last")
    assert table.ephemeral(DORIS, "No game")
    table.command(ALVA)
    table.wait(lambda: table.game()["phase"] == "lobby" or None, "a table opens all the same")
