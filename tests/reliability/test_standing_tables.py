"""Standing tables on PostgreSQL with the clock driven by the test: each opening fires once
with two app instances sweeping at the same minute, is skipped while a game runs, survives a
restart between arming and firing, follows the zone across a clock change, closes its lobby
on time, stops in a channel that refuses the bot, and one that cannot be opened or closed
holds no other back."""

from __future__ import annotations

import io
import itertools
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from slackapp.blocks.schedule import invitation
from slackapp.db import standing
from slackapp.db.engine import make_sessions, transaction
from slackapp.db.models import Game, OutboxEntry, StandingTable
from slackapp.delivery.outbox import enqueue, notice
from slackapp.game import machine as m
from slackapp.game.schedule import UNREADABLE_RETRY, Schedule
from slackapp.logs import JsonFormatter
from slackapp.services.game import GameService
from slackapp.services.standing import StandingTables, pause_for_channel_of
from slackapp.services.uow import Kick, new_table
from tests.databases import WAITING_TO_OPEN, migrated_database
from tests.reliability.support import BrokenSteps, Clock, Nothing, a_standing_table
from tests.waiting import until

TEAM = "T0STAND"
_channels = itertools.count(1)
LENGTHS = m.Lengths(120, 300, 120)
FIKA = Schedule(frozenset(range(5)), time(15, 0), "Europe/Stockholm", 15)
TUESDAY_MORNING = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
TUESDAY_FIKA = datetime(2026, 12, 1, 14, 0, tzinfo=UTC)  # 15:00 in Stockholm


@pytest.fixture(scope="module")
def db(postgres: str) -> Iterator[Engine]:
    """A database of its own: the end-to-end apps that share the worker's sweep standing tables
    and seasons by the real clock, and these tests' dates are past ones."""
    engine = create_engine(migrated_database(postgres, "standing"))
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def sessions(db: Engine) -> sessionmaker[Session]:
    return make_sessions(db)


def instance(
    sessions: sessionmaker[Session], clock: Clock, deliverer: Kick | None = None
) -> StandingTables:
    """One app process's standing tables, with an engine of its own."""
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    own = make_sessions(create_engine(url))
    return StandingTables(
        own,
        LENGTHS,
        deliverer or Nothing(),
        GameService(own, LENGTHS, Nothing(), Nothing(), clock),
        clock,
    )


def new_channel(
    sessions: sessionmaker[Session], schedule: Schedule = FIKA, now: datetime = TUESDAY_MORNING
) -> str:
    channel = f"C{next(_channels):04d}STD"
    with transaction(sessions) as session:
        standing.save(session, TEAM, channel, "U0OWNER", schedule, now)
    return channel


def games_in(sessions: sessionmaker[Session], channel: str) -> list[Game]:
    with sessions() as session:
        return list(
            session.scalars(select(Game).where(Game.channel_id == channel).order_by(Game.id))
        )


def sweep_in(tables: StandingTables, channel: str) -> list[int]:
    """Sweep, and the games opened in ``channel`` (other tests' channels may be due too)."""
    opened = tables.sweep()
    return [game.id for game in games_in(tables.sessions, channel) if game.id in opened]


def armed(sessions: sessionmaker[Session], channel: str) -> datetime:
    with sessions() as session:
        row = standing.get(session, TEAM, channel)
        assert row is not None
        return row.next_at


@pytest.fixture
def clock() -> Clock:
    return Clock(TUESDAY_MORNING)


@pytest.fixture
def two(sessions: sessionmaker[Session], clock: Clock) -> Iterator[list[StandingTables]]:
    yield [instance(sessions, clock), instance(sessions, clock)]


def test_saving_arms_the_next_opening(sessions: sessionmaker[Session]) -> None:
    channel = new_channel(sessions)
    assert armed(sessions, channel) == TUESDAY_FIKA
    with sessions() as session:
        row = standing.get(session, TEAM, channel)
        assert row is not None
        assert standing.schedule_of(row) == FIKA


