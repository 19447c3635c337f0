"""A Swedish channel's answers that are not the machine's own lines: a failed step, a click on
what Varulv cannot place, an unknown word, a race to open the table, a refused night move and
the name of a forgotten person. Each reaches the person in Swedish."""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.orm import sessionmaker

from slackapp.blocks.forgotten import ERASED_NAME
from slackapp.blocks.words import words
from slackapp.delivery.outbox import enqueue
from slackapp.fakeslack import FakeSlack, Message
from slackapp.game import machine as m
from slackapp.game.cards import Card
from slackapp.game.lines import Language
from slackapp.services.uow import new_table
from tests import faults
from tests.databases import WAITING_TO_OPEN
from tests.e2e.driver import Table
from tests.inprocess.harness import SETTLE_SECONDS, InProcessApp
from tests.inprocess.test_hostile_input import with_payload
from tests.inprocess.test_security import OTHER_TEAM, from_workspace
from tests.inprocess.test_swedish import choose_swedish
from tests.reliability.support import new_people, signed, signed_click

SV = words(Language.SWEDISH)


def swedish_table(
    fake: FakeSlack, app: InProcessApp, db: Engine, count: int
) -> tuple[Table, list[str]]:
    people = new_people(fake, count)
    table = Table(fake, app, db)
    choose_swedish(fake, table, people[0])
    return table, people


def swedish_lobby(table: Table, host: str, others: list[str]) -> Message:
    table.command(host)
    lobby = table.wait(
        lambda: next((m for m in table.public() if SV._("Join") in str(m.blocks)), None),
        "the Swedish lobby",
    )
    for user in others:
        table.click(user, lobby, SV._("Join"))
    table.wait(lambda: len(table.seats()) == 1 + len(others) or None, "everyone seated")
    return table.fake.message(lobby.channel, lobby.ts)


def night_dm(table: Table, user: str) -> Message:
    return table.dm(user, "Ditt kort")


def swedish_night(table: Table, people: list[str]) -> None:
    lobby = swedish_lobby(table, people[0], people[1:])
    table.click(people[0], lobby, SV._("Start"))
    table.wait_for_phase("night")
    for user in people:
        night_dm(table, user)


def answered(table: Table, user: str, before: int) -> Message:
    """The private answer ``user`` got after the ``before`` they had."""
    return table.wait(
        lambda: e[before] if len(e := table.fake.ephemerals(user)) > before else None,
        f"an answer to {user}",
    )


def set_value(value: str) -> Any:
    def change(payload: dict[str, Any]) -> None:
        payload["actions"][0]["value"] = value

    return change


