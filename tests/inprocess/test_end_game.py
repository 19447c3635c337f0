"""``varulv end-game``, run as a real process against the in-process app's database: an open
game that nothing else can end (a lobby, which has no deadline; a game whose every step fails)
is ended as a game whose deadline step keeps failing is given up, its messages written to the
outbox for any running process to deliver; the app then delivers them. An unknown game, or one
already over, is refused with nothing changed."""

from __future__ import annotations

import itertools
import json
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError

from slackapp.cli import _lock_not_available
from slackapp.delivery.leases import due_and_free
from slackapp.fakeslack import FakeSlack
from slackapp.game import Card
from slackapp.game.machine import Phase
from slackapp.services.uow import commit_give_up
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.operate.test_startup import varulv
from tests.waiting import PATIENCE, until

pytestmark = pytest.mark.long(8)

NIGHT, DAY, VOTE = 120, 300, 120  # the in-process app's
FAULT = "Varulv hit a fault in this game"
FAULT_DM = "Varulv hit a fault in the game in"
FREE = "The channel is free again: type `/varulv` to start a new game."
_numbers = itertools.count(1)


def people(fake: FakeSlack, count: int = 3) -> list[str]:
    number = next(_numbers)
    users = [f"U{number:02d}END{seat}" for seat in "ABCDE"[:count]]
    for user in users:
        fake.add_user(user, user.lower())
    return users


def started_table(fake: FakeSlack, app: InProcessApp, db: Engine) -> tuple[Table, str, list[str]]:
    """Three new people at a table, its night begun; with its host and the others."""
    host, *others = people(fake)
    table = Table(fake, app, db)
    table.seat_people(host, others)
    table.start(host)
    return table, host, others


def end_game(database_url: str, tmp_path: Path, *args: str) -> Any:
    """``varulv end-game ARGS``, a process of its own."""
    folder = tmp_path / f"run{next(_numbers)}"
    return varulv(["end-game", *args], {"DATABASE_URL": database_url}, folder)


def undelivered(db: Engine, stream: int) -> list[str]:
    """The surfaces of the stream's outbox entries not yet delivered."""
    with db.connect() as connection:
        return list(
            connection.scalars(
                text(
                    "SELECT surface FROM outbox WHERE stream = :s AND done_at IS NULL ORDER BY id"
                ),
                {"s": stream},
            )
        )


def snapshot(db: Engine, game_id: int) -> tuple[Any, ...]:
    """Everything a refusal must leave as it was: the game's row, its seats, its outbox and
    its lease, the channel's scores."""
    with db.connect() as connection:
        game = dict(
            connection.execute(text("SELECT * FROM games WHERE id = :g"), {"g": game_id})
            .mappings()
            .one()
        )
        seats = connection.execute(
            text("SELECT * FROM seats WHERE game_id = :g ORDER BY id"), {"g": game_id}
        ).all()
        outbox = connection.execute(
            text("SELECT id, done_at FROM outbox WHERE stream = :g ORDER BY id"), {"g": game_id}
        ).all()
        leases = connection.execute(
            text("SELECT * FROM delivery_leases WHERE stream = :g"), {"g": game_id}
        ).all()
        scores = connection.execute(
            text("SELECT * FROM scores WHERE channel_id = :c ORDER BY user_id"),
            {"c": game["channel_id"]},
        ).all()
    return game, seats, outbox, leases, scores


def no_card_in(*said: str) -> None:
    for words in said:
        for card in Card:
            assert card.value.lower() not in words.lower(), f"{card.value} in {words!r}"