def test_nothing_opens_before_the_minute(
    sessions: sessionmaker[Session], two: list[StandingTables], clock: Clock
) -> None:
    channel = new_channel(sessions)
    clock.at = TUESDAY_FIKA - timedelta(seconds=1)
    for tables in two:
        tables.sweep()
    assert games_in(sessions, channel) == []


def test_two_processes_at_the_same_minute_open_one_table(
    sessions: sessionmaker[Session], two: list[StandingTables], clock: Clock
) -> None:
    channel = new_channel(sessions)
    clock.at = TUESDAY_FIKA + timedelta(seconds=1)
    go = threading.Barrier(2)
    opened: list[list[int]] = []

    def sweep(tables: StandingTables) -> None:
        go.wait()
        opened.append(tables.open_due())

    threads = [threading.Thread(target=sweep, args=(tables,)) for tables in two]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for tables in two:  # and each again, a little later
        clock.at += timedelta(seconds=2)
        tables.sweep()

    (game,) = games_in(sessions, channel)
    assert game.phase == "lobby"
    # Other tests' channels may be due too: count this one's.
    assert sorted(ids.count(game.id) for ids in opened) == [0, 1]
    assert armed(sessions, channel) == TUESDAY_FIKA + timedelta(days=1)


def test_the_lobby_is_posted_with_every_seat_free_and_the_regulars_mentioned(
    sessions: sessionmaker[Session], two: list[StandingTables], clock: Clock
) -> None:
    channel = new_channel(sessions)
    with transaction(sessions) as session:
        assert standing.toggle_regular(session, TEAM, channel, "U0REG1")
        assert standing.toggle_regular(session, TEAM, channel, "U0REG2")
        assert standing.toggle_regular(session, TEAM, channel, "U0GONE")
        assert not standing.toggle_regular(session, TEAM, channel, "U0GONE")  # unmarked again
    clock.at = TUESDAY_FIKA
    (game_id,) = sweep_in(two[0], channel)
    with sessions() as session:
        game = session.get(Game, game_id)
        assert game is not None
        assert game.seats == []
        assert game.host_user_id == "U0OWNER"
        texts = session.scalars(select(OutboxEntry.text).where(OutboxEntry.stream == game_id)).all()
    assert invitation(FIKA, ["U0REG1", "U0REG2"]) in texts
    assert "<@U0REG1> <@U0REG2>" in invitation(FIKA, ["U0REG1", "U0REG2"])
    assert "U0GONE" not in " ".join(texts)


def test_an_opening_is_skipped_while_a_game_runs(
    sessions: sessionmaker[Session], two: list[StandingTables], clock: Clock
) -> None:
    channel = new_channel(sessions)
    steps = two[0].game_service
    assert steps.open_table(TEAM, channel, "U0ALVA", "alva") is None
    clock.at = TUESDAY_FIKA
    two[0].sweep()
    (game,) = games_in(sessions, channel)
    assert game.host_user_id == "U0ALVA"
    assert armed(sessions, channel) == TUESDAY_FIKA + timedelta(days=1), "the day is skipped"


def test_an_opening_racing_a_command_leaves_the_channel_its_table(
    sessions: sessionmaker[Session], two: list[StandingTables], clock: Clock, db: Engine
) -> None:
    """A ``/varulv`` still committing its table as the opening fires: the opening waits for it
    on the one-open-table index, then skips the day, and the command's table is the one."""
    channel = new_channel(sessions)
    clock.at = TUESDAY_FIKA
    sweep = threading.Thread(target=two[0].sweep)
    with transaction(sessions) as session:
        opening = new_table(session, TEAM, channel, LENGTHS, "U0ALVA", "alva")
        assert opening is not None
        game, opened = opening
        enqueue(session.connection(), game, opened.effects)
        sweep.start()

        def waiting() -> bool | None:
            with db.connect() as connection:
                return connection.scalar(WAITING_TO_OPEN) or None

        until(waiting, "the opening to wait on the command's table")
    sweep.join()
    assert [game.host_user_id for game in games_in(sessions, channel)] == ["U0ALVA"]
    assert armed(sessions, channel) == TUESDAY_FIKA + timedelta(days=1), "the day is skipped"


