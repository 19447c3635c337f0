"""The boards a table reads in the channel, over HTTP against the stand-in for Slack: who claims
in which order and which seats claim nothing, the deck through the vote, the early vote counted
in people, and the seats in the order people sat down in."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import Engine

from slackapp.blocks.said import said as in_english
from slackapp.blocks.screen import deck_text
from slackapp.fakeslack import FakeSlack
from slackapp.game.machine import DAY_OVER_VOTE_OPEN
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_games import NAMES, PEOPLE, new_table
from tests.inprocess.test_hostile_input import with_payload
from tests.reliability.support import signed

ANNA, BO, CIA, DAN = PEOPLE[:4]


def people_and_bots(table: Table) -> tuple[list[str], list[str]]:
    seats = table.seats()
    return (
        [seat["user_id"] for seat in seats if seat["user_id"]],
        [seat["display_name"] for seat in seats if seat["bot_name"]],
    )


def test_the_day_board_names_the_claims_order_and_the_bots_that_claim_nothing(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA], bots=True)
    table.start(ANNA)
    table.play_night([ANNA, BO, CIA])
    table.wait_for_phase("day")
    board = table.board("Heard enough").rendered_text
    people, bots = people_and_bots(table)
    (first,) = re.findall(r"<@(\w+)> speaks first", board)
    start = people.index(first)
    order = people[start:] + people[:start]  # the first speaker, then round the table
    numbered = ", ".join(f"{n}. <@{user}>" for n, user in enumerate(order, start=1))
    assert f"one round of claims, in this order: {numbered}." in board, board
    silent = " and ".join(f"*{bot}* (bot)" for bot in bots)
    assert len(bots) == 2
    assert (
        f"{silent} hold cards, may have moved cards in the night and will vote, but make no claim"
    ) in board, board


def test_every_board_keeps_the_deck_through_the_vote_and_the_vote_board_says_what_is_in_play(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA])
    table.start(ANNA)
    table.play_night([ANNA, BO, CIA])
    table.wait_for_phase("day")
    table.heard_enough([ANNA, BO])
    table.wait_for_phase("vote")
    deck, order = deck_text(3).split("\n")
    vote = table.board("One sealed ballot each").rendered_text
    assert "In play: Werewolf" in vote and deck in vote and order in vote, vote
    table.vote(dict.fromkeys([ANNA, BO, CIA], "Nobody"))
    table.wait_for_phase("over")
    closed = {
        said: table.board(said).rendered_text
        for said in ("Dawn breaks", "The day is over.", "The vote is closed.")
    }
    for said, board in closed.items():
        assert deck in board and order in board, f"{said}: {board}"


def test_the_early_vote_counts_people_and_tells_the_one_who_opened_it(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA], bots=True)
    table.start(ANNA)
    table.play_night([ANNA, BO, CIA])
    table.wait_for_phase("day")
    board = table.board("Heard enough").rendered_text
    assert "as soon as 2 of the 3 people have heard enough" in board, board
    assert "the vote opens once 2 of the 3 people have (bots are not counted)" in board
    table.heard_enough([ANNA, BO])
    table.wait_for_phase("vote")
    over = table.board("The day is over.").rendered_text
    assert "2 of the 3 people have heard enough." in over and "table" not in over, over
    table.ephemeral(BO, "2 of the 3 people have heard enough. Yours made it: the vote is open.")
    assert not [m for m in fake.ephemerals(BO, table.channel) if "Noted" in m.rendered_text]


def test_heard_enough_as_the_day_runs_out_is_told_the_vote_is_open_not_noted(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA])
    table.start(ANNA)
    table.play_night([ANNA, BO, CIA])
    table.wait_for_phase("day")
    board = table.board("Heard enough")
    app.clock.advance(table.game()["day_seconds"])  # the day is up; no timer has fired yet
    table.click(CIA, board, "Heard enough")
    table.ephemeral(CIA, in_english(DAY_OVER_VOTE_OPEN))
    assert not [m for m in fake.ephemerals(CIA, table.channel) if "Noted" in m.rendered_text]
    assert table.game()["phase"] == "vote"
    assert table.board("The day is over.", saying="Time is up.")


def test_a_heard_enough_carrying_a_bots_key_is_refused_and_changes_nothing(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO], bots=True)
    table.start(ANNA)
    table.play_night([ANNA, BO])
    table.wait_for_phase("day")
    board = table.board("Heard enough")
    bot = next(seat["bot_name"] for seat in table.seats() if seat["bot_name"])
    click = signed(fake, lambda: fake.click(ANNA, board, board.button("Heard enough").action_id))

    def as_the_bot(payload: dict[str, Any]) -> None:
        payload["user"]["id"] = bot

    before = table.seats()
    # A bot's key is no Slack id: the request is refused before any step (the machine, asked
    # directly, refuses it too: tests/game/test_machine.py).
    assert app.send(with_payload(click, as_the_bot)).status_code == 400
    table.click(BO, board, "Heard enough")  # a person's press after it still counts, alone
    table.board("Heard enough", saying="1 person has heard enough so far")
    after = {seat["bot_name"]: seat["heard_enough"] for seat in table.seats() if seat["bot_name"]}
    assert not any(after.values()) and len(before) == len(table.seats())
    assert table.game()["phase"] == "day"
    assert [m for m in fake.ephemerals(BO, table.channel) if "Noted" in m.rendered_text]
    assert not [m for m in fake.ephemerals(ANNA, table.channel) if "Noted" in m.rendered_text]


def test_seats_keep_the_order_people_sat_down_in_and_the_ballot_follows_it(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    lobby = table.seat_people(ANNA, [], bots=True)
    for seated, user in enumerate([DAN, BO, CIA], start=2):  # each takes a bot's seat
        table.click(user, lobby, "Join")

        def all_seated(n: int = seated) -> bool | None:
            return len(people_and_bots(table)[0]) == n or None

        table.wait(all_seated, f"{user} seated")
    people, bots = people_and_bots(table)
    assert people == [ANNA, DAN, BO, CIA] and len(bots) == 1
    table.start(ANNA)
    table.play_night(people)
    table.wait_for_phase("day")
    table.heard_enough(people[:3])
    for voter in (ANNA, CIA):  # each person's own ballot: the others, in sitting order
        ballot = table.ballot(voter)
        shown = [button.text for button in ballot.buttons() if "(bot)" not in button.text]
        others = [NAMES[user] for user in people if user != voter]
        assert shown[: len(others)] == others, shown


def test_the_lobby_does_not_repeat_the_apps_name_under_it(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    lobby = table.seat_people(ANNA, [BO])
    headers = [block["text"]["text"] for block in lobby.blocks if block["type"] == "header"]
    assert headers == ["Take a seat"], headers
    table.cancel(BO, lobby)
    closed = table.board("Table closed", saying="cancelled this table")
    assert "Varulv" not in [b["text"]["text"] for b in closed.blocks if b["type"] == "header"]