def test_an_unknown_word_and_the_usage_line_are_swedish(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table, (anna,) = swedish_table(fake, app, db, 1)
    table.command(anna, "Dansa")
    said = table.ephemeral(anna, "Jag känner inte till").text
    assert "Jag känner inte till `/varulv Dansa`." in said, "echoed as typed"
    assert "Skriv `/varulv` för att duka ett bord, eller `/varulv help`" in said, said
    assert "`/varulv forget me`" in said, "the words themselves stay as they are typed"
    assert "Try" not in said and "don't know" not in said


def test_a_click_varulv_cannot_place_is_answered_in_swedish(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table, (anna, bo) = swedish_table(fake, app, db, 2)
    lobby = swedish_lobby(table, anna, [])
    join = signed(fake, lambda: fake.click(bo, lobby, lobby.button(SV._("Join")).action_id))

    before = len(fake.ephemerals(bo))
    assert app.send(with_payload(join, set_value("not a button value"))).status_code == 200
    stale = SV._("That button doesn't belong to any game I know.")
    assert answered(table, bo, before).text == stale

    before = len(fake.ephemerals(bo))
    unknown = with_payload(join, lambda p: p["actions"][0].update(action_id="no_such_button"))
    assert app.send(unknown).status_code == 200
    assert answered(table, bo, before).text == stale, "a button of no action Varulv has"

    before = len(fake.ephemerals(bo))
    assert app.send(with_payload(join, set_value("999999999"))).status_code == 200
    assert answered(table, bo, before).text == SV._("That game no longer exists.")

    before = len(fake.ephemerals(bo))
    elsewhere = from_workspace(join, bo, OTHER_TEAM)
    assert app.send(elsewhere).status_code == 200
    assert "hör till en annan arbetsyta" in answered(table, bo, before).text
    assert [seat["user_id"] for seat in table.seats()] == [anna], "nobody sat down"


def test_slack_refusing_a_step_is_told_in_swedish(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table, (anna, bo, cia) = swedish_table(fake, app, db, 3)
    lobby = swedish_lobby(table, anna, [bo, cia])
    faults.rate_limit(fake, "conversations.open", times=2, retry_after=0)  # a try, one retry
    before = len(fake.ephemerals(anna))
    table.click(anna, lobby, SV._("Start"))
    said = answered(table, anna, before).text
    assert said == SV._(
        "Slack didn't take that from Varulv just now, so it may not have gone through. "
        "Try again in a moment."
    )
    assert said.startswith("Slack tog inte emot det")
    assert table.game()["phase"] == "lobby", "nothing changed"
    table.click(anna, lobby, SV._("Start"))  # Slack takes calls again: the same table starts
    table.wait_for_phase("night")


def test_a_step_that_breaks_is_told_in_swedish(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table, (anna, bo, cia) = swedish_table(fake, app, db, 3)
    swedish_night(table, [anna, bo, cia])
    game_id = table.game_id()

    def bo_choice(choice: str | None) -> None:
        with db.begin() as connection:
            connection.execute(
                text("UPDATE seats SET night_choice = :c WHERE game_id = :g AND user_id = :u"),
                {"c": choice, "g": game_id, "u": bo},
            )

    bo_choice('{"no such choice": 1}')  # a stored game Varulv cannot read
    dm = night_dm(table, anna)
    before = len(fake.ephemerals(anna))
    table.click(anna, dm, dm.buttons()[0].text)
    said = answered(table, anna, before).text
    bo_choice(None)
    assert said == SV._(
        "Something went wrong in Varulv, so that may not have gone through. Try again."
    )
    assert said.startswith("Något gick fel i Varulv")


def test_a_night_move_the_rules_refuse_says_why_in_swedish(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table, (anna, bo, cia) = swedish_table(fake, app, db, 3)
    lobby = swedish_lobby(table, anna, [bo, cia])
    table.arrange_deal(lambda dealt, center: dealt[anna] is Card.SEER)
    table.click(anna, lobby, SV._("Start"))
    table.wait_for_phase("night")
    dm = night_dm(table, anna)
    look_at_bo = next(b for b in dm.buttons() if b.text == fake.user_name(bo))
    at_herself = with_payload(
        signed_click(fake, anna, dm, look_at_bo.action_id),
        set_value(f"{table.game_id()}:{anna}"),
    )
    before = len(fake.ephemerals(anna))
    assert app.send(at_herself).status_code == 200
    assert answered(table, anna, before).text == "Välj någon annan än dig själv."
    seat = next(s for s in table.seats() if s["user_id"] == anna)
    assert not seat["confirmed"], "nothing changed"


def test_the_loser_of_two_tables_opened_at_once_is_told_in_swedish_what_is_open(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table, (anna, bo) = swedish_table(fake, app, db, 2)
    with db.connect() as connection:
        team = connection.execute(
            text("SELECT team_id FROM channel_settings WHERE channel_id = :c"),
            {"c": table.channel},
        ).scalar_one()
    sessions = sessionmaker(db)
    lengths = m.Lengths(60, 120, 60)
    loser = threading.Thread(target=table.command, args=(bo,))
    with sessions.begin() as session:  # anna's /varulv, its table stored but not yet committed
        opening = new_table(session, team, table.channel, lengths, anna, "anna")
        assert opening is not None, "no table was open in the channel"
        game, opened = opening
        enqueue(session.connection(), game, opened.effects)
        loser.start()  # bo's /varulv inserts its table, and waits on the one-table index

        def waiting() -> bool | None:
            with db.connect() as connection:
                return connection.scalar(WAITING_TO_OPEN) or None

        table.wait(waiting, "bo's table to wait on anna's")
    loser.join(SETTLE_SECONDS)
    assert not loser.is_alive(), "bo's /varulv was answered once anna's table was committed"
    said = table.ephemeral(bo, "Det finns redan ett öppet bord i kanalen")
    assert said.text == SV._(
        "A table is already open in this channel: press *Join* on its lobby above."
    )
    assert [seat["user_id"] for seat in table.seats()] == [anna], "one table, anna's"


def test_a_forgotten_person_is_named_in_swedish_in_a_swedish_game(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table, (anna, bo, cia) = swedish_table(fake, app, db, 3)
    swedish_night(table, [anna, bo, cia])
    for phase, length in (("day", "night_seconds"), ("vote", "day_seconds")):
        app.pass_time(table.game()[length])
        table.wait_for_phase(phase)
    app.pass_time(table.game()["vote_seconds"])
    table.wait_for_phase("over")

    table.command(cia, "forget me")
    said = table.ephemeral(cia, "Varulv har glömt dig").text
    assert "”en tidigare spelare”" in said, said
    table.command(anna, "last")
    again = table.ephemeral(anna, "Avslöjandet")
    assert SV._(ERASED_NAME) == "en tidigare spelare"
    assert "en tidigare spelare" in again.rendered_text
    assert "a former player" not in again.rendered_text + str(again.blocks)