def test_an_opening_survives_a_restart_between_arming_and_firing(
    sessions: sessionmaker[Session], clock: Clock
) -> None:
    channel = new_channel(sessions)
    before = instance(sessions, clock)
    before.sweep()  # armed, nothing due
    del before  # the process goes away; the next one starts after the minute
    clock.at = TUESDAY_FIKA + timedelta(minutes=3)
    after = instance(sessions, clock)
    after.sweep()
    assert len(games_in(sessions, channel)) == 1


def test_a_process_down_past_the_lobby_opens_no_stale_table(
    sessions: sessionmaker[Session], clock: Clock
) -> None:
    channel = new_channel(sessions)
    clock.at = TUESDAY_FIKA + timedelta(minutes=15)
    instance(sessions, clock).sweep()
    assert games_in(sessions, channel) == []
    assert armed(sessions, channel) == TUESDAY_FIKA + timedelta(days=1)


def test_the_opening_follows_the_zone_across_a_clock_change(
    sessions: sessionmaker[Session], clock: Clock
) -> None:
    # 15:00 in Stockholm is 14:00 UTC on Friday 27 March 2026 and 13:00 UTC on Monday the 30th,
    # after summer time began on the Sunday.
    friday = datetime(2026, 3, 27, 14, 0, tzinfo=UTC)
    monday = datetime(2026, 3, 30, 13, 0, tzinfo=UTC)
    channel = new_channel(sessions, now=friday - timedelta(hours=5))
    assert armed(sessions, channel) == friday
    tables = instance(sessions, clock)
    clock.at = friday
    assert len(sweep_in(tables, channel)) == 1
    assert armed(sessions, channel) == monday
    with transaction(sessions) as session:  # the Friday lobby closes; nothing else is open
        (game,) = session.scalars(select(Game).where(Game.channel_id == channel)).all()
        game.phase = "cancelled"
    clock.at = monday - timedelta(minutes=1)
    assert sweep_in(tables, channel) == []
    clock.at = monday
    assert len(sweep_in(tables, channel)) == 1
    assert len(games_in(sessions, channel)) == 2


def test_the_lobby_closes_when_its_time_is_up(
    sessions: sessionmaker[Session], clock: Clock
) -> None:
    channel = new_channel(sessions)
    tables = instance(sessions, clock)
    clock.at = TUESDAY_FIKA
    (game_id,) = sweep_in(tables, channel)
    clock.at = TUESDAY_FIKA + timedelta(minutes=14, seconds=59)
    assert game_id not in tables.close_due()
    clock.at = TUESDAY_FIKA + timedelta(minutes=15)
    assert game_id in tables.close_due()
    assert game_id not in tables.close_due()
    (game,) = games_in(sessions, channel)
    assert game.phase == "cancelled"


def test_a_started_game_is_not_closed_with_the_lobby(
    sessions: sessionmaker[Session], clock: Clock
) -> None:
    channel = new_channel(sessions)
    tables = instance(sessions, clock)
    clock.at = TUESDAY_FIKA
    (game_id,) = sweep_in(tables, channel)
    steps = tables.game_service
    for user in ("U0ALVA", "U0BENGT", "U0CARIN"):
        assert steps.act(game_id, m.Join(user, user.lower())) is None
    assert steps.act(game_id, m.Start("U0ALVA")) is None  # the night begins
    clock.at = TUESDAY_FIKA + timedelta(minutes=15)
    assert game_id in tables.close_due()
    (game,) = games_in(sessions, channel)
    assert game.phase == "day", "the game goes on (its night's deadline passed meanwhile)"


