"""People are named as Slack shows them (their profile's display name, else real name), not by
the legacy username payloads carry. Slack draws mentions itself, so ``/varulv`` and *Join* ask
Slack nothing and no lobby is redrawn to rename anyone; a name written out (button labels, a
bot's name clash, the referee's input) is asked of Slack at *Start*, for the seats still
unknown or stale, in one go, and kept. Slack failing to give a name never keeps anyone from
their seat. Each test has people of its own: the kept names outlive a test."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from sqlalchemy import Connection, Engine, event, text

from slackapp.fakeslack import Call, FakeSlack, Message
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
def statements(app: InProcessApp, starting: str) -> Iterator[list[str]]:
    """The app's SQL statements that begin with ``starting``, while inside."""
    seen: list[str] = []
    engine = app.varulv.sessions.kw["bind"]

    def note(_c: Connection, _cursor: object, statement: str, *_: object) -> None:
        if statement.startswith(starting):
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", note)


def calls_since(fake: FakeSlack, mark: int, *methods: str) -> list[Call]:
    return [call for call in fake.calls[mark:] if call.method in methods]


def join_at_once(table: Table, lobby: Message, people: list[str]) -> None:
    clicks = [threading.Thread(target=table.click, args=(user, lobby, "Join")) for user in people]
    for click in clicks:
        click.start()
    for click in clicks:
        click.join()


