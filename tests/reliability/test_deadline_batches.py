"""Deadlines due together, stepped in batches in process: a batch takes only the games no other
transaction holds, a held game is stepped by a later batch, and a late or double wake-up
changes nothing."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import make_engine, make_sessions
from slackapp.db.migrate import upgrade
from slackapp.db.models import Game
from slackapp.game import machine as m
from slackapp.server import until_stopped
from slackapp.services.game import GameService
from slackapp.services.uow import DEADLINE_BATCH, commit_give_up
from slackapp.timers import STALLED_SECONDS, Deadlines
from tests.databases import migrated_database
from tests.reliability.support import BrokenSteps, Clock, Nothing
from tests.waiting import PATIENCE, until

TEAM = "T0BATCH"
_numbers = itertools.count(1)


class DirectMessages:
    """Opens every person's private message, as Slack would."""

    def conversations_open(self, users: str) -> dict[str, Any]:
        return {"channel": {"id": f"D{users}"}}


def night_game(steps: GameService, sessions: sessionmaker[Session]) -> int:
    number = next(_numbers)
    channel = f"C{number:04d}BAT"
    people = [f"U{number:04d}BAT{seat}" for seat in "ABC"]
    assert steps.open_table(TEAM, channel, people[0], "a") is None
    with sessions() as session:
        game_id = session.scalar(select(Game.id).where(Game.channel_id == channel))
    assert game_id is not None
    for user in people[1:]:
        steps.act(game_id, m.Join(user, user.lower()))
    steps.start(game_id, people[0], DirectMessages())
    return game_id


def phases(sessions: sessionmaker[Session], ids: list[int]) -> list[str]:
    with sessions() as session:
        found = dict(session.execute(select(Game.id, Game.phase).where(Game.id.in_(ids))).all())
    return [found[game_id] for game_id in ids]


def test_a_batch_skips_a_held_game_and_a_later_one_steps_it(db: Engine) -> None:
    upgrade(db)
    sessions = make_sessions(db)
    # Long ago, so no other test's open game is ever due by this clock.
    clock = Clock(datetime(2001, 12, 1, 12, 0, tzinfo=UTC))
    steps = GameService(sessions, m.Lengths(60, 300, 120), Nothing(), Nothing(), clock)
    ids = [night_game(steps, sessions) for _ in range(3)]
    assert phases(sessions, ids) == ["night"] * 3
    assert steps.deadlines_due() == 0, "nothing is due before the night ends"
    clock.at += timedelta(seconds=61)
    with db.connect() as holder, holder.begin():  # another step holds the first game
        holder.execute(text("SELECT id FROM games WHERE id = :id FOR UPDATE"), {"id": ids[0]})
        assert steps.deadlines_due(limit=1) == 1, "a batch takes no more than its limit"
        assert steps.deadlines_due(limit=5) == 1, "the held game is skipped, not waited for"
        assert phases(sessions, ids) == ["night", "day", "day"]
    assert steps.deadlines_due() == 1, "once let go, the next batch steps it"
    assert phases(sessions, ids) == ["day"] * 3
    with sessions() as session:
        before = session.scalar(
            text("SELECT count(*) FROM outbox WHERE stream = ANY(:i)"), {"i": ids}
        )
    assert steps.deadlines_due() == 0, "a late or double wake-up finds nothing due"
    with sessions() as session:
        after = session.scalar(
            text("SELECT count(*) FROM outbox WHERE stream = ANY(:i)"), {"i": ids}
        )
    assert after == before, "and shows nothing twice"