def test_a_channel_that_refuses_the_bot_pauses_its_schedule(
    sessions: sessionmaker[Session], clock: Clock
) -> None:
    channel = new_channel(sessions)
    tables = instance(sessions, clock)
    clock.at = TUESDAY_FIKA
    (game_id,) = sweep_in(tables, channel)
    pause_for_channel_of(sessions, game_id, "not_in_channel")
    tables.game_service.act(game_id, m.ChannelUnwritable("not_in_channel"))
    clock.at = TUESDAY_FIKA + timedelta(days=1)
    assert sweep_in(tables, channel) == []
    assert len(games_in(sessions, channel)) == 1
    with sessions() as session:
        row = standing.get(session, TEAM, channel)
        assert row is not None
        assert row.paused == "not_in_channel"
    # Set again (after /invite), it runs again.
    with transaction(sessions) as session:
        standing.save(session, TEAM, channel, "U0OWNER", FIKA, clock.at - timedelta(minutes=1))
    assert len(sweep_in(tables, channel)) == 1


def test_a_channel_that_refuses_the_bot_a_notice_pauses_its_schedule(
    sessions: sessionmaker[Session], clock: Clock
) -> None:
    """A notice is a stream no game carries: Slack's refusal of it still reaches its channel."""
    channel = new_channel(sessions)
    with transaction(sessions) as session:
        stream = notice(session.connection(), TEAM, None, channel, "the schedule is set")
    assert games_in(sessions, channel) == []
    pause_for_channel_of(sessions, stream, "not_in_channel")
    with sessions() as session:
        row = standing.get(session, TEAM, channel)
        assert row is not None and row.paused == "not_in_channel"


def test_removing_a_schedule_stops_it(sessions: sessionmaker[Session], clock: Clock) -> None:
    channel = new_channel(sessions)
    with transaction(sessions) as session:
        assert standing.remove(session, TEAM, channel)
        assert not standing.remove(session, TEAM, channel)
    clock.at = TUESDAY_FIKA
    assert sweep_in(instance(sessions, clock), channel) == []
    with sessions() as session:
        assert (
            session.scalar(select(func.count()).select_from(Game).where(Game.channel_id == channel))
            == 0
        )


def test_a_table_opened_in_a_workspace_of_an_organisation_keeps_the_organisation(
    sessions: sessionmaker[Session], two: list[StandingTables], clock: Clock
) -> None:
    """Its installation is stored under the organisation's id, so every post of the table is
    found by it."""
    channel = f"C{next(_channels):04d}STD"
    with transaction(sessions) as session:
        standing.save(session, TEAM, channel, "U0OWNER", FIKA, TUESDAY_MORNING, "E0GRID")
    clock.at = TUESDAY_FIKA + timedelta(seconds=1)
    sweep_in(two[0], channel)
    (game,) = games_in(sessions, channel)
    assert (game.team_id, game.enterprise_id) == (TEAM, "E0GRID")
    with transaction(sessions) as session:  # set again outside a Grid: the id goes
        standing.save(session, TEAM, channel, "U0OWNER", FIKA, clock.at)
        row = standing.get(session, TEAM, channel)
        assert row is not None and row.enterprise_id is None


# --- one that fails holds no other back ---------------------------------------------------------


class Kicks:
    """The deliverer, which records the games it is kicked to show."""

    def __init__(self) -> None:
        self.kicked: list[int] = []

    def kick(self, game_id: int) -> None:
        self.kicked.append(game_id)


class Logged:
    """The sweeps' log lines as the app writes them (with the ids of their context)."""

    def __init__(self) -> None:
        self.stream = io.StringIO()

    def lines(self, channel: str, level: str = "ERROR") -> list[dict[str, Any]]:
        """This channel's lines at ``level``, read and forgotten."""
        lines = [json.loads(line) for line in self.stream.getvalue().splitlines()]
        self.stream.seek(0)
        self.stream.truncate()
        return [e for e in lines if e.get("channel_id") == channel and e["level"] == level]