def test_a_night_whose_steps_all_fail_is_ended_and_the_app_delivers_what_the_command_wrote(
    fake: FakeSlack, app: InProcessApp, db: Engine, database_url: str, tmp_path: Path
) -> None:
    table, host, others = started_table(fake, app, db)
    game_id = table.game_id()
    board = table.board("Night falls")
    dms = {user: table.dm(user) for user in (host, *others)}
    unreachable = others[1]
    with db.begin() as connection:  # a card the code cannot read: every step of it fails
        dealt = connection.scalar(
            text("SELECT dealt FROM seats WHERE game_id = :g AND user_id = :u"),
            {"g": game_id, "u": host},
        )
        connection.execute(
            text("UPDATE seats SET dealt = 'unreadable' WHERE game_id = :g AND user_id = :u"),
            {"g": game_id, "u": host},
        )
        connection.execute(
            text("UPDATE seats SET reachable = false WHERE game_id = :g AND user_id = :u"),
            {"g": game_id, "u": unreachable},
        )
    try:
        table.command(host, "stop")
        assert table.game()["phase"] == "night", "stopping it fails as its every step does"
        assert undelivered(db, game_id) == []

        done = end_game(database_url, tmp_path, str(game_id))
        assert done.returncode == 0, done.stderr
        where = f"game {game_id} in {table.channel} of {table.game()['team_id']}"
        assert done.stdout == (
            f"{where} ended (it was in the night, and is stopped now); its channel is told "
            "once Varulv runs\n"
        )
        # The app's log: the phase change, as every step's, and the command's own line.
        changed, logged = (json.loads(line) for line in done.stderr.splitlines())
        assert (changed["logger"], changed["game_id"]) == ("slackapp.games", game_id)
        assert (changed["previous_phase"], changed["phase"]) == ("night", "stopped")
        assert (logged["level"], logged["logger"]) == ("WARNING", "slackapp.cli")
        assert (logged["game_id"], logged["channel_id"]) == (game_id, table.channel)
        no_card_in(done.stdout, done.stderr)

        game = table.game()
        assert (game["phase"], game["deadline"], game["outcome"]) == ("stopped", None, None)
        assert snapshot(db, game_id)[4] == [], "no one scores"
        surfaces = undelivered(db, game_id)
        assert surfaces[:3] == ["lobby", f"dm:{host}", f"dm:{others[0]}"], surfaces
        assert len(surfaces) == 4 and surfaces[3].startswith("say:"), "and the channel's line"
        with db.connect() as connection:
            assert (
                connection.scalar(
                    text("SELECT count(*) FROM delivery_leases WHERE stream = :g"), {"g": game_id}
                )
                == 0
            ), "the command takes no delivery lease"
            free = due_and_free(connection, "elsewhere:1", datetime.now(UTC))
        assert (game_id, None) in free, "any process's sweep claims it"

        app.settle()  # what a running process's sweep then does
        redrawn = fake.message(board.channel, board.ts)
        assert FAULT in redrawn.rendered_text and redrawn.buttons() == []
        for user in (host, others[0]):
            assert FAULT_DM in fake.message(dms[user].channel, dms[user].ts).rendered_text
        shown = fake.message(dms[unreachable].channel, dms[unreachable].ts).rendered_text
        assert FAULT_DM not in shown, "a person Varulv no longer reaches is not written to"
        told = table.board(FREE)
        no_card_in(redrawn.rendered_text, told.rendered_text)

        app.pass_time(NIGHT + 1)  # its night's end finds nothing due
        assert table.game()["phase"] == "stopped" and undelivered(db, game_id) == []

        before = snapshot(db, game_id)
        again = end_game(database_url, tmp_path, str(game_id))
        assert again.returncode == 2 and again.stdout == ""
        assert again.stderr == (
            f"varulv end-game: {where} has ended already (stopped); nothing changed\n"
        )
        assert snapshot(db, game_id) == before

        table.command(others[0])  # the channel takes a new game
        assert table.lobby().ts != board.ts
    finally:
        with db.begin() as connection:
            connection.execute(
                text("UPDATE seats SET dealt = :d WHERE game_id = :g AND user_id = :u"),
                {"d": dealt, "g": game_id, "u": host},
            )


