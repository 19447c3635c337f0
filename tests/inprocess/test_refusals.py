"""Bad input gets a clear private message and changes nothing; a private answer Slack fails
once (a 500, a 429, a dropped connection) still reaches the person."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from slackapp.fakeslack import FakeSlack
from slackapp.fakeslack.webapi import ApiAnswer
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


FAILED_ONCE = {
    "Slack failing": ApiAnswer({"ok": False, "error": "internal_error"}, 500),
    "Slack's gateway failing": ApiAnswer({}, 502),
    "Slack throttling": ApiAnswer({"ok": False, "error": "ratelimited"}, 429, {"Retry-After": "1"}),
    "the connection dropped": ApiAnswer({}, hang_up=True),
}


@pytest.mark.parametrize("failure", FAILED_ONCE.values(), ids=FAILED_ONCE.keys())
def test_a_private_answer_slack_fails_once_is_shown_all_the_same(
    fake: FakeSlack, app: InProcessApp, db: Engine, failure: ApiAnswer
) -> None:
    """A click's answer and a command's, each failed once by Slack, are sent again and shown
    once each."""
    table = new_table(fake, app, db)
    lobby = table.seat_people(ANNA, [BO, CIA])
    since = len(fake.calls)
    with faults.AnswersFailing(fake, "not seated", failure):
        table.click(DAN, lobby, "Cancel")
    table.start(ANNA)
    with faults.AnswersFailing(fake, "You stopped the game", failure):
        table.command(ANNA, "stop")
    table.wait_for_phase("stopped")

    for user, said in ((DAN, "not seated"), (ANNA, "You stopped the game")):
        tried = [
            call.status
            for call in fake.calls[since:]
            if call.method == "response_url" and said in str(call.params.get("text"))
        ]
        assert tried == [failure.status, 200], f"{said!r}: failed once, then taken"
        shown = [m for m in fake.ephemerals(user, table.channel) if said in m.rendered_text]
        assert len(shown) == 1, f"{user} is shown {said!r} once"


def test_a_private_answer_throttled_for_long_is_not_held_back(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """Slack asking a private answer to wait a minute: it is not tried again (a person who
    waited that long has moved on), and the refusal is logged."""
    table = new_table(fake, app, db)
    since = len(fake.calls)
    throttled = ApiAnswer({"ok": False, "error": "ratelimited"}, 429, {"Retry-After": "60"})
    with faults.AnswersFailing(fake, "No game is running", throttled, times=2):
        table.command(DAN, "stop")
    tried = [
        call.status
        for call in fake.calls[since:]
        if call.method == "response_url" and "No game is running" in str(call.params.get("text"))
    ]
    assert tried == [429], "tried once"
    assert not [m for m in fake.ephemerals(DAN, table.channel) if "No game" in m.rendered_text]
    assert any("could not answer privately" in line for line in app.log.lines)