@pytest.fixture
def logged() -> Iterator[Logged]:
    logged = Logged()
    handler = logging.StreamHandler(logged.stream)
    handler.setFormatter(JsonFormatter())
    handler.setLevel(logging.WARNING)
    logger = logging.getLogger("slackapp.services.standing")
    logger.addHandler(handler)
    try:
        yield logged
    finally:
        logger.removeHandler(handler)


A_MINUTE_EARLIER = replace(FIKA, at=time(14, 59))
"""Due with ``FIKA``, and before it in the sweep's order."""
WEDNESDAY = TUESDAY_FIKA + timedelta(days=1)


def test_a_standing_table_that_cannot_be_opened_holds_no_other_back(
    sessions: sessionmaker[Session],
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    logged: Logged,
) -> None:
    """Two standing tables due together, and opening the first raises (its regulars cannot be
    read): the second opens and shows its lobby and invitation; the first opens nothing, is
    said once, is tried again at each sweep while its lobby may open, and opens once mended;
    one still failing when its lobby time is over waits for its next opening."""
    failing = new_channel(sessions, A_MINUTE_EARLIER)
    fine = new_channel(sessions)
    real_regulars = standing.regulars
    tries: list[str] = []

    def regulars(session: Session, team_id: str, channel_id: str) -> list[str]:
        if channel_id == failing:
            tries.append(channel_id)
            raise RuntimeError("a fault reading the regulars")
        return real_regulars(session, team_id, channel_id)

    monkeypatch.setattr(standing, "regulars", regulars)
    kicks = Kicks()
    tables = instance(sessions, clock, kicks)
    clock.at = TUESDAY_FIKA

    (game_id,) = sweep_in(tables, fine)

    assert tries, "the failing table was tried"
    assert games_in(sessions, failing) == [], "its opening was rolled back"
    assert game_id in kicks.kicked
    with sessions() as session:
        shown = session.execute(
            select(OutboxEntry.surface, OutboxEntry.text).where(OutboxEntry.stream == game_id)
        ).all()
    assert "lobby" in [surface for surface, _ in shown]
    assert invitation(FIKA, []) in [text for _, text in shown]
    (error,) = logged.lines(failing)
    assert error["team_id"] == TEAM
    assert "a fault reading the regulars" in error["error"]
    assert logged.lines(fine) == []
    assert armed(sessions, failing) == TUESDAY_FIKA - timedelta(minutes=1), "still due"

    tried = len(tries)
    clock.at += timedelta(seconds=2)
    assert sweep_in(tables, failing) == []
    assert len(tries) > tried, "tried again at the next sweep"
    assert logged.lines(failing) == [], "and said once"

    monkeypatch.setattr(standing, "regulars", real_regulars)  # the fault is mended
    clock.at += timedelta(seconds=2)
    assert len(sweep_in(tables, failing)) == 1, "a few seconds late, its lobby opens"
    (game,) = games_in(sessions, failing)
    assert game.phase == "lobby"


