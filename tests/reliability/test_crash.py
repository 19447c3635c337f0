"""``kill -9`` at night, by day and during the vote, and at the worst moments inside a step.

After a restart the game goes on: deadlines are those the database kept, no choice or ballot a
person saw accepted is lost, and nothing is posted twice.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine

from slackapp.fakeslack import FakeSlack
from slackapp.game import Card
from tests.e2e.conftest import start_app
from tests.e2e.driver import Table, first_choice
from tests.reliability.support import (
    DAY,
    LOBBY,
    NIGHT_DM,
    REVEAL,
    VOTE,
    Held,
    assert_nothing_posted_twice,
    boards,
    conversations,
    new_people,
    posted,
    restart,
    seat_rows,
    set_deadline,
)


def now() -> datetime:
    return datetime.now(UTC)


def assert_dms_agree_with_the_database(table: Table, people: list[str]) -> None:
    """A person who sees buttons has not chosen yet; one who sees a result has, in the database."""
    seats = seat_rows(table.db, table.game_id())
    for user in people:
        offers_a_choice = bool(table.dm(user).buttons())
        assert offers_a_choice != seats[user]["confirmed"], (
            f"{user}'s DM {'offers a choice' if offers_a_choice else 'shows a result'} but the "
            f"database says confirmed={seats[user]['confirmed']}"
        )


def is_day_board(params: dict[str, object]) -> bool:
    return str(params.get("text")).startswith(DAY)


def play_to_the_end(table: Table, people: list[str]) -> dict[str, object]:
    table.wait_for_phase("day", timeout=30)
    table.heard_enough(people[:2])
    table.wait_for_phase("vote")
    table.vote({people[0]: "Nobody", people[1]: "Nobody", people[2]: "Nobody"})
    table.wait_for_phase("over")
    table.reveal()
    return table.stored_outcome_matches_referee()


def test_a_crash_at_night_keeps_every_choice_and_the_night_still_ends(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    anna, bo, cia = people = new_people(fake, 3)
    app = start_app(fake, database_url)
    table = Table(fake, app, db)
    try:
        since = len(fake.calls)
        table.seat_people(anna, [bo, cia])
        table.start(anna)
        table.play_night([anna, bo])
        game_id = table.game_id()
        table.wait(
            lambda: sum(s["confirmed"] for s in seat_rows(db, game_id).values()) == 2 or None,
            "two confirmed nights",
        )
        before = seat_rows(db, game_id)

        app.kill()
        set_deadline(db, game_id, now() - timedelta(seconds=1))  # dawn was due while it was down
        app = restart(table, app, database_url)

        table.wait_for_phase("day", timeout=30)
        after = seat_rows(db, game_id)
        for user in (anna, bo):
            assert after[user]["confirmed"]
            assert after[user]["night_choice"] == before[user]["night_choice"]
        assert not after[cia]["confirmed"]
        assert "ended before you chose" in table.dm(cia).rendered_text
        assert boards(fake, since, table.channel, DAY) == 1
        play_to_the_end(table, people)  # the referee's outcome is made of the stored choices
        for user in (anna, bo):
            assert seat_rows(db, game_id)[user]["night_choice"] == before[user]["night_choice"]
        assert_nothing_posted_twice(fake, since, conversations(fake, table, people))
    finally:
        app.stop()


def test_a_crash_by_day_keeps_heard_enough(fake: FakeSlack, database_url: str, db: Engine) -> None:
    anna, bo, cia = people = new_people(fake, 3)
    app = start_app(fake, database_url)
    table = Table(fake, app, db)
    try:
        since = len(fake.calls)
        table.seat_people(anna, [bo, cia])
        table.start(anna)
        table.play_night(people)
        table.wait_for_phase("day")
        table.heard_enough([anna])
        table.ephemeral(anna, "you have heard enough")

        app.kill()
        app = restart(table, app, database_url)

        assert table.game()["phase"] == "day"
        table.heard_enough([bo])  # with anna's mark, two of three: the vote opens at once
        table.wait_for_phase("vote")
        assert boards(fake, since, table.channel, DAY) == 1
        assert boards(fake, since, table.channel, VOTE) == 1
        table.vote({anna: "Nobody", bo: "Nobody", cia: "Nobody"})
        table.wait_for_phase("over")
        table.stored_outcome_matches_referee()
        assert_nothing_posted_twice(fake, since, conversations(fake, table, people))
    finally:
        app.stop()


def test_a_crash_during_the_vote_keeps_every_ballot_and_its_deadline(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    anna, bo, cia = people = new_people(fake, 3)
    app = start_app(fake, database_url)
    table = Table(fake, app, db)
    try:
        since = len(fake.calls)
        table.seat_people(anna, [bo, cia])
        table.start(anna)
        table.play_night(people)
        table.wait_for_phase("day")
        table.heard_enough([anna, bo])
        table.wait_for_phase("vote")
        table.vote({anna: table.fake.user_name(bo) or bo, bo: "Nobody"})

        app.kill()
        deadline = now() + timedelta(seconds=2)
        set_deadline(db, table.game_id(), deadline)
        app = restart(table, app, database_url)

        table.wait_for_phase("over", timeout=30)  # nobody else votes: the deadline closes it
        outcome = table.stored_outcome_matches_referee()
        assert outcome["tally"] == {bo: 1, "nobody": 1}
        reveals = [
            call
            for call in fake.calls[since:]
            if call.method == "chat.postMessage" and str(call.params.get("text")).startswith(REVEAL)
        ]
        assert len(reveals) == 1
        assert reveals[0].at >= deadline.timestamp(), "the vote closed before its deadline"
        assert_nothing_posted_twice(fake, since, conversations(fake, table, people))
    finally:
        app.stop()


def test_a_crash_right_after_a_person_saw_their_night_result_keeps_that_choice(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    anna, bo, cia = people = new_people(fake, 3)
    app = start_app(fake, database_url)
    table = Table(fake, app, db)
    try:
        since = len(fake.calls)
        table.seat_people(anna, [bo, cia])
        table.arrange_deal(lambda dealt, center: dealt[anna] is Card.SEER)
        table.start(anna)
        dm = table.dm(anna)
        her_dm = dm.channel
        with Held(fake, "chat.update", lambda p: p.get("channel") == her_dm, applied=True) as held:
            table.click(anna, dm, dm.buttons()[0].text)  # the Seer looks at a card
            held.wait()
            seen = fake.message(dm.channel, dm.ts)
            assert "card is" in seen.rendered_text and not seen.buttons()
            app.kill()
        app = restart(table, app, database_url)

        assert seat_rows(db, table.game_id())[anna]["confirmed"], "the Seer's look was lost"
        assert_dms_agree_with_the_database(table, people)
        table.play_night([bo, cia])
        outcome = play_to_the_end(table, people)
        assert anna in outcome["seen"], "what the Seer saw is part of the outcome"
        assert_nothing_posted_twice(fake, since, conversations(fake, table, people))
    finally:
        app.stop()


def test_a_crash_before_slack_took_the_day_board_posts_it_once(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    anna, bo, cia = people = new_people(fake, 3)
    app = start_app(fake, database_url)
    table = Table(fake, app, db)
    try:
        since = len(fake.calls)
        table.seat_people(anna, [bo, cia])
        table.arrange_deal(lambda dealt, center: dealt[cia] is Card.ROBBER)
        table.start(anna)
        table.play_night([anna, bo])
        dm = table.dm(cia)
        day_board = Held(fake, "chat.postMessage", is_day_board, applied=False)
        with day_board:
            table.click(cia, dm, dm.buttons()[0].text)  # the last choice of the night: dawn
            day_board.wait()
            app.kill()
        app = restart(table, app, database_url)

        assert_dms_agree_with_the_database(table, people)
        table.play_night([cia], first_choice)
        play_to_the_end(table, people)
        assert boards(fake, since, table.channel, DAY) == 1
        assert_nothing_posted_twice(fake, since, conversations(fake, table, people))
    finally:
        app.stop()


def test_a_crash_after_slack_took_a_post_but_before_the_commit_repeats_only_that_post(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    """The one window no restart can close: Slack posted the day board, and the process died
    before it could record that. Slack's API has no idempotency key, and reading the channel
    back would need history scopes the app does not ask for, so the board is posted again when
    the night ends anew. Only that one message repeats, and the game goes on."""
    anna, bo, cia = people = new_people(fake, 3)
    app = start_app(fake, database_url)
    table = Table(fake, app, db)
    try:
        since = len(fake.calls)
        table.seat_people(anna, [bo, cia])
        table.arrange_deal(lambda dealt, center: dealt[cia] is Card.ROBBER)
        table.start(anna)
        table.play_night([anna, bo])
        dm = table.dm(cia)
        day_board = Held(fake, "chat.postMessage", is_day_board, applied=True)
        with day_board:
            table.click(cia, dm, dm.buttons()[0].text)
            day_board.wait()
            app.kill()
        app = restart(table, app, database_url)

        assert table.game()["phase"] == "night", "the step that posted it never committed"
        assert_dms_agree_with_the_database(table, people)
        table.play_night([cia], first_choice)
        play_to_the_end(table, people)
        assert boards(fake, since, table.channel, DAY) == 2
        counts = posted(fake, since, conversations(fake, table, people))
        repeated = [(where, said) for (where, said), n in counts.items() if n > 1]
        assert len(repeated) == 1
        assert repeated[0][0] == table.channel and repeated[0][1].startswith(DAY)
        for message in (LOBBY, VOTE, REVEAL):
            assert boards(fake, since, table.channel, message) == 1
        for user in people:
            assert boards(fake, since, fake.dm_channel(user), NIGHT_DM) == 1
    finally:
        app.stop()


def test_a_crash_before_slack_took_the_lobby_is_mended_by_the_next_command(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    anna, bo, cia = people = new_people(fake, 3)
    app = start_app(fake, database_url)
    table = Table(fake, app, db)
    try:
        since = len(fake.calls)
        lobby = Held(
            fake, "chat.postMessage", lambda p: p.get("channel") == table.channel, applied=False
        )
        with lobby:
            table.command(anna)
            lobby.wait()
            app.kill()
        app = restart(table, app, database_url)
        assert table.game()["board_ts"] is None, "the table was opened, its lobby never posted"

        table.command(bo)  # anyone's /varulv in the channel posts the open table's lobby
        table.click(bo, table.lobby(), "Join")
        table.click(cia, table.lobby(), "Join")
        table.wait(lambda: len(table.seats()) == 3 or None, "three seated")
        table.start(anna)
        table.play_night(people)
        play_to_the_end(table, people)
        assert boards(fake, since, table.channel, LOBBY) == 1
        assert_nothing_posted_twice(fake, since, conversations(fake, table, people))
    finally:
        app.stop()


def test_a_crash_while_the_cards_go_out_sends_each_card_once(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    """The deal is committed before any card is sent, and each card's message is committed as
    Slack takes it: after a restart the sweep sends the cards still missing, and only those."""
    anna, bo, cia = people = new_people(fake, 3)
    app = start_app(fake, database_url)
    table = Table(fake, app, db)
    try:
        since = len(fake.calls)
        table.seat_people(anna, [bo, cia])
        second_card = Held(
            fake,
            "chat.postMessage",
            lambda p: p.get("channel") == fake.dm_channel(bo),
            applied=False,
        )
        with second_card:
            table.click(anna, table.lobby(), "Start")
            second_card.wait()
            app.kill()
        dealt = {user: seat["dealt"] for user, seat in seat_rows(db, table.game_id()).items()}
        app = restart(table, app, database_url)

        table.wait(  # the sweep's turn: the night has gone some seconds without every card
            lambda: all(seat["dm_ts"] for seat in seat_rows(db, table.game_id()).values()) or None,
            "the cards still missing",
            timeout=30,
        )
        assert {u: s["dealt"] for u, s in seat_rows(db, table.game_id()).items()} == dealt
        for user in people:
            assert boards(fake, since, fake.dm_channel(user), NIGHT_DM) == 1, user
        table.play_night(people)
        play_to_the_end(table, people)
        assert_nothing_posted_twice(fake, since, conversations(fake, table, people))
    finally:
        app.stop()