def test_a_game_ended_by_its_ballots_leaves_no_timer_behind(db: Engine) -> None:
    # The vote's timer would otherwise wait, held in memory, until the vote would have ended.
    upgrade(db)
    sessions = make_sessions(db)
    clock = Clock(datetime(1999, 12, 2, 12, 0, tzinfo=UTC))  # before any other test's games
    timers = Deadlines(sessions, now=clock)
    timers.scheduler.start(paused=True)  # jobs are kept and never run: the test is the clock
    try:
        steps = GameService(sessions, m.Lengths(60, 300, 120), Nothing(), timers, clock)
        game_id = night_game(steps, sessions)
        job = f"deadline-{game_id}"
        assert timers.scheduler.get_job(job) is not None, "the night's end is armed"
        for seconds in (61, 301):  # night to day, day to vote: each re-arms the one timer
            clock.at += timedelta(seconds=seconds)
            assert steps.deadlines_due() == 1
            assert timers.scheduler.get_job(job) is not None
        assert phases(sessions, [game_id]) == ["vote"]
        with sessions() as session:
            people = session.scalars(
                text("SELECT user_id FROM seats WHERE game_id = :g ORDER BY user_id"),
                {"g": game_id},
            ).all()
        for voter, target in zip(people, [*people[1:], people[0]], strict=True):
            steps.act(game_id, m.CastBallot(voter, target))
        assert phases(sessions, [game_id]) == ["over"]
        assert timers.scheduler.get_job(job) is None
    finally:
        timers.stop()


def test_a_sweep_arms_the_deadlines_another_process_set_before_they_fall_due(db: Engine) -> None:
    """A ``varulv serve`` with its timers off arms nothing: the process keeping the timers
    learns of its deadlines from the sweep, and arms each before it is due, to the second."""
    upgrade(db)
    sessions = make_sessions(db)
    clock = Clock(datetime(2099, 12, 1, 12, 0, tzinfo=UTC))
    deadlines = Deadlines(sessions, now=clock)
    # Paused: no job and no sweep of the scheduler's own runs while the test looks.
    deadlines.scheduler.start(paused=True)
    try:
        # The other process's steps: their alarm arms nothing here.
        short = GameService(sessions, m.Lengths(3, 300, 120), Nothing(), Nothing(), clock)
        long = GameService(sessions, m.Lengths(60, 300, 120), Nothing(), Nothing(), clock)
        soon, later = night_game(short, sessions), night_game(long, sessions)

        def armed(game_id: int) -> datetime | None:
            job = deadlines.scheduler.get_job(f"deadline-{game_id}")
            return None if job is None else job.next_run_time

        assert armed(soon) is None and armed(later) is None
        deadlines.sweep()
        assert armed(soon) == clock.at + timedelta(seconds=3), "due before the next sweeps"
        assert armed(later) is None, "a deadline a minute off waits for a later sweep"
        clock.at += timedelta(seconds=58)
        deadlines.sweep()
        assert armed(later) == clock.at + timedelta(seconds=2)
    finally:
        deadlines.stop()


def test_stopping_takes_no_further_batch_and_waits_for_the_one_under_way(postgres: str) -> None:
    """SIGTERM in a storm: the batch being stepped is committed (its messages go while the
    deliverer still runs), and no further one is taken, however many are due."""
    # A database of its own, with no deadline to arm, and no sweep while the test runs: only
    # the test's wake-ups step.
    engine = make_engine(migrated_database(postgres, "stopping"))
    deadlines = Deadlines(make_sessions(engine), sweep_seconds=3600)
    stepping, stop_asked = threading.Event(), threading.Event()
    batches: list[int] = []

    def step_due() -> int:
        batches.append(len(batches))
        stepping.set()
        assert stop_asked.wait(PATIENCE)
        return 10  # a full batch: more would be due

    deadlines.start(step_due, 10)
    waking = threading.Thread(target=deadlines.wake)
    waking.start()
    assert stepping.wait(PATIENCE)
    stopping = threading.Thread(target=deadlines.stop)
    stopping.start()
    until(lambda: not deadlines.keeping_time(), "the timers to say they stop")
    stop_asked.set()
    stopping.join(PATIENCE)
    waking.join(PATIENCE)
    assert not stopping.is_alive() and not waking.is_alive()
    assert batches == [0], "the batch under way finished, and no other was taken"
    deadlines.wake()
    assert batches == [0], "a wake-up after the stop steps nothing"
    engine.dispose()