def test_a_burst_of_joins_asks_slack_nothing_and_start_names_the_unknown_seats_in_one_go(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    host, ada, ben, cai = "U0NBHOST", "U0NBADA", "U0NBBEN", "U0NBCAI"
    fake.add_user(host, "hb", display_name="Hedvig", real_name="Hedvig Berg")
    fake.add_user(ada, "ada.l", display_name="Ada", real_name="Ada Lind")
    fake.add_user(ben, "benke", display_name="", real_name="Ben Ek")  # no display name
    fake.add_user(cai, "cai.o", display_name="Cai", real_name="Cai Olsson")
    table = Table(fake, app, db)
    table.command(host)
    lobby = table.lobby()
    table.click(host, lobby, "Fill with bots")
    table.lobby_shows(lobby, "Seated (5)")
    mark = len(fake.calls)
    join_at_once(table, lobby, [ada, ben, cai])
    table.wait(lambda: len(seated_names(table)) == 4 or None, "the burst seated")
    app.settle()
    joined = fake.calls[mark:]
    assert not [call for call in joined if call.method == "users.info"], "no look-up"
    redraws = [call for call in joined if call.method in ("chat.update", "response_url")]
    assert 1 <= len(redraws) <= 3, "at most one redraw a join, none to rename"
    handles = {host: "hb", ada: "ada.l", ben: "benke", cai: "cai.o"}
    assert seated_names(table) == handles, "seated under their handles"
    names = {host: "Hedvig", ada: "Ada", ben: "Ben Ek", cai: "Cai"}
    shown = fake.shown_text(fake.message(lobby.channel, lobby.ts))
    assert all(f"@{name}" in shown for name in names.values()), "Slack draws the mentions"
    assert not any(handle in shown for handle in handles.values()), shown
    (bot,) = [seat["display_name"] for seat in table.seats() if seat["bot_name"]]
    fake.add_user(cai, display_name=bot)  # Cai takes the bot's name in Slack meanwhile

    mark = len(fake.calls)
    with statements(app, "INSERT INTO people") as kept:
        table.start(host)
    asked = calls_since(fake, mark, "users.info", "conversations.open")
    assert [call.method for call in asked] == ["users.info"] * 4 + ["conversations.open"] * 4
    assert {call.params.get("user") for call in asked[:4]} == set(names)
    assert len(kept) == 1, "every name learned kept in one statement"
    names[cai] = bot
    assert seated_names(table) == names, "dealt under the names Slack gave"
    assert [kept_name(db, user) for user in names] == list(names.values())
    (renamed,) = [seat["display_name"] for seat in table.seats() if seat["bot_name"]]
    assert renamed != bot, "the bot gave its name to the person who has it"
    night = fake.shown_text(fake.message(lobby.channel, lobby.ts))  # the night board now
    assert renamed in night and f"@{bot}" in night, night
    table.play_night([host, ada, ben, cai])
    table.wait_for_phase("day")
    table.heard_enough([host, ada, ben])
    table.wait_for_phase("vote")
    ballot = table.ballot(host)
    labels = [button.text for button in ballot.buttons()]
    assert {"Ada", "Ben Ek", bot} <= set(labels) and "Hedvig" not in labels, labels
    assert not any(handle in json.dumps(ballot.blocks) for handle in handles.values())
    table.vote_nobody_if_not_voted([host, ada, ben, cai])
    reveal = json.dumps(table.reveal().blocks)
    assert not any(handle in reveal for handle in handles.values())
    table.stored_outcome_matches_referee()
    assert all(users_info_calls(fake, user) == 1 for user in names), "one look-up a game"

    table.command(ben)  # the next table: the kept names, and no look-up at all
    table.click(ada, table.lobby(), "Join")
    table.click(cai, table.lobby(), "Join")
    table.wait(lambda: len(table.seats()) == 3 or None, "the next table seated")
    assert seated_names(table) == {ben: "Ben Ek", ada: "Ada", cai: bot}
    table.start(ben)
    assert all(users_info_calls(fake, user) == 1 for user in names), "the kept names stood"


def test_slack_refusing_names_at_start_deals_under_the_handles(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    host, late, slow = "U0NHOST", "U0NKARL", "U0NSLOW"
    fake.add_user(host, "hosty", display_name="Hosta", real_name="Hosta Ek")
    fake.add_user(late, "kalle", display_name="Karl", real_name="Karl Ek")
    fake.add_user(slow, "snigel", display_name="Snail", real_name="Sven Snigel")
    handles = {host: "hosty", late: "kalle", slow: "snigel"}
    table = Table(fake, app, db)
    refusals: dict[str, Callable[[], None]] = {
        "an install from before users:read": lambda: faults.fail_next(
            fake, "users.info", "missing_scope"
        ),
        "Slack failing": lambda: faults.fail_next(fake, "users.info", "internal_error"),
        "throttled: not waited out": lambda: faults.rate_limit(fake, "users.info", retry_after=30),
    }
    for why, refuse in refusals.items():
        table.seat_people(host, [late, slow])
        asked = sum(users_info_calls(fake, user) for user in handles)
        refuse()
        table.start(host)
        assert sum(users_info_calls(fake, user) for user in handles) == asked + 1, why
        assert seated_names(table) == handles, f"{why}: the game goes on under the handles"
        assert [kept_name(db, user) for user in handles] == [None] * 3, (
            f"{why}: a handle standing in is not kept as the person's name"
        )
        table.command(host, "stop")
        table.wait_for_phase("stopped")


def test_a_name_is_asked_again_at_start_once_a_day_and_a_failed_refresh_keeps_the_kept_one(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    regular, host, third = "U0NREGULAR", "U0NHOST2", "U0NTHIRD2"
    fake.add_user(regular, "reg", display_name="Regina", real_name="Regina Ek")
    fake.add_user(host, "hosta2", display_name="Hosta", real_name="Hosta Ek")
    fake.add_user(third, "tre", display_name="Tredje", real_name="Tredje Ek")
    table = Table(fake, app, db)

    def play_a_table(seated_as: str, dealt_as: str) -> None:
        table.command(host)
        table.click(regular, table.lobby(), "Join")
        table.click(third, table.lobby(), "Join")
        table.wait(
            lambda: seated_names(table).get(regular) == seated_as or None,
            f"the regular seated as {seated_as}",
        )
        table.start(host)
        assert seated_names(table)[regular] == dealt_as, f"dealt as {dealt_as}"
        table.command(host, "stop")
        table.wait_for_phase("stopped")

    play_a_table("reg", "Regina")
    fake.add_user(regular, display_name="Reggie")  # renamed in Slack, seen within a day
    play_a_table("Regina", "Regina")
    assert users_info_calls(fake, regular) == 1, "the kept name answered the second table"

    app.clock.advance(DAY + 3600)
    play_a_table("Regina", "Reggie")  # seated under the kept name, dealt under Slack's
    assert users_info_calls(fake, regular) == 2
    assert kept_name(db, regular) == "Reggie"
    app.clock.advance(DAY + 3600)
    faults.fail_next(fake, "users.info", "internal_error")
    fake.add_user(regular, display_name="Regge")
    asked = sum(users_info_calls(fake, user) for user in (regular, host, third))
    play_a_table("Reggie", "Reggie")  # the kept name, not the handle
    assert sum(users_info_calls(fake, user) for user in (regular, host, third)) == asked + 1
    assert kept_name(db, regular) == "Reggie"


def test_the_home_tab_refreshes_a_stale_kept_name(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    host, guest, stranger = "U0NHOST3", "U0NGUEST", "U0NNEVER"
    fake.add_user(host, "h3", display_name="Hedda", real_name="Hedda Ek")
    fake.add_user(guest, "g", display_name="Greta", real_name="Greta Ek")
    fake.add_user(stranger, "n", display_name="Nils", real_name="Nils Ek")
    table = Table(fake, app, db)
    table.command(host)
    table.click(guest, table.lobby(), "Join")
    table.wait(lambda: seated_names(table).get(guest) == "g" or None, "Greta seated")
    assert users_info_calls(fake, guest) == 0
    fake.add_user(guest, display_name="Gittan")  # a mention shows the new name at once
    lobby = table.lobby()
    assert "@Gittan" in fake.shown_text(lobby)
    table.cancel(host, lobby)
    assert fake.app_home_opened(guest).status_code == 200
    app.settle()
    assert users_info_calls(fake, guest) == 0, "no name kept: nothing to refresh"
    assert kept_name(db, guest) is None

    with db.begin() as connection:  # a name learned, and kept a day and more
        connection.execute(
            text(
                "INSERT INTO people (team_id, user_id, name, fetched_at)"
                " VALUES (:t, :u, 'Greta', :at)"
            ),
            {"t": fake.identity.team_id, "u": guest, "at": app.clock.now() - timedelta(days=2)},
        )
    assert fake.app_home_opened(guest).status_code == 200
    table.wait(lambda: fake.home_view(guest), "the Home tab")
    app.settle()
    assert users_info_calls(fake, guest) == 1
    assert kept_name(db, guest) == "Gittan"
    assert fake.app_home_opened(guest).status_code == 200
    app.settle()
    assert users_info_calls(fake, guest) == 1, "fresh now: not asked again"
    assert fake.app_home_opened(stranger).status_code == 200
    app.settle()
    assert users_info_calls(fake, stranger) == 0
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


def test_a_user_change_from_an_app_still_subscribed_changes_nothing(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """Varulv no longer subscribes to everyone's profile changes: one that still arrives (an
    app set up from an older manifest) is refused as unhandled, and asks and writes nothing."""
    host, guest = "U0NHOST5", "U0NGUEST5"
    fake.add_user(host, "h5", display_name="Hanna", real_name="Hanna Ek")
    fake.add_user(guest, "g5", display_name="Gun", real_name="Gun Ek")
    table = Table(fake, app, db)
    table.seat_people(host, [guest])
    mark = len(fake.calls)
    fake.add_user(guest, display_name="Gunnel")
    user = {"id": guest, "name": "g5", "profile": {"display_name": "Gunnel"}}
    answer = fake.event({"type": "user_change", "user": user, "event_ts": "1700000000.000100"})
    app.settle()
    assert answer.status_code == 404, answer.text
    assert fake.calls[mark:] == [], "no look-up, no redraw"
    assert seated_names(table)[guest] == "g5" and kept_name(db, guest) is None
    assert "@Gunnel" in fake.shown_text(table.lobby()), "the mention shows the new name"
    table.cancel(host, table.lobby())
