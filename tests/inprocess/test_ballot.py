"""The vote through the app: each person's own ballot, the board that shows only how many
voted, the count it states, and a game anyone can check with the deal's fingerprint."""

from __future__ import annotations

import json
import re

import pytest
from sqlalchemy import Engine

from slackapp.blocks.ballot import HOW_THE_VOTE_COUNTS
from slackapp.fakeslack import FakeSlack
from slackapp.game.referee import RefereeError, referee
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_games import NAMES, PEOPLE, new_table
from tests.inprocess.test_schedule_and_last import code_block

ANNA, BO, CIA = PEOPLE[:3]
FINGERPRINT = re.compile(r"Fingerprint of the deal: `([0-9a-f]{4}(?:-[0-9a-f]{4}){7})`")


def to_the_vote(table: Table, people: list[str], bots: bool = False) -> None:
    table.seat_people(people[0], people[1:], bots=bots)
    table.start(people[0])
    table.play_night(people)
    table.wait_for_phase("day")
    table.heard_enough(people[: len(people) // 2 + 1])
    table.wait_for_phase("vote")


def board_text(table: Table) -> str:
    """All the board says: its text, what it reads, and its buttons' ids and values."""
    board = table.board("One sealed ballot each")
    buttons = [(button.action_id, button.value) for button in board.buttons()]
    return json.dumps([board.text, board.rendered_text, buttons], ensure_ascii=False)


def test_each_ballot_offers_every_other_seat_and_nobody_never_oneself(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    to_the_vote(table, [ANNA, BO, CIA], bots=True)
    seats = table.seats()
    shown = {
        seat["user_id"] or seat["bot_name"]: seat["display_name"]
        + (" (bot)" if seat["bot_name"] else "")
        for seat in seats
    }
    for user in (ANNA, BO, CIA):
        ballot = table.ballot(user)
        assert [button.text for button in ballot.buttons()] == [
            *[name for key, name in shown.items() if key != user],
            "Nobody",
        ]
        assert "You have not voted yet" in ballot.rendered_text
        assert ballot.ephemeral_to == user, "a ballot is shown to its voter only"


def test_a_ballot_shows_the_current_choice_and_can_be_changed(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    to_the_vote(table, [ANNA, BO, CIA])
    ballot = table.ballot(ANNA)
    answered = table.cast(ANNA, ballot, "bo")
    assert f"Your ballot: <@{BO}>" in answered.rendered_text
    assert f"You voted for <@{BO}>." in answered.rendered_text
    assert [b.text for b in answered.buttons() if b.element.get("style") == "primary"] == ["bo"]

    # Opened again later, it still shows the choice as committed.
    again = table.ballot(ANNA)
    assert f"You voted for <@{BO}>." in again.rendered_text
    assert [b.text for b in again.buttons() if b.element.get("style") == "primary"] == ["bo"]

    changed = table.cast(ANNA, again, "Nobody")
    assert "You voted for Nobody." in changed.rendered_text
    assert [b.text for b in changed.buttons() if b.element.get("style") == "primary"] == ["Nobody"]
    table.board("One sealed ballot each", saying="1 of 3 have voted")
    table.vote({BO: "cia", CIA: "bo"})
    table.wait_for_phase("over")
    outcome = table.stored_outcome_matches_referee()
    assert outcome["tally"] == {BO: 1, CIA: 1, "nobody": 1}, "the changed ballot, once"
    assert outcome["dead"] == [], "Nobody holds a tie at one"


def test_the_board_shows_only_how_many_voted_and_how_the_vote_counts(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    people = PEOPLE[:4]
    to_the_vote(table, people)
    before = board_text(table)
    assert HOW_THE_VOTE_COUNTS in table.board("One sealed ballot each").rendered_text
    assert [b.text for b in table.board("One sealed ballot each").buttons()] == ["Vote"]
    table.vote({ANNA: "bo", BO: "Nobody"})
    after = table.board("One sealed ballot each", saying="2 of 4 have voted")
    # Two ballots later the board differs from before only in its count.
    assert board_text(table) == before.replace("0 of 4 have voted", "2 of 4 have voted")
    assert all(f"<@{user}>" not in json.dumps(after.blocks) for user in people)


def test_one_ballot_each_and_none_for_nobody_kills_every_seat(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """The original's only threshold is Nobody: a one-vote execution still executes."""
    table = new_table(fake, app, db)
    to_the_vote(table, [ANNA, BO, CIA])
    table.vote({ANNA: "bo", BO: "cia", CIA: "anna"})
    table.wait_for_phase("over")
    outcome = table.stored_outcome_matches_referee()
    assert outcome["tally"] == {ANNA: 1, BO: 1, CIA: 1}
    assert outcome["dead"] == [ANNA, BO, CIA]

    table.command(ANNA, "help")
    said = table.ephemeral(ANNA, "How to play Varulv").rendered_text
    assert HOW_THE_VOTE_COUNTS in said
    assert "if every seat gets one ballot and no one votes for Nobody, every seat dies" in said


def test_the_night_boards_fingerprint_is_checked_by_the_referee_from_the_whole_game(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    mans = "U0MANS"
    fake.add_user(mans, "mans", display_name="Måns")
    people = [ANNA, BO, mans]
    table.seat_people(ANNA, [BO, mans])
    table.start(ANNA)
    found = FINGERPRINT.search(table.board("Night falls").rendered_text)
    assert found, table.board("Night falls").rendered_text
    shown = found.group(1)
    table.play_night(people)
    dawn = table.board("Dawn breaks")
    assert f"`{shown}`" in dawn.rendered_text, "the fingerprint stays once the night is over"
    table.wait_for_phase("day")
    table.heard_enough([ANNA, BO])
    table.wait_for_phase("vote")
    table.vote({ANNA: "Måns", BO: "Måns", mans: "Nobody"})
    table.wait_for_phase("over")
    outcome = table.stored_outcome_matches_referee()

    table.command(ANNA, "last")
    again = table.ephemeral(ANNA, "Anyone can check it")
    assert "pip install" not in again.rendered_text, "no package the project has not published"
    assert "`python3 varulv_referee.pyz &lt; game.json`" in again.rendered_text  # shown as <
    table.click(ANNA, again, "The whole game, for the referee")
    message = table.ephemeral(ANNA, "as the referee reads it").text
    assert "pip install" not in message and "`python3 varulv_referee.pyz &lt; game.json`" in message
    assert "SHA-256" in message, "the fingerprint's recipe, for a person with hashlib alone"
    assert f"`{shown}`" in message and "`center` is the centre" in message
    assert '"Måns"' in message and "\\u00e5" not in message, "names as written, in UTF-8"
    exported = code_block(message)
    assert exported["fingerprint"] == shown and exported["salt"]
    # Each fingerprint is in a message of its own, posted once and never edited: a witness.
    sealed = table.board("The deal is sealed", shown)
    night_sealed = table.board("The night is sealed", exported["night_fingerprint"])
    edited = {call.params.get("ts") for call in fake.calls_to("chat.update")}
    assert sealed.ts not in edited and night_sealed.ts not in edited

    resolved = referee(json.dumps(exported))
    assert resolved["fingerprint"] == shown
    assert resolved["dead"] == [NAMES.get(key, "Måns") for key in outcome["dead"]]
    # Any other deal under the same salt and fingerprint is refused: the first seat's card
    # changes places with the first centre card unlike it.
    first = exported["seats"][0]
    held = exported["dealt"][first]
    unlike = next(index for index, card in enumerate(exported["center"]) if card != held)
    center = list(exported["center"])
    center[unlike], dealt = held, {**exported["dealt"], first: exported["center"][unlike]}
    forged = {**exported, "dealt": dealt, "center": center, "night": {}}
    with pytest.raises(RefereeError, match="does not match the fingerprint"):
        referee(json.dumps(forged))