def test_a_sweep_that_moves_on_for_two_minutes_counts_as_timers_stopped(db: Engine) -> None:
    """A sweep stuck on a connection that never answers: the scheduler still runs, but later
    sweeps are skipped, so ``/healthz`` and ``varulv work`` must count the timers stopped."""
    ticks = [1000.0]
    deadlines = Deadlines(make_sessions(db), monotonic=lambda: ticks[0])
    deadlines.scheduler.start(paused=True)
    try:
        assert deadlines.keeping_time()
        ticks[0] += STALLED_SECONDS - 1
        assert deadlines.keeping_time(), "a long sweep is not a stuck one"
        ticks[0] += 2
        assert not deadlines.keeping_time()
        deadlines.sweep()
        assert deadlines.keeping_time(), "a sweep that ends moves the timers on"
    finally:
        deadlines.stop()
    assert not deadlines.keeping_time(), "stopped"


def test_a_process_with_no_healthz_exits_once_its_timers_stall(db: Engine) -> None:
    """``varulv work`` and Socket Mode have no ``/healthz``: they wait while their timers keep
    time, and exit with status 1, for the platform to start them again, once they stall."""
    minutes = itertools.count(1000.0, STALLED_SECONDS / 2)  # each look, a minute later
    deadlines = Deadlines(make_sessions(db), monotonic=lambda: next(minutes))
    deadlines.scheduler.start(paused=True)
    ended = threading.Event()
    statuses: list[int] = []

    def end_now(status: int) -> None:  # as os._exit would, were a stuck thread to hold it
        statuses.append(status)
        ended.set()

    try:
        with pytest.raises(SystemExit) as exited:
            until_stopped(deadlines, every=0, grace=0, end_now=end_now)
    finally:
        deadlines.stop()
    assert exited.value.code == 1
    looks = (next(minutes) - 1000.0) / (STALLED_SECONDS / 2)
    assert looks == 3, "set at the start, kept time at the first check, stalled at the second"
    assert ended.wait(PATIENCE) and statuses == [1], "ended at once after its grace"


