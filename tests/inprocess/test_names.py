"""People are named as Slack shows them (their profile's display name, else real name), not by
the legacy username payloads carry; the name is cached, and Slack failing to give it never
keeps anyone from their seat. Each test has people of its own: the cache outlives a test."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine, text

from slackapp.fakeslack import FakeSlack
from tests import faults
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp

pytestmark = pytest.mark.long(6)


def users_info_calls(fake: FakeSlack, user: str) -> int:
    return sum(call.params.get("user") == user for call in fake.calls_to("users.info"))


def seated_names(table: Table) -> dict[str, str]:
    return {seat["user_id"]: seat["display_name"] for seat in table.seats() if seat["user_id"]}


def test_a_whole_game_names_people_by_their_display_names(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    jane, olle, pia = "U0NJANE", "U0NOLLE", "U0NPIA"
    fake.add_user(jane, "jsmith", display_name="Jane", real_name="Jane Smith")
    fake.add_user(olle, "olle.b", display_name="", real_name="Olle Berg")  # no display name
    fake.add_user(pia, "pia.k", display_name="Pia", real_name="Pia Karlsson")
    table = Table(fake, app, db)
    lobby = table.seat_people(jane, [olle, pia])
    assert seated_names(table) == {jane: "Jane", olle: "Olle Berg", pia: "Pia"}
    shown_lobby = json.dumps(fake.message(lobby.channel, lobby.ts).blocks)
    assert not any(handle in shown_lobby for handle in ("jsmith", "olle.b", "pia.k"))

    table.start(jane)
    table.play_night([jane, olle, pia])
    table.wait_for_phase("day")
    table.heard_enough([jane, olle])
    ballot = table.ballot(jane)
    labels = [button.text for button in ballot.buttons()]
    assert {"Olle Berg", "Pia"} <= set(labels) and "Jane" not in labels, labels
    assert not any(handle in json.dumps(ballot.blocks) for handle in ("jsmith", "olle.b"))
    table.vote({jane: "Olle Berg", olle: "Jane", pia: "Jane"})
    reveal = json.dumps(table.reveal().blocks)
    assert "jsmith" not in reveal and "olle.b" not in reveal
    assert users_info_calls(fake, jane) == 1, "one lookup per person in a whole game"


def test_slack_refusing_the_name_still_seats_the_person_under_their_handle(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    host, late, slow = "U0NHOST", "U0NKARL", "U0NSLOW"
    fake.add_user(host, "hosty", display_name="Hosta", real_name="Hosta Ek")
    fake.add_user(late, "kalle", display_name="Karl", real_name="Karl Ek")
    fake.add_user(slow, "snigel", display_name="Snail", real_name="Sven Snigel")
    table = Table(fake, app, db)
    faults.fail_next(fake, "users.info", "missing_scope")  # an install from before users:read
    table.command(host)
    lobby = table.lobby()
    faults.rate_limit(fake, "users.info", retry_after=30)  # throttled: no waiting it out
    table.click(late, lobby, "Join")
    table.wait(lambda: len(table.seats()) == 2 or None, "Karl seated")
    faults.slow_down(fake, 5, "users.info")  # Slack too slow to answer: the join goes on without it
    try:
        table.click(slow, lobby, "Join")
        table.wait(lambda: len(table.seats()) == 3 or None, "Sven seated")
    finally:
        faults.slow_down(fake, 0, "users.info")
    assert seated_names(table) == {host: "hosty", late: "kalle", slow: "snigel"}
    with db.connect() as connection:
        kept = connection.execute(
            text("SELECT count(*) FROM people WHERE user_id IN (:a, :b, :c)"),
            {"a": host, "b": late, "c": slow},
        ).scalar_one()
    assert kept == 0, "a handle standing in is not kept as the person's name"
    table.start(host)  # the game goes on as usual


def test_a_name_is_looked_up_once_a_day_and_a_failed_refresh_keeps_the_cached_one(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    regular, host = "U0NREGULAR", "U0NHOST2"
    fake.add_user(regular, "reg", display_name="Regina", real_name="Regina Ek")
    fake.add_user(host, "hosta2", display_name="Hosta", real_name="Hosta Ek")
    table = Table(fake, app, db)

    def join_a_new_table() -> dict[str, str]:
        table.command(host)
        lobby = table.lobby()
        table.click(regular, lobby, "Join")
        table.wait(lambda: len(table.seats()) == 2 or None, "the regular seated")
        names = seated_names(table)
        table.cancel(host, lobby)
        return names

    assert join_a_new_table()[regular] == "Regina"
    fake.add_user(regular, display_name="Reggie")  # renamed in Slack, seen within a day
    assert join_a_new_table()[regular] == "Regina"
    assert users_info_calls(fake, regular) == 1, "the cache answered the second join"

    def age_the_cache() -> None:
        with db.begin() as connection:
            connection.execute(
                text(
                    "UPDATE people SET fetched_at = now() - interval '25 hours' WHERE user_id = :u"
                ),
                {"u": regular},
            )

    age_the_cache()
    assert join_a_new_table()[regular] == "Reggie", "a day-old name is looked up again"
    assert users_info_calls(fake, regular) == 2
    age_the_cache()
    faults.fail_next(fake, "users.info", "internal_error")
    table.command(host)  # the host's name is cached: only the regular's lookup fails
    lobby = table.lobby()
    table.click(regular, lobby, "Join")
    table.wait(lambda: len(table.seats()) == 2 or None, "the regular seated")
    assert seated_names(table)[regular] == "Reggie", "the cached name, not the handle"
    assert users_info_calls(fake, regular) == 3
    table.cancel(host, lobby)
