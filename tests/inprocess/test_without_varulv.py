"""A channel nobody added Varulv to (a private channel, say), where ``/varulv`` and its forms
work all the same, since Slack sends slash commands from everywhere, but Varulv may not post:
what a form saves there stands, the channel hears nothing, and whoever saved it is told
privately, in the channel's language, and with the same words as a table that could not open
there, how to add Varulv; a standing table set there opens nothing until it is saved again once
Varulv is in."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, text

from slackapp.blocks import schedule as schedule_screen
from slackapp.blocks.words import words
from slackapp.fakeslack import FakeSlack, Message
from slackapp.game.lines import Language
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.reliability.support import a_standing_table, new_people
from tests.reliability.test_erasure import rows_naming

SV = words(Language.SWEDISH)
FIKA: dict[str | tuple[str, str], Any] = {
    schedule_screen.DAYS: ["1", "3"],
    schedule_screen.AT: "10:30",
    schedule_screen.ZONE: "Europe/Stockholm",
    schedule_screen.LOBBY: "20",
}


def without_varulv(fake: FakeSlack, app: InProcessApp, db: Engine, private: bool) -> Table:
    table = Table(fake, app, db)
    fake.add_channel(table.channel, "secret", bot_in=False, private=private)
    return table


def an_admin(fake: FakeSlack) -> str:
    (admin,) = new_people(fake, 1)
    fake.set_role(admin, "admin")
    return admin


def open_form(table: Table, user: str, word: str) -> dict[str, Any]:
    before = {modal["id"] for modal in table.fake.modals(user)}
    table.command(user, word)
    return table.wait(
        lambda: next((v for v in table.fake.modals(user) if v["id"] not in before), None),
        f"the {word} form",
    )


def told_about(table: Table, user: str) -> list[Message]:
    """What Varulv told ``user`` privately that names this table's channel."""
    return [m for m in table.fake.dm_messages(user) if f"<#{table.channel}>" in m.text]


def row(db: Engine, table: str, channel: str) -> dict[str, Any] | None:
    with db.connect() as connection:
        found = (
            connection.execute(text(f"SELECT * FROM {table} WHERE channel_id = :c"), {"c": channel})
            .mappings()
            .one_or_none()
        )
    return None if found is None else dict(found)


