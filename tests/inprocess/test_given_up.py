"""A game whose deadline cannot be stepped, however often it is tried: once its step has failed
every time for a minute it is ended, its board, its people and its channel are told, and the
channel may open a new game. A step that fails and then goes through, or that has failed only
for a moment, ends nothing, and the other games due with it step on time."""

from __future__ import annotations

import itertools
import re

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import Engine

from slackapp.fakeslack import FakeSlack, Message
from slackapp.game import Card
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.reliability.support import BrokenSteps

NIGHT_SECONDS = 120  # the in-process app's
FAULT = "Varulv hit a fault in this game"
FAULT_DM = "Varulv hit a fault in the game in"
FREE = "The channel is free again: type `/varulv` to start a new game."
_numbers = itertools.count(1)


def night_table(fake: FakeSlack, app: InProcessApp, db: Engine) -> tuple[Table, list[str]]:
    """A table of three people, its night begun."""
    number = next(_numbers)
    people = [f"U{number:02d}FLT{seat}" for seat in "ABC"]
    for user in people:
        fake.add_user(user, user.lower())
    table = Table(fake, app, db)
    table.seat_people(people[0], people[1:])
    table.start(people[0])
    return table, people


def given_up_count() -> float:
    return REGISTRY.get_sample_value("varulv_games_given_up_total", {"phase": "night"}) or 0.0


def errors_about(app: InProcessApp, game_id: int) -> list[str]:
    return [line for line in app.errors_logged() if re.search(rf"\bgame {game_id}\b", line)]


def sweep(app: InProcessApp, seconds: float) -> None:
    """Move the clock on, and step the due deadlines as the timers' sweep (or a timer that
    fired) does: a batch, then its games one by one should it fail."""
    app.clock.advance(seconds)
    app.varulv.games.deadlines_due()
    app.settle()


def test_a_game_whose_deadline_step_always_fails_is_ended_and_its_channel_freed(
    fake: FakeSlack, app: InProcessApp, db: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken_table, people = night_table(fake, app, db)
    healthy_table, _ = night_table(fake, app, db)
    broken = broken_table.game_id()
    board = broken_table.board("Night falls")
    dms = [broken_table.dm(user) for user in people]
    steps = BrokenSteps(monkeypatch)
    steps.always.add(broken)
    counted = given_up_count()

    # Its deadline passed a minute and a half ago when first tried: still, one failure ends
    # nothing, and the game due in the same batch steps on time.
    sweep(app, NIGHT_SECONDS + 90)
    assert broken in steps.raised
    assert healthy_table.game()["phase"] == "day", "the other game's deadline was stepped"
    assert broken_table.game()["phase"] == "night"
    sweep(app, 30)
    assert broken_table.game()["phase"] == "night", "failing for half a minute ends nothing"
    assert FAULT not in fake.message(board.channel, board.ts).rendered_text

    sweep(app, 31)  # failing every time for a minute
    game = broken_table.game()
    assert (game["phase"], game["deadline"]) == ("stopped", None)
    assert given_up_count() == counted + 1
    redrawn = fake.message(board.channel, board.ts)
    assert FAULT in redrawn.rendered_text and redrawn.buttons() == [], "the board says so"
    for dm in dms:
        night = fake.message(dm.channel, dm.ts).rendered_text
        assert FAULT_DM in night, "so does each night DM, naming the channel"
    told = broken_table.board(FREE)
    for shown in (redrawn, told):
        for card in Card:
            assert card.value not in shown.rendered_text, "nothing secret is said"
    errors = errors_about(app, broken)
    assert len(errors) == 2, errors
    assert "failed" in errors[0] and "ended" in errors[1], "its first failure, then its end"

    broken_table.command(people[1])  # the channel takes a new game
    lobby = broken_table.lobby()
    assert broken_table.game_id() != broken
    assert broken_table.game()["phase"] == "lobby"
    assert lobby.ts != board.ts
    sweep(app, 60)
    assert errors_about(app, broken) == errors, "logged once"


def test_a_step_that_fails_and_then_goes_through_ends_nothing(
    fake: FakeSlack, app: InProcessApp, db: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each game stepped by its own timer (``GameService.deadline``): a step failing once in
    each phase is tried again and goes through; one failing every time is given up."""
    flaky_table, _ = night_table(fake, app, db)
    broken_table, _ = night_table(fake, app, db)
    flaky, broken = flaky_table.game_id(), broken_table.game_id()
    board = broken_table.board("Night falls")
    steps = BrokenSteps(monkeypatch)
    steps.once.add(flaky)
    steps.always.add(broken)

    app.pass_time(NIGHT_SECONDS + 90, failures=True)  # both long due: each fails
    assert steps.raised.count(flaky) == 1 and broken in steps.raised
    assert (flaky_table.game()["phase"], broken_table.game()["phase"]) == ("night", "night")
    app.pass_time(30, failures=True)
    assert flaky_table.game()["phase"] == "day", "tried again, it went through"
    app.pass_time(31, failures=True)
    assert broken_table.game()["phase"] == "stopped"
    assert FAULT in fake.message(board.channel, board.ts).rendered_text
    assert flaky_table.game()["phase"] == "day"

    steps.once.add(flaky)  # its day's end fails once: it counts from nothing again
    app.pass_time(300, failures=True)
    assert steps.raised.count(flaky) == 2
    assert flaky_table.game()["phase"] == "day"
    app.pass_time(1, failures=True)
    assert flaky_table.game()["phase"] == "vote"
    shown: list[Message] = flaky_table.public()
    assert all(FAULT not in message.rendered_text for message in shown)