def test_a_game_whose_timer_finds_its_step_failing_every_time_is_ended(
    postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The timer armed in this process for a game's deadline wakes the batch; the game's step
    fails every time. After a minute of it, the game is ended without the machine, its
    timer goes, and what the channel and its people are told waits in the outbox."""
    engine = make_engine(migrated_database(postgres, "given-up"))  # no other game to step
    sessions = make_sessions(engine)
    clock = Clock(datetime(2098, 3, 1, 12, 0, tzinfo=UTC))  # no job fires by the real clock
    timers = Deadlines(sessions, sweep_seconds=3600, now=clock)
    steps = GameService(sessions, m.Lengths(60, 300, 120), Nothing(), timers, clock)
    timers.start(steps.deadlines_due, DEADLINE_BATCH)
    try:
        game_id = night_game(steps, sessions)
        job = timers.scheduler.get_job(f"deadline-{game_id}")
        assert job is not None and job.func == timers.wake, "the night's end is armed here"
        broken = BrokenSteps(monkeypatch)
        broken.always.add(game_id)
        clock.at += timedelta(seconds=61)
        for seconds in (0, 30, 29):
            clock.at += timedelta(seconds=seconds)
            job.func()  # the timer fires
            assert phases(sessions, [game_id]) == ["night"]
        assert broken.raised == [game_id] * 6, "the batch, then the game alone, each time"
        assert timers.scheduler.get_job(job.id) is not None
        clock.at += timedelta(seconds=1)
        job.func()
        assert phases(sessions, [game_id]) == ["stopped"]
        assert timers.scheduler.get_job(job.id) is None, "its timer is gone"
        with sessions() as session:
            game = session.get_one(Game, game_id)
            assert game.deadline is None and game.outcome is None
            people = sorted(seat.user_id for seat in game.seats if seat.user_id)
            told = session.execute(
                text(
                    "SELECT surface, channel, text FROM outbox WHERE stream = :g "
                    "AND text LIKE '%hit a fault%' ORDER BY id"
                ),
                {"g": game_id},
            ).all()
        shown = [(surface.split(":")[0], channel) for surface, channel, _ in told]
        assert shown[0] == ("lobby", game.channel_id), "the board says so"
        assert sorted(shown[1:-1]) == [("dm", f"D{user}") for user in people], "and each DM"
        assert shown[-1] == ("say", game.channel_id)
        assert "type `/varulv` to start a new game" in told[-1].text, "the channel is told"
    finally:
        timers.stop()
        engine.dispose()


def test_a_game_stepped_elsewhere_between_failures_is_not_given_up(
    postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This process's step fails at each of a game's deadlines, once, and each time another
    process steps it: failing at three deadlines over a minute is not failing for a minute."""
    engine = make_engine(migrated_database(postgres, "moved-on"))  # no other game to step
    sessions = make_sessions(engine)
    clock = Clock(datetime(2097, 3, 1, 12, 0, tzinfo=UTC))
    here = GameService(sessions, m.Lengths(30, 30, 30), Nothing(), Nothing(), clock)
    elsewhere = GameService(sessions, m.Lengths(30, 30, 30), Nothing(), Nothing(), clock)
    try:
        game_id = night_game(here, sessions)
        broken = BrokenSteps(monkeypatch)
        for phase in ("day", "vote", "over"):
            clock.at += timedelta(seconds=31)
            broken.once.add(game_id)
            assert not here.deadline(game_id), "its step failed here"
            assert elsewhere.deadline(game_id), "and went through elsewhere"
            assert phases(sessions, [game_id]) == [phase]
        assert broken.raised == [game_id] * 3
    finally:
        engine.dispose()


@contextmanager
def games_of_their_own(
    postgres: str, purpose: str, year: int
) -> Iterator[tuple[Engine, sessionmaker[Session], Clock, GameService]]:
    """A database of its own (no other test's game is due there), its clock in ``year``, and
    a service stepping its games."""
    engine = make_engine(migrated_database(postgres, purpose))
    sessions = make_sessions(engine)
    clock = Clock(datetime(year, 3, 1, 12, 0, tzinfo=UTC))
    try:
        yield (
            engine,
            sessions,
            clock,
            GameService(sessions, m.Lengths(60, 300, 120), Nothing(), Nothing(), clock),
        )
    finally:
        engine.dispose()


def test_a_database_away_ends_no_game(postgres: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every step fails while the database is away, and the give-up's own write would too:
    however long it lasts, the failures count for nothing, and the game steps once it is back."""
    with games_of_their_own(postgres, "away", 2096) as (_, sessions, clock, steps):
        game_id = night_game(steps, sessions)
        broken = BrokenSteps(monkeypatch, error=lambda: PoolTimeout("no connection came"))
        broken.always.add(game_id)
        clock.at += timedelta(seconds=61)
        for _ in range(4):
            with pytest.raises(PoolTimeout):
                steps.deadline(game_id)
            assert steps.deadlines_due() == 0
            clock.at += timedelta(seconds=40)
        assert phases(sessions, [game_id]) == ["night"]
        assert game_id not in steps.failing
        broken.always.clear()
        assert steps.deadline(game_id)
        assert phases(sessions, [game_id]) == ["day"]


def test_the_give_up_passes_over_a_game_a_step_holds(postgres: str) -> None:
    """The give-up of a failing deadline never waits for a game's lock: a step that holds the
    game is moving it (or ending it), and the timers' threads must not wait on a stuck one."""
    with games_of_their_own(postgres, "held", 2095) as (engine, sessions, clock, steps):
        game_id = night_game(steps, sessions)
        with sessions() as session:
            deadline = session.get_one(Game, game_id).deadline
        assert deadline is not None
        clock.at = deadline + timedelta(seconds=61)
        given_up = threading.Event()
        found: list[object] = []

        def give_up() -> None:
            found.append(commit_give_up(sessions, game_id, deadline, clock.at))
            given_up.set()

        lock = text("SELECT id FROM games WHERE id = :g FOR NO KEY UPDATE")
        with engine.connect() as holder:  # a step under way holds the game's row
            holder.execute(lock, {"g": game_id})
            trying = threading.Thread(target=give_up)
            trying.start()
            passed_over = given_up.wait(PATIENCE)
            holder.rollback()
        trying.join()
        assert passed_over, "it did not wait for the step's lock"
        assert found == [None]
        assert phases(sessions, [game_id]) == ["night"]