def test_settings_saved_where_varulv_is_not_are_kept_and_whoever_saved_them_is_told(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = without_varulv(fake, app, db, private=True)
    admin = an_admin(fake)
    open_form(table, admin, "settings")
    answer = fake.view_submission(admin, {"day_seconds": "240"})
    assert answer.status_code == 200 and not answer.text.strip(), "saved: the form closes"
    stored = row(db, "channel_settings", table.channel)
    assert stored is not None and stored["day_seconds"] == 240, "kept all the same"
    assert table.public() == [], "Varulv may not post in the channel"
    (told,) = table.wait(lambda: told_about(table, admin) or None, "a word to who saved them")
    assert told.text == (
        f"Varulv can't post in <#{table.channel}> (Slack says `channel_not_found`), so the "
        "channel was not told that you changed its settings. They are saved all the same, and "
        "the next game there uses them. Invite Varulv with `/invite @Varulv`."
    )

    fake.invite_bot(table.channel)  # /invite @Varulv
    open_form(table, admin, "settings")
    fake.view_submission(admin, {"day_seconds": "300"})
    assert f"<@{admin}>" in table.board("changed the Varulv settings").text
    assert len(told_about(table, admin)) == 1, "the channel was told: nobody is told privately"

    table.command(admin, "forget me")
    table.ephemeral(admin, "Varulv has forgotten you")
    assert rows_naming(db, admin) == {}, "nor who is told should the channel refuse a notice"


def test_a_table_that_cannot_open_there_says_so_in_the_same_words(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """``/varulv`` there opens a table that Varulv cannot show: its host hears why, as the
    one who saves the settings there does."""
    table = without_varulv(fake, app, db, private=True)
    (host,) = new_people(fake, 1)
    table.command(host)
    (told,) = table.wait(lambda: told_about(table, host) or None, "a word to the host")
    assert told.text.startswith(
        f"Varulv can't post in <#{table.channel}> (Slack says `channel_not_found`), so "
    )
    assert told.text.endswith(
        "Invite Varulv with `/invite @Varulv`. Then type `/varulv` to play again."
    )
    assert table.public() == []


def test_a_standing_table_set_where_varulv_is_not_waits_until_it_is_saved_again_once_it_is(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = without_varulv(fake, app, db, private=False)
    admin = an_admin(fake)
    open_form(table, admin, "schedule")
    answer = fake.view_submission(admin, FIKA)
    assert answer.status_code == 200 and not answer.text.strip(), "saved: the form closes"
    (told,) = table.wait(lambda: told_about(table, admin) or None, "a word to who set it")
    assert told.text == (
        f"Varulv can't post in <#{table.channel}> (Slack says `not_in_channel`), so the channel "
        "was not told of the standing table you set. It is saved, but paused: no table opens "
        "there until Varulv can post there and you save it again with `/varulv schedule`. "
        "Invite Varulv with `/invite @Varulv`."
    )
    stored = row(db, "standing_tables", table.channel)
    assert stored is not None and stored["paused"] == "not_in_channel", "it opens nothing"
    form = open_form(table, admin, "schedule")
    assert "*Paused*" in str(form) and "`/invite @Varulv`" in str(form), "the form says so too"

    fake.view_submission(admin, {schedule_screen.REMOVE: [schedule_screen.REMOVE_IT]})
    assert row(db, "standing_tables", table.channel) is None
    removed = table.wait(lambda: told_about(table, admin)[1:] or None, "a word on the removal")
    assert removed[0].text.endswith(
        "that you removed its standing table. It is removed all the same."
    )

    fake.invite_bot(table.channel)  # /invite @Varulv
    open_form(table, admin, "schedule")
    fake.view_submission(admin, FIKA)
    assert f"<@{admin}>" in table.board("set a standing table").text
    stored = row(db, "standing_tables", table.channel)
    assert stored is not None and stored["paused"] is None, "it runs"
    assert len(told_about(table, admin)) == 2, "the channel was told: nobody is told privately"


def test_whoever_saved_is_told_in_the_channels_language(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = without_varulv(fake, app, db, private=True)
    admin = an_admin(fake)
    open_form(table, admin, "settings")
    fake.view_submission(admin, {"language": Language.SWEDISH.value})
    (told,) = table.wait(lambda: told_about(table, admin) or None, "a word to who saved them")
    assert told.text.startswith(
        f"Varulv kan inte skriva i <#{table.channel}> (Slack säger `channel_not_found`), så "
        "kanalen fick inte veta att du ändrade inställningarna."
    )
    assert told.text.endswith("Bjud in Varulv med `/invite @Varulv`.")
    assert "can't post" not in told.text and "Invite" not in told.text


def a_running_standing_table(db: Engine, table: Table, owner: str) -> None:
    """A standing table set while Varulv was still in the channel (it was removed since)."""
    a_standing_table(db, table.fake.identity.team_id, table.channel, owner)


def test_settings_refused_where_someone_else_set_a_standing_table_tell_them_it_is_paused(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = without_varulv(fake, app, db, private=False)
    owner, admin = an_admin(fake), an_admin(fake)
    a_running_standing_table(db, table, owner)
    open_form(table, admin, "settings")
    fake.view_submission(admin, {"day_seconds": "240"})
    (paused,) = table.wait(lambda: told_about(table, owner) or None, "a word to who set it")
    assert "the standing table you set there is paused" in paused.text
    assert "`/invite @Varulv`" in paused.text
    (saved,) = table.wait(lambda: told_about(table, admin) or None, "a word to who saved")
    assert "changed its settings" in saved.text and "paused too" not in saved.text
    stored = row(db, "standing_tables", table.channel)
    assert stored is not None and stored["paused"] == "not_in_channel"


def test_settings_refused_where_their_saver_set_the_standing_table_say_both_in_one_word(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = without_varulv(fake, app, db, private=False)
    admin = an_admin(fake)
    a_running_standing_table(db, table, admin)
    open_form(table, admin, "settings")
    fake.view_submission(admin, {"day_seconds": "240"})
    (told,) = table.wait(lambda: told_about(table, admin) or None, "one word to who saved")
    assert "changed its settings" in told.text
    assert "The channel's standing table is paused too" in told.text


def test_a_game_whose_channel_was_archived_tells_its_host_to_unarchive_it_not_to_invite(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """Inviting Varulv does not help in a channel archived mid-game: its host is told what
    does once the channel refuses the game's board, a redraw, which Slack refuses with
    ``is_inactive`` (a post there it refuses with ``is_archived``)."""
    table = Table(fake, app, db)
    (host, guest) = new_people(fake, 2)
    table.seat_people(host, [guest], bots=True)
    table.start(host)
    table.wait_for_phase("night")
    fake.archive_channel(table.channel)
    table.play_night([host])  # the board counts who is done: the channel refuses it
    (told,) = table.wait(lambda: told_about(table, host) or None, "a word to the host")
    assert told.text == (
        f"Varulv can no longer post in <#{table.channel}> (Slack says `is_inactive`), so the "
        "game there has ended and no one scores. The channel is archived: unarchive it. "
        "Then type `/varulv` to play again."
    )
