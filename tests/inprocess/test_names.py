"""People are named as Slack shows them (their profile's display name, else real name), not by
the legacy username payloads carry. Slack draws mentions itself; a name written out (button
labels, the referee's input) is asked of Slack once, off the click path, and kept: neither
``/varulv`` nor *Join* waits for ``users.info``, and Slack failing to give a name never keeps
anyone from their seat. Each test has people of its own: the kept names outlive a test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import Engine, text

from slackapp.fakeslack import FakeSlack
from slackapp.fakeslack.webapi import Answerer, ApiAnswer, ApiRequest
from tests import faults
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp

pytestmark = pytest.mark.long(6)

DAY = 24 * 3600


def users_info_calls(fake: FakeSlack, user: str) -> int:
    return sum(call.params.get("user") == user for call in fake.calls_to("users.info"))


def seated_names(table: Table) -> dict[str, str]:
    return {seat["user_id"]: seat["display_name"] for seat in table.seats() if seat["user_id"]}


def kept_name(db: Engine, user: str) -> str | None:
    with db.connect() as connection:
        found = connection.execute(
            text("SELECT name FROM people WHERE user_id = :u"), {"u": user}
        ).scalar_one_or_none()
    return None if found is None else str(found)


@contextmanager
def seated_when_asked(fake: FakeSlack, db: Engine) -> Iterator[dict[str, bool]]:
    """For each person users.info is asked about: whether they sat at a table already, as Slack
    received the call. A click that waited for the name would not have been stepped yet."""
    seated: dict[str, bool] = {}

    def note(request: ApiRequest, answer: Answerer) -> ApiAnswer:
        if request.method == "users.info":
            user = str(request.params.get("user"))
            with db.connect() as connection:
                seated[user] = bool(
                    connection.execute(
                        text("SELECT count(*) FROM seats WHERE user_id = :u"), {"u": user}
                    ).scalar_one()
                )
        return answer(request)

    fake.api.hooks.append(note)
    try:
        yield seated
    finally:
        fake.api.hooks.remove(note)


def test_a_table_opens_and_fills_without_waiting_for_users_info_and_names_follow(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    jane, olle, pia = "U0NJANE", "U0NOLLE", "U0NPIA"
    fake.add_user(jane, "jsmith", display_name="Jane", real_name="Jane Smith")
    fake.add_user(olle, "olle.b", display_name="", real_name="Olle Berg")  # no display name
    fake.add_user(pia, "pia.k", display_name="Pia", real_name="Pia Karlsson")
    table = Table(fake, app, db)
    with seated_when_asked(fake, db) as seated:
        lobby = table.seat_people(jane, [olle, pia])
        names = {jane: "Jane", olle: "Olle Berg", pia: "Pia"}
        table.wait(lambda: seated_names(table) == names or None, "the names Slack gave, kept")
    assert seated == {jane: True, olle: True, pia: True}, "asked only once they were seated"
    shown = fake.shown_text(fake.message(lobby.channel, lobby.ts))
    assert all(f"@{name}" in shown for name in names.values()), shown
    assert not any(handle in shown for handle in ("jsmith", "olle.b", "pia.k"))

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

    table.command(olle)  # the next table: the kept names, and no lookup at all
    table.click(jane, table.lobby(), "Join")
    table.wait(lambda: len(table.seats()) == 2 or None, "the next table seated")
    assert seated_names(table) == {olle: "Olle Berg", jane: "Jane"}
    assert users_info_calls(fake, jane) == users_info_calls(fake, olle) == 1


def test_slack_refusing_the_name_still_seats_the_person_under_their_handle(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    host, late, slow = "U0NHOST", "U0NKARL", "U0NSLOW"
    fake.add_user(host, "hosty", display_name="Hosta", real_name="Hosta Ek")
    fake.add_user(late, "kalle", display_name="Karl", real_name="Karl Ek")
    fake.add_user(slow, "snigel", display_name="Snail", real_name="Sven Snigel")
    table = Table(fake, app, db)
    faults.fail_next(fake, "users.info", "missing_scope")  # an install from before users:read
    faults.rate_limit(fake, "users.info", retry_after=30)  # throttled: no waiting it out
    faults.fail_next(fake, "users.info", "internal_error")
    table.command(host)
    lobby = table.lobby()
    table.click(late, lobby, "Join")
    table.click(slow, lobby, "Join")
    table.wait(lambda: len(table.seats()) == 3 or None, "all three seated")
    table.wait(
        lambda: sum(users_info_calls(fake, u) for u in (host, late, slow)) == 3 or None,
        "each name asked of Slack once",
    )
    app.settle()
    assert seated_names(table) == {host: "hosty", late: "kalle", slow: "snigel"}
    assert [kept_name(db, u) for u in (host, late, slow)] == [None] * 3, (
        "a handle standing in is not kept as the person's name"
    )
    table.start(host)  # the game goes on as usual


def test_a_name_is_asked_again_once_a_day_and_a_failed_refresh_keeps_the_kept_one(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    regular, host = "U0NREGULAR", "U0NHOST2"
    fake.add_user(regular, "reg", display_name="Regina", real_name="Regina Ek")
    fake.add_user(host, "hosta2", display_name="Hosta", real_name="Hosta Ek")
    table = Table(fake, app, db)

    def join_a_new_table(expected: str) -> None:
        table.command(host)
        lobby = table.lobby()
        table.click(regular, lobby, "Join")
        table.wait(
            lambda: seated_names(table).get(regular) == expected or None,
            f"the regular seated as {expected}",
        )
        table.cancel(host, lobby)

    join_a_new_table("Regina")
    fake.add_user(regular, display_name="Reggie")  # renamed in Slack, seen within a day
    join_a_new_table("Regina")
    assert users_info_calls(fake, regular) == 1, "the kept name answered the second join"

    app.clock.advance(DAY + 3600)
    join_a_new_table("Reggie")  # seated as Regina, renamed once Slack answered
    assert users_info_calls(fake, regular) == 2
    app.clock.advance(DAY + 3600)
    faults.fail_next(fake, "users.info", "internal_error")
    table.command(host)
    lobby = table.lobby()
    table.click(regular, lobby, "Join")
    table.wait(lambda: users_info_calls(fake, regular) == 3 or None, "the name asked again")
    app.settle()
    assert seated_names(table)[regular] == "Reggie", "the kept name, not the handle"
    assert kept_name(db, regular) == "Reggie"
    table.cancel(host, lobby)


def test_a_profile_change_renames_the_kept_name_and_the_open_lobby(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    host, guest = "U0NHOST3", "U0NGUEST"
    fake.add_user(host, "h3", display_name="Hedda", real_name="Hedda Ek")
    fake.add_user(guest, "g", display_name="Greta", real_name="Greta Ek")
    table = Table(fake, app, db)
    table.command(host)
    table.click(guest, table.lobby(), "Join")
    table.wait(lambda: seated_names(table).get(guest) == "Greta" or None, "Greta seated")
    asked = users_info_calls(fake, guest)

    fake.add_user(guest, display_name="Gittan")
    assert fake.user_changed(guest).status_code == 200
    table.wait(lambda: seated_names(table).get(guest) == "Gittan" or None, "the lobby renamed")
    assert kept_name(db, guest) == "Gittan"
    assert users_info_calls(fake, guest) == asked, "the event carried the name: no lookup"
    shown = fake.shown_text(table.lobby())
    assert "@Gittan" in shown and "Greta" not in shown

    stranger = "U0NNEVER"  # Slack tells of everyone's changes: only players' names are kept
    fake.add_user(stranger, "n", display_name="Nils", real_name="Nils Ek")
    assert fake.user_changed(stranger).status_code == 200
    app.settle()
    assert kept_name(db, stranger) is None


def plain_texts(value: object) -> Iterator[str]:
    """Every plain_text string in a Block Kit structure (headers, buttons, labels)."""
    if isinstance(value, dict):
        if value.get("type") == "plain_text":
            yield str(value.get("text", ""))
        for inner in value.values():
            yield from plain_texts(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from plain_texts(inner)


def test_no_mention_is_written_where_slack_would_show_it_raw(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """Slack renders ``<@U…>`` in mrkdwn only: a header, a button or a label would show the
    raw id, so there a seat is named by its kept name."""
    people = ["U0NRAWA", "U0NRAWB", "U0NRAWC"]
    for n, user in enumerate(people):
        fake.add_user(user, f"raw{n}", display_name=f"Raw {n}", real_name=f"Raw Person {n}")
    since = len(fake.calls)
    table = Table(fake, app, db)
    table.seat_people(people[0], people[1:], bots=True)
    table.start(people[0])
    table.play_night(people)
    table.wait_for_phase("day")
    table.heard_enough(people[:2])
    table.wait_for_phase("vote")
    table.vote({user: "Nobody" for user in people})
    table.reveal()
    shown = [
        call.params.get("blocks")
        for call in fake.calls[since:]
        if call.method in ("chat.postMessage", "chat.update") and call.ok
    ]
    shown += [message.blocks for user in people for message in fake.ephemerals(user, table.channel)]
    labels = [text for blocks in shown for text in plain_texts(blocks)]
    assert len(shown) > 10 and len(labels) > 20, "the screens were read"
    assert "Raw 1" in labels, "a seat on a button is named by its kept name"
    assert [text for text in labels if "<@" in text] == []