def test_a_lobby_is_cancelled_and_its_standing_table_no_longer_names_it(
    fake: FakeSlack, app: InProcessApp, db: Engine, database_url: str, tmp_path: Path
) -> None:
    host, *others = people(fake)
    table = Table(fake, app, db)
    lobby = table.seat_people(host, others)
    game_id = table.game_id()
    later = datetime.now(UTC) + timedelta(days=365)
    with db.begin() as connection:  # a language the code cannot read: every click fails
        connection.execute(text("UPDATE games SET language = 'xx' WHERE id = :g"), {"g": game_id})
        connection.execute(
            text(
                "INSERT INTO standing_tables (team_id, channel_id, weekdays, minute_of_day, "
                "zone, lobby_minutes, next_at, owner_user_id, lobby_game_id, lobby_closes_at) "
                "SELECT team_id, channel_id, 127, 0, 'UTC', 5, :later, :host, id, :later "
                "FROM games WHERE id = :g"
            ),
            {"later": later, "host": host, "g": game_id},
        )
    try:
        table.command(host, "stop")
        assert table.game()["phase"] == "lobby", "stopping it fails as its every step does"

        done = end_game(database_url, tmp_path, str(game_id))
        assert done.returncode == 0, done.stderr
        assert "ended (it was in the lobby, and is cancelled now)" in done.stdout
        game = table.game()
        assert (game["phase"], game["deadline"], game["outcome"]) == ("cancelled", None, None)
        surfaces = undelivered(db, game_id)
        assert surfaces[0] == "lobby" and len(surfaces) == 2 and surfaces[1].startswith("say:")
        with db.connect() as connection:
            assert (
                connection.scalar(
                    text("SELECT lobby_game_id FROM standing_tables WHERE channel_id = :c"),
                    {"c": table.channel},
                )
                is None
            ), "its standing table stops trying to close it"

        app.settle()
        redrawn = fake.message(lobby.channel, lobby.ts)
        assert FAULT in redrawn.rendered_text and redrawn.buttons() == [], "in English"
        table.board(FREE)
    finally:
        with db.begin() as connection:
            connection.execute(
                text("DELETE FROM standing_tables WHERE channel_id = :c"), {"c": table.channel}
            )
            connection.execute(
                text("UPDATE games SET language = 'en' WHERE id = :g"), {"g": game_id}
            )


def test_an_unknown_game_or_one_over_is_refused_and_nothing_changes(
    fake: FakeSlack, app: InProcessApp, db: Engine, database_url: str, tmp_path: Path
) -> None:
    table, _, _ = started_table(fake, app, db)
    for seconds in (NIGHT, DAY, VOTE):  # nobody votes: the vote's end reveals it
        app.pass_time(seconds + 1)
    assert table.game()["phase"] == "over"
    game_id = table.game_id()
    before = snapshot(db, game_id)

    refused = end_game(database_url, tmp_path, str(game_id))
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        f"varulv end-game: game {game_id} in {table.channel} of {table.game()['team_id']} "
        "has ended already (over); nothing changed\n"
    )
    assert snapshot(db, game_id) == before

    with db.connect() as connection:
        unknown = int(connection.scalar(text("SELECT max(id) FROM games")) or 0) + 1000
        games = connection.scalar(text("SELECT count(*) FROM games"))
    refused = end_game(database_url, tmp_path, str(unknown))
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == f"varulv end-game: there is no game {unknown}; nothing changed\n"
    not_an_id = end_game(database_url, tmp_path, "C0123")
    assert not_an_id.returncode == 2 and "is not a game's id" in not_an_id.stderr
    with db.connect() as connection:
        assert connection.scalar(text("SELECT count(*) FROM games")) == games
    assert snapshot(db, game_id) == before


def test_the_ending_waits_for_a_step_holding_the_game_but_not_for_ever(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    host, *others = people(fake)
    table = Table(fake, app, db)
    table.seat_people(host, others)
    game_id = table.game_id()
    lock = text("SELECT id FROM games WHERE id = :g FOR NO KEY UPDATE")
    with db.connect() as holder:  # a step under way, or stuck, holds the game's row
        holder.execute(lock, {"g": game_id})
        with pytest.raises(OperationalError) as held:
            commit_give_up(app.varulv.sessions, game_id, None, lock_wait=timedelta(seconds=0.2))
        assert _lock_not_available(held.value)
        assert table.game()["phase"] == "lobby", "nothing changed"

        with ThreadPoolExecutor(1) as pool:
            ending = pool.submit(
                commit_give_up,
                app.varulv.sessions,
                game_id,
                None,
                lock_wait=timedelta(seconds=PATIENCE),
            )
            holder_pid = holder.scalar(text("SELECT pg_backend_pid()"))
            until(lambda: blocked_by(db, holder_pid) or ending.done(), "the ending to wait")
            assert not ending.done(), "it waits for the lock rather than passing the game over"
            holder.rollback()  # the step ends
            ended = ending.result(timeout=PATIENCE)
    assert ended is not None and (ended.game_id, ended.phase) == (game_id, Phase.LOBBY)
    assert ended.taken is None
    assert table.game()["phase"] == "cancelled"
    app.settle()
    table.board(FREE)


def blocked_by(db: Engine, holder_pid: int) -> bool:
    """Whether some connection waits for a lock that ``holder_pid``'s connection holds."""
    with db.connect() as connection:
        return bool(
            connection.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE :holder = ANY(pg_blocking_pids(pid))"
                ),
                {"holder": holder_pid},
            )
        )
