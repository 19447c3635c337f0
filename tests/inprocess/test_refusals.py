"""Bad input gets a clear private message and changes nothing."""

from __future__ import annotations

from sqlalchemy import Engine

from slackapp.fakeslack import FakeSlack
from tests import faults
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_games import PEOPLE, assert_no_card_is_public, new_table

ANNA, BO, CIA, DAN = PEOPLE[:4]
STRANGER = "U0STRANGER"


def started_table(fake: FakeSlack, app: InProcessApp, db: Engine) -> Table:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA])
    table.start(ANNA)
    return table


def test_help_lists_the_seven_cards(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    table = new_table(fake, app, db)
    table.command(ANNA, "help")
    shown = table.ephemeral(ANNA, "Werewolf").rendered_text
    for card in ("Werewolf", "Minion", "Seer", "Robber", "Troublemaker", "Insomniac", "Villager"):
        assert card in shown
    assert table.public() == [], "help is private"


def test_unknown_words_are_explained(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    table = new_table(fake, app, db)
    table.command(ANNA, "Dance NOW")
    assert "/varulv help" in table.ephemeral(ANNA, "`/varulv Dance NOW`").rendered_text
    assert table.public() == []


def test_one_game_per_channel(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    table = new_table(fake, app, db)
    table.command(ANNA)
    table.lobby()
    table.command(BO)
    said = table.ephemeral(BO, "A table is already open in this channel").rendered_text
    assert "press *Join*" in said and "running" not in said, said
    lobbies = [m for m in table.public() if "Join" in str(m.blocks)]
    assert len(lobbies) == 1


def test_lobby_refusals(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    table = new_table(fake, app, db)
    table.command(ANNA)
    lobby = table.lobby()
    table.click(ANNA, lobby, "Join")
    table.ephemeral(ANNA, "already seated")
    table.click(STRANGER, lobby, "Start")
    table.ephemeral(STRANGER, "not seated")
    table.click(ANNA, lobby, "Start")
    table.ephemeral(ANNA, "at least 2 people")
    table.click(BO, lobby, "Join")
    table.wait(lambda: len(table.seats()) == 2 or None, "two seated")
    table.click(ANNA, lobby, "Start")
    table.ephemeral(ANNA, "3 to 10 seats")
    assert table.game()["phase"] == "lobby"


def test_a_person_who_cannot_get_a_dm_blocks_the_start(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    hidden = "U0HIDDEN"
    faults.set_unreachable(fake, hidden)
    table.seat_people(ANNA, [BO, hidden])
    table.click(ANNA, table.lobby(), "Start")
    notice = table.board("can't send a private message")
    assert f"<@{hidden}>" in notice.rendered_text
    assert table.game()["phase"] == "lobby"
    assert all(seat["dealt"] is None for seat in table.seats())


def test_clicks_out_of_turn(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    table = started_table(fake, app, db)
    night_dm = table.dm(ANNA)
    table.play_night([ANNA, BO, CIA])
    table.wait_for_phase("day")
    # A night button pressed after dawn changes nothing.
    response = fake.click(ANNA, night_dm, night_dm.buttons()[0].action_id, stale=True)
    assert response.status_code == 200
    table.ephemeral(ANNA, "night is over")

    table.heard_enough([ANNA, BO])
    table.wait_for_phase("vote")
    board = table.board("One sealed ballot each")
    table.click(STRANGER, board, "Vote")
    table.ephemeral(STRANGER, "not seated")
    ballot = table.ballot(ANNA)
    # Her ballot never offers her; a click forged to name her is refused, privately.
    assert "anna" not in [button.text for button in ballot.buttons()]
    for_bo = ballot.button("bo")
    assert for_bo.value is not None
    fake.click(ANNA, ballot, for_bo.action_id, value=for_bo.value.replace(BO, ANNA))
    table.ephemeral(ANNA, "cannot vote for yourself")
    table.cast(ANNA, ballot, "bo")
    answered = table.cast(ANNA, ballot, "cia")
    assert "Your ballot: <@U0CIA>" in answered.rendered_text
    table.board("One sealed ballot each", saying="1 of 3 have voted")
    assert_no_card_is_public(table)
    bo_ballot = table.ballot(BO)
    table.vote({BO: "Nobody", CIA: "Nobody"})
    table.wait_for_phase("over")
    outcome = table.stored_outcome_matches_referee()
    assert outcome["tally"] == {CIA: 1, "nobody": 2}, "the changed ballot counts, once"
    fake.click(BO, bo_ballot, bo_ballot.button("anna").action_id, stale=True)
    table.ephemeral(BO, "vote is closed")
    before = len(fake.ephemerals(BO, table.channel))
    fake.click(BO, board, board.button("Vote").action_id, stale=True)  # a board not redrawn
    table.wait(lambda: len(fake.ephemerals(BO, table.channel)) > before or None, "Bo's answer")
    assert "vote is closed" in fake.ephemerals(BO, table.channel)[-1].rendered_text


def test_stop(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    table = started_table(fake, app, db)
    for refused in (STRANGER, BO):  # not the host, though seated
        table.command(refused, "stop")
        table.ephemeral(refused, f"Only <@{ANNA}> (the game's host)")
    assert table.game()["phase"] == "night"
    table.command(ANNA, "stop")
    assert f"<@{ANNA}> stopped" in table.board("stopped this game").rendered_text
    table.wait_for_phase("stopped")
    told = [m for m in table.public() if "stopped" in m.rendered_text]
    assert len(told) == 1, "one message in the channel says the game was stopped, not two"
    table.ephemeral(ANNA, "You stopped the game")
    table.command(ANNA)
    table.wait(
        lambda: len([m for m in table.public() if "Join" in str(m.blocks)]) == 1 or None,
        "a new lobby after the stop",
    )
