"""``/varulv`` typed in a direct message with a colleague or in a group DM: Slack sends it as
from any channel, but Varulv can be added to neither, so no table, settings or standing table
can be kept there. Whoever types it is told at once to play in a channel, and nothing is
stored; the words that change nothing there (help, score, forget me) answer as anywhere."""

from __future__ import annotations

from itertools import count

import pytest
from sqlalchemy import Engine, text

from slackapp.fakeslack import FakeSlack
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_shared_channel import command_from
from tests.reliability.support import new_people

_conversations = count(1)


def conversation(fake: FakeSlack, group: bool) -> str:
    """A direct message between two people, or a group DM, that Varulv is not in."""
    number = next(_conversations)
    if group:
        channel, name = f"G{number:04d}MPDM", f"mpdm-p{number}--q{number}--r{number}-1"
    else:
        channel, name = f"D{number:04d}TWO", "directmessage"
    fake.add_channel(channel, name, bot_in=False, private=True)
    return channel


def rows_of(db: Engine, channel: str) -> dict[str, int]:
    with db.connect() as connection:
        return {
            table: connection.execute(
                text(f"SELECT count(*) FROM {table} WHERE channel_id = :c"), {"c": channel}
            ).scalar_one()
            for table in ("games", "channel_settings", "standing_tables")
        }


@pytest.mark.parametrize("group", [False, True], ids=["direct message", "group DM"])
@pytest.mark.parametrize("word", ["", "settings", "schedule"])
def test_no_table_is_opened_or_set_in_a_conversation_between_people(
    fake: FakeSlack, app: InProcessApp, db: Engine, group: bool, word: str
) -> None:
    channel = conversation(fake, group)
    (admin,) = new_people(fake, 1)
    fake.set_role(admin, "admin")
    forms = len(fake.modals(admin))
    answer = fake.slash_command(admin, text=word, channel_id=channel)
    assert answer.status_code == 200, answer.text
    app.settle()
    typed = f"/varulv {word}".strip()
    said = [m.text for m in fake.ephemerals(admin, channel)]
    assert said == [
        f"Varulv plays in channels, not in direct messages: type `{typed}` in a channel, and "
        "add Varulv there first with `/invite @Varulv` if it isn't in it yet."
    ]
    assert len(fake.modals(admin)) == forms, "no form opens"
    assert fake.dm_messages(admin) == [], "no word later that the table could not open there"
    assert rows_of(db, channel) == {"games": 0, "channel_settings": 0, "standing_tables": 0}


def test_help_still_answers_in_a_direct_message(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    channel = conversation(fake, group=False)
    (someone,) = new_people(fake, 1)
    fake.slash_command(someone, text="help", channel_id=channel)
    app.settle()
    (said,) = fake.ephemerals(someone, channel)
    assert said.text == "How to play Varulv"


@pytest.mark.parametrize("word", ["help", "score", "forget me"])
def test_a_direct_message_is_given_no_home_in_an_organisation(
    fake: FakeSlack, app: InProcessApp, db: Engine, word: str
) -> None:
    """Where Varulv is installed on a whole organisation, a channel is given the workspace that
    keeps its table the first time Varulv is used there; a direct message keeps none, so a word
    typed there stores no home for it."""
    channel = conversation(fake, group=False)
    (someone,) = new_people(fake, 1)
    request = command_from(fake, someone, channel, word)
    assert app.send(request).status_code == 200
    app.settle()
    assert fake.ephemerals(someone, channel), "answered"
    with db.connect() as connection:
        homes = connection.execute(
            text("SELECT count(*) FROM channel_homes WHERE channel_id = :c"), {"c": channel}
        ).scalar_one()
    assert homes == 0
