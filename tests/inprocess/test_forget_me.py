"""``/varulv forget me`` through the app as Slack sends it: the person's rows are erased and
the games they played stay, anonymous. Each request returns once all it started is done, so
"no row names them" is checked once the app has nothing left to do."""

from __future__ import annotations

import json

from sqlalchemy import Engine

from slackapp.blocks.forgotten import ERASED_NAME
from slackapp.fakeslack import FakeSlack
from slackapp.game import machine as m
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.reliability.support import new_people
from tests.reliability.test_erasure import outcome_of, rows_naming, seat_rows_of


def test_forget_me_erases_a_person_and_keeps_their_games_outcomes_anonymous(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, bo, cia = new_people(fake, 3)
    table = Table(fake, app, db)
    lobby = table.seat_people(anna, [bo, cia])
    table.click(anna, lobby, "I usually play")
    table.ephemeral(anna, "Marked")
    table.start(anna)
    table.play_night([anna, bo, cia])
    table.heard_enough([anna, bo])
    table.wait_for_phase("vote")
    anna_name = next(s["display_name"] for s in table.seats() if s["user_id"] == anna)
    table.vote({anna: "Nobody", bo: anna_name, cia: "Nobody"})
    table.wait_for_phase("over")
    table.reveal()
    finished = table.game_id()
    before = json.dumps(outcome_of(db, finished))
    position = next(seat["position"] for seat in table.seats() if seat["user_id"] == anna)

    table.command(anna)  # seated at a running table: refused, and nothing erased
    table.lobby_shows(table.lobby(), "Seated (1)")
    table.command(anna, "forget me")
    said = table.ephemeral(anna, "that has not ended").rendered_text
    assert "Leave" in said, "a lobby's seat is left with its button"
    assert "scores" in rows_naming(db, anna)

    table.cancel(anna, table.lobby())
    table.command(anna, "forget me")
    said = table.ephemeral(anna, "Varulv has forgotten you").rendered_text
    assert "points and wins in 1 channel" in said and "In 2 finished games" in said, said
    assert rows_naming(db, anna) == {}, "no row anywhere names the person"
    erased = m.erased_key(position)
    assert json.dumps(outcome_of(db, finished)) == before.replace(anna, erased)
    seat = next(seat for seat in seat_rows_of(db, finished) if seat["position"] == position)
    assert (seat["user_id"], seat["display_name"]) == (erased, ERASED_NAME)
    assert "scores" in rows_naming(db, bo), "the others keep theirs"

    table.command(bo, "last")  # the reveal told again: the game, without the person
    again = table.ephemeral(bo, "Anyone can check it")
    assert ERASED_NAME in again.rendered_text and anna not in json.dumps(again.blocks)
    table.command(bo, "help")
    table.ephemeral(bo, "/varulv forget me")
    table.command(bo, "score")
    board = table.ephemeral(bo, "leaderboard")
    assert anna not in json.dumps(board.blocks)
