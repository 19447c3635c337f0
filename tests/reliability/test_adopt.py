"""Which click makes its copy of a message the message: only one on a copy the app did not
record, in the message's own conversation, and not one on a copy already being deleted."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import make_sessions, transaction
from slackapp.db.migrate import upgrade
from slackapp.db.models import OutboxEntry, SlackMessage
from slackapp.delivery.copies import Adopted, Copy, adopt, dropped_ts
from slackapp.fakeslack import FakeSlack
from tests.reliability.test_delivery import new_game


@pytest.fixture(scope="module")
def sessions(db: Engine) -> sessionmaker[Session]:
    upgrade(db)
    return make_sessions(db)


def lobby_shown(fake: FakeSlack, sessions: sessionmaker[Session]) -> tuple[int, str]:
    """A game whose lobby, versions 1 and 2 delivered, is recorded as the copy ``2.0``."""
    game_id, channel = new_game(fake, sessions)
    with transaction(sessions) as session:
        session.add(
            SlackMessage(stream=game_id, surface="lobby", channel=channel, ts="2.0", version=2)
        )
        for version in (1, 2):
            session.add(
                OutboxEntry(
                    stream=game_id,
                    team_id=fake.identity.team_id,
                    surface="lobby",
                    version=version,
                    channel=channel,
                    text=f"lobby {version}",
                    blocks=[{"type": "divider"}],
                    done_at=text("now()"),
                )
            )
    return game_id, channel


def adopted(sessions: sessionmaker[Session], game_id: int, clicked: Copy) -> Adopted:
    with transaction(sessions) as session:
        return adopt(session.connection(), game_id, clicked)


def state(db: Engine, game_id: int) -> tuple[tuple[str, int], list[tuple[str, int, str]]]:
    with db.connect() as connection:
        message = connection.execute(
            text("SELECT ts, version FROM messages WHERE stream = :g AND surface = 'lobby'"),
            {"g": game_id},
        ).one()
        undelivered = connection.execute(
            text(
                "SELECT surface, version, text FROM outbox WHERE stream = :g "
                "AND done_at IS NULL ORDER BY id"
            ),
            {"g": game_id},
        ).all()
    return (message.ts, message.version), [tuple(row) for row in undelivered]


def test_a_click_on_the_unrecorded_copy_adopts_it_and_drops_the_other(
    fake: FakeSlack, sessions: sessionmaker[Session], db: Engine
) -> None:
    game_id, channel = lobby_shown(fake, sessions)
    assert adopted(sessions, game_id, Copy("lobby", channel, "1.0")) == Adopted(2, True)
    message, undelivered = state(db, game_id)
    assert message == ("1.0", 0), "recorded as showing nothing yet: the newest goes to it"
    assert undelivered == [("lobby", 3, "lobby 2"), ("drop:2.0", 1, "2.0")]
    assert dropped_ts("drop:2.0") == "2.0" and dropped_ts("lobby") is None

    # The copy being dropped, clicked before it went: nothing changes, and the click's
    # response_url must not redraw it (it is going away).
    assert adopted(sessions, game_id, Copy("lobby", channel, "2.0")) == Adopted(0, False)
    assert state(db, game_id) == (message, undelivered)


@pytest.mark.parametrize(
    ("clicked", "is_the_message"),
    [
        (Copy("lobby", "{channel}", "2.0"), True),  # the recorded copy: the common case
        (Copy("lobby", "C0ELSEWHERE", "1.0"), False),  # not where the lobby went
        (Copy("day", "{channel}", "1.0"), False),  # a message the game never showed
    ],
    ids=["recorded", "another-conversation", "no-such-message"],
)
def test_other_clicks_change_no_record(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    db: Engine,
    clicked: Copy,
    is_the_message: bool,
) -> None:
    game_id, channel = lobby_shown(fake, sessions)
    before = state(db, game_id)
    where = clicked.channel.replace("{channel}", channel)
    assert adopted(sessions, game_id, Copy(clicked.surface, where, clicked.ts)) == Adopted(
        0, is_the_message
    )
    assert state(db, game_id) == before == (("2.0", 2), [])


def test_no_copy_recorded_yet_changes_no_record_and_the_click_redraws_the_copy_clicked(
    fake: FakeSlack, sessions: sessionmaker[Session], db: Engine
) -> None:
    """The copy clicked is the one being recorded just then (or posted again, then recorded):
    its click's answer redraws it, unless the game sent that message nowhere there."""
    game_id, channel = new_game(fake, sessions)
    assert adopted(sessions, game_id, Copy("lobby", channel, "1.0")) == Adopted(0, False)
    with transaction(sessions) as session:
        session.add(
            OutboxEntry(
                stream=game_id,
                team_id=fake.identity.team_id,
                surface="lobby",
                version=1,
                channel=channel,
                text="1",
            )
        )
    assert adopted(sessions, game_id, Copy("lobby", channel, "1.0")) == Adopted(0, True)
    assert adopted(sessions, game_id, Copy("lobby", "C0ELSEWHERE", "1.0")) == Adopted(0, False)
    with db.connect() as connection:
        assert not connection.execute(
            text("SELECT count(*) FROM messages WHERE stream = :g"), {"g": game_id}
        ).scalar_one()