def test_a_standing_table_failing_past_its_lobby_time_waits_for_its_next_opening(
    sessions: sessionmaker[Session], clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = new_channel(sessions)
    real_regulars = standing.regulars
    tries: list[str] = []

    def regulars(session: Session, team_id: str, channel_id: str) -> list[str]:
        if channel_id != failing:
            return real_regulars(session, team_id, channel_id)
        tries.append(channel_id)
        raise RuntimeError("a fault reading the regulars")

    monkeypatch.setattr(standing, "regulars", regulars)
    tables = instance(sessions, clock)
    clock.at = TUESDAY_FIKA
    assert sweep_in(tables, failing) == []
    clock.at = TUESDAY_FIKA + FIKA.lobby_length  # its lobby could open no longer
    assert sweep_in(tables, failing) == []
    assert armed(sessions, failing) == WEDNESDAY
    tried = len(tries)
    clock.at += timedelta(seconds=2)
    assert sweep_in(tables, failing) == []
    assert len(tries) == tried, "not tried at every sweep after it"
    assert games_in(sessions, failing) == []


def test_a_schedule_that_cannot_be_read_holds_no_other_back(
    sessions: sessionmaker[Session], clock: Clock, logged: Logged
) -> None:
    """A schedule whose zone this machine no longer knows has no next opening to wait for: it
    is tried again an hour on, and the table due with it opens."""
    unreadable = new_channel(sessions, A_MINUTE_EARLIER)
    fine = new_channel(sessions)
    with transaction(sessions) as session:
        session.execute(
            update(StandingTable)
            .where(StandingTable.team_id == TEAM, StandingTable.channel_id == unreadable)
            .values(zone="Mars/Olympus_Mons")
        )
    tables = instance(sessions, clock)
    clock.at = TUESDAY_FIKA
    try:
        assert len(sweep_in(tables, fine)) == 1
        assert games_in(sessions, unreadable) == []
        (error,) = logged.lines(unreadable)
        assert "Mars/Olympus_Mons" in error["error"]
        assert armed(sessions, unreadable) == TUESDAY_FIKA + UNREADABLE_RETRY
        clock.at += timedelta(seconds=2)
        tables.sweep()
        assert logged.lines(unreadable) == [], "not tried again at the next sweep"
    finally:  # no later sweep of this database meets it
        with transaction(sessions) as session:
            standing.remove(session, TEAM, unreadable)


def test_a_lobby_that_cannot_be_closed_holds_no_other_back(
    sessions: sessionmaker[Session],
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
    logged: Logged,
) -> None:
    """Two lobbies whose time is up, and the first one's step raises: the second closes, and
    the first is said once, tried again at the next sweep, and closed once mended."""
    first = new_channel(sessions, A_MINUTE_EARLIER)
    second = new_channel(sessions)
    tables = instance(sessions, clock)
    clock.at = TUESDAY_FIKA
    tables.sweep()
    (broken_id,) = (game.id for game in games_in(sessions, first))
    (game_id,) = (game.id for game in games_in(sessions, second))
    broken = BrokenSteps(monkeypatch)
    broken.always.add(broken_id)
    clock.at = TUESDAY_FIKA + FIKA.lobby_length

    closed = tables.close_due()

    assert game_id in closed
    assert broken_id not in closed
    assert [game.phase for game in games_in(sessions, second)] == ["cancelled"]
    assert [game.phase for game in games_in(sessions, first)] == ["lobby"]
    assert broken.raised == [broken_id]
    (error,) = logged.lines(first)
    assert (error["team_id"], error["game_id"]) == (TEAM, broken_id)
    assert "a fault stepping a game" in error["error"]
    clock.at += timedelta(seconds=2)
    tables.sweep()
    assert broken.raised == [broken_id] * 2, "tried again at the next sweep"
    assert logged.lines(first) == [], "and said once"
    broken.always.clear()  # mended
    clock.at += timedelta(seconds=2)
    assert broken_id in tables.close_due()
    assert [game.phase for game in games_in(sessions, first)] == ["cancelled"]
    assert tables.close_due() == [], "its row names it no longer"


def test_a_workspaces_other_standing_tables_come_paused_first_and_counted_past_the_limit(
    db: Engine, sessions: sessionmaker[Session]
) -> None:
    team = "T0ELSEWHERE"
    for number in range(12):
        paused = "not_in_channel" if number in (7, 9) else None
        a_standing_table(db, team, f"C0ELSE{number:02}", "U0ADMIN", paused=paused)
    a_standing_table(db, "T0SOMEONEELSE", "C0ELSE99", "U0ADMIN")
    with sessions() as session:
        shown, total = standing.elsewhere(session, team, "C0ELSE00", 5)
        assert [row.channel_id for row in shown] == [
            "C0ELSE07", "C0ELSE09", "C0ELSE01", "C0ELSE02", "C0ELSE03"
        ]  # fmt: skip
        assert total == 11, "every other channel of the workspace, not this one or another's"
        assert standing.elsewhere(session, "T0NONE", "C0ELSE00", 5) == ([], 0)
