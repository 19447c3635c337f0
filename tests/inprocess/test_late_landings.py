"""Redraws that Slack applies after the app gave up on them: a call whose outcome is unknown
(a timeout, a dropped connection) leaves its message unknown, and once such a call can no longer
land the newest version is sent again, so that nothing older is the last thing a message shows.
"""

from __future__ import annotations

from sqlalchemy import Engine, text

from slackapp.delivery.slack import LATE_LANDING_SECONDS
from slackapp.fakeslack import FakeSlack
from tests.e2e.driver import Table
from tests.faults import LateLandings
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_games import PEOPLE, new_table

ANNA, BO, CIA, DAN = PEOPLE[:4]


def screens(fake: FakeSlack, db: Engine, game_id: int) -> dict[str, tuple[str, str]]:
    """Each of the game's messages: (what Slack shows, the newest version the outbox holds)."""
    with db.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT m.surface, m.channel, m.ts, o.text FROM messages m"
                " JOIN outbox o ON o.stream = m.stream AND o.surface = m.surface"
                " WHERE m.stream = :g AND o.version ="
                " (SELECT max(version) FROM outbox WHERE stream = :g AND surface = m.surface)"
            ),
            {"g": game_id},
        ).all()
    return {
        surface: (fake.message(channel, ts).text, newest) for surface, channel, ts, newest in rows
    }


def assert_every_screen_shows_its_newest_version(table: Table, app: InProcessApp) -> None:
    stale = {
        surface: shown
        for surface, shown in screens(table.fake, table.db, table.game_id()).items()
        if shown[0] != shown[1]
    }
    assert not stale, f"messages showing an older version: {stale}\n{app.log_tail()}"


def unsure_messages(db: Engine, game_id: int) -> int:
    with db.connect() as connection:
        return int(
            connection.execute(
                text(
                    "SELECT count(*) FROM messages WHERE stream = :g AND unsure_until IS NOT NULL"
                ),
                {"g": game_id},
            ).scalar_one()
        )


def test_a_redraw_slack_applies_late_is_followed_by_the_newest_version(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.command(ANNA)
    lobby = table.lobby()
    with LateLandings(fake, lambda: {table.channel}, times=2) as late:
        table.click(BO, lobby, "Join")  # its redraw, and the update after it, both lost in Slack
        assert len(late.held) == 2, app.log_tail()
        app.pass_time(2)  # the retry lands at once, and later redraws do too
        table.click(CIA, lobby, "Join")
        app.pass_time(2)
        assert_every_screen_shows_its_newest_version(table, app)
        assert late.land() == 2  # Slack applies the lost redraws only now, over the newer one
    shown, newest = screens(fake, db, table.game_id())["lobby"]
    assert shown != newest, "the late redraws did not land over the newer one"
    assert unsure_messages(db, table.game_id()) == 1, "the lobby is not known to show anything"
    app.pass_time(LATE_LANDING_SECONDS)  # the lost calls can no longer land: the newest again
    assert_every_screen_shows_its_newest_version(table, app)
    assert unsure_messages(db, table.game_id()) == 0
    assert table.undelivered() == 0


def test_a_game_whose_board_redraws_land_late_ends_with_every_message_at_its_newest(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA], bots=True)

    def reaches(phase: str) -> None:
        """Until the game is in ``phase``, its lost redraws retried (1 + 2 + 4 s at most)."""
        table.wait(lambda: table.game()["phase"] == phase or None, f"phase {phase}")
        app.pass_time(8)

    with LateLandings(fake, lambda: {table.channel}, times=4) as late:
        table.start(ANNA)
        app.pass_time(8)
        table.play_night([ANNA, BO, CIA])
        reaches("day")
        late.land()
        table.heard_enough([ANNA, BO])
        reaches("vote")
        late.land()
    table.vote(dict.fromkeys([ANNA, BO, CIA], "Nobody"))
    reaches("over")
    app.pass_time(LATE_LANDING_SECONDS)
    assert_every_screen_shows_its_newest_version(table, app)
    assert table.undelivered() == 0
