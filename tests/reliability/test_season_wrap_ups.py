"""Seasons on PostgreSQL with the clock driven by the test: games count in the season they were
decided in, and a season's wrap-up is posted once at its boundary, however many processes look.
"""

from __future__ import annotations

import itertools
import threading
from datetime import UTC, datetime, time, timedelta

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db import games, history, standing
from slackapp.db.engine import make_sessions, transaction
from slackapp.db.models import ChannelSettings, OutboxEntry
from slackapp.game import machine as m
from slackapp.game.schedule import Schedule
from slackapp.game.seasons import Season, SeasonLength
from slackapp.services.game import GameService
from slackapp.services.standing import SeasonWrapUps
from tests.reliability.support import Clock, Nothing
from tests.reliability.test_standing_tables import db as db
from tests.reliability.test_standing_tables import instance

TEAM = "T0SEASON"
_channels = itertools.count(1)
LENGTHS = m.Lengths(30, 60, 30)


@pytest.fixture(scope="module")
def sessions(db: Engine) -> sessionmaker[Session]:
    return make_sessions(db)


def play_a_game(steps: GameService, clock: Clock, channel: str, decided_at: datetime) -> int:
    """Three people and two bots, decided by the deadlines at ``decided_at``."""
    # Lengths 30/60/30: started 120 s before, each deadline met on time, the vote closes then.
    clock.at = decided_at - timedelta(seconds=120)
    assert steps.open_table(TEAM, channel, "U0ANNA", "anna") is None
    with steps.sessions() as session:
        game = games.open_in(session, TEAM, channel)
        assert game is not None
        game_id = game.id
    for user in ("U0BO", "U0CIA"):
        steps.act(game_id, m.Join(user, user.lower()))
    steps.act(game_id, m.FillWithBots("U0ANNA"))
    steps.act(game_id, m.Start("U0ANNA"))
    for seconds in (30, 60, 30):  # night, day and vote each end on their deadline
        clock.at += timedelta(seconds=seconds)
        steps.act(game_id, m.Deadline())
    assert clock.at == decided_at
    with steps.sessions() as session:
        assert history.finished(session, TEAM, game_id) is not None
    return game_id


def wrap_up_lines(sessions: sessionmaker[Session], channel: str) -> list[str]:
    with sessions() as session:
        return list(
            session.scalars(
                select(OutboxEntry.text)
                .where(OutboxEntry.channel == channel, OutboxEntry.text.startswith(":trophy:"))
                .order_by(OutboxEntry.id)
            )
        )


def test_a_season_wraps_up_once_at_its_boundary(
    sessions: sessionmaker[Session], db: Engine
) -> None:
    clock = Clock(datetime(2026, 11, 1, tzinfo=UTC))
    steps = GameService(sessions, LENGTHS, Nothing(), Nothing(), clock)
    channel = f"C{next(_channels):04d}SEA"
    november = [
        play_a_game(steps, clock, channel, datetime(2026, 11, 10, 14, tzinfo=UTC)),
        play_a_game(steps, clock, channel, datetime(2026, 11, 30, 23, 59, tzinfo=UTC)),
    ]
    december = play_a_game(steps, clock, channel, datetime(2026, 12, 1, 0, 0, tzinfo=UTC))

    with sessions() as session:
        season, played = history.current_season(
            session, TEAM, channel, datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC)
        )
        assert season == Season(2026, 11, SeasonLength.MONTH)
        assert len(played) == 2
        season, played = history.current_season(
            session, TEAM, channel, datetime(2026, 12, 1, tzinfo=UTC)
        )
        assert season == Season(2026, 12, SeasonLength.MONTH)
        assert len(played) == 1

    clock.at = datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC)
    assert SeasonWrapUps(sessions, clock).post_due(clock.at) == []

    clock.at = datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC)
    two = [SeasonWrapUps(instance(sessions, clock).sessions, clock) for _ in range(2)]
    go = threading.Barrier(2)
    posted: list[list[int]] = []

    def post(wrap_ups: SeasonWrapUps) -> None:
        go.wait()
        posted.append(wrap_ups.post_due(clock.at))

    threads = [threading.Thread(target=post, args=(wrap_ups,)) for wrap_ups in two]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(ids.count(november[-1]) for ids in posted) == [0, 1]
    assert december not in [game for ids in posted for game in ids]
    clock.at += timedelta(days=3)
    assert november[-1] not in two[0].post_due(clock.at), "posted once"

    (line,) = wrap_up_lines(sessions, channel)
    assert line.startswith(":trophy: *November 2026 is over*: 2 games played.")
    assert "bot" not in line.lower()


def test_a_channels_seasons_follow_its_settings_and_its_tables_zone(
    sessions: sessionmaker[Session],
) -> None:
    clock = Clock(datetime(2026, 9, 1, tzinfo=UTC))
    steps = GameService(sessions, LENGTHS, Nothing(), Nothing(), clock)
    channel = f"C{next(_channels):04d}SEA"
    with transaction(sessions) as session:
        session.add(
            ChannelSettings(
                team_id=TEAM,
                channel_id=channel,
                night_seconds=30,
                day_seconds=60,
                vote_seconds=30,
                bots_allowed=True,
                season="quarter",
                updated_by="U0ANNA",
            )
        )
        tokyo = Schedule(frozenset(range(5)), time(12, 0), "Asia/Tokyo", 10)
        standing.save(session, TEAM, channel, "U0ANNA", tokyo, clock.at)
    # 16:00 UTC on 30 September is 1 October in Tokyo: the fourth quarter there.
    play_a_game(steps, clock, channel, datetime(2026, 9, 30, 16, tzinfo=UTC))
    with sessions() as session:
        season, played = history.current_season(
            session, TEAM, channel, datetime(2026, 10, 2, tzinfo=UTC)
        )
    assert season == Season(2026, 10, SeasonLength.QUARTER)
    assert len(played) == 1
    wrap_ups = SeasonWrapUps(sessions, clock)
    assert wrap_ups.post_due(datetime(2026, 12, 31, 14, 59, tzinfo=UTC)) == []
    assert len(wrap_ups.post_due(datetime(2026, 12, 31, 15, 0, tzinfo=UTC))) >= 1
    (line,) = wrap_up_lines(sessions, channel)
    assert line.startswith(":trophy: *October to December 2026 is over*: 1 game played.")


def test_a_channel_whose_wrap_up_fails_holds_no_other_back(
    sessions: sessionmaker[Session],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A fault in one channel's wrap-up (its zone gone from the machine, a row the code cannot
    read): the other channels' go out, it is logged once, and it goes out once mended."""
    clock = Clock(datetime(2031, 3, 1, tzinfo=UTC))  # no other test's game is this recent
    steps = GameService(sessions, LENGTHS, Nothing(), Nothing(), clock)
    broken, mended = (f"C{next(_channels):04d}SEA" for _ in range(2))
    last = {
        channel: play_a_game(steps, clock, channel, datetime(2031, 3, 10, 14, tzinfo=UTC))
        for channel in (broken, mended)
    }
    real = history.season_records

    def season_records(session: Session, team_id: str, channel_id: str, *rest: object) -> object:
        if channel_id == broken:
            raise RuntimeError("a fault in this channel's records")
        return real(session, team_id, channel_id, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(history, "season_records", season_records)
    wrap_ups = SeasonWrapUps(sessions, clock)
    april = datetime(2031, 4, 1, 0, 0, 1, tzinfo=UTC)
    with caplog.at_level("DEBUG", logger="slackapp.services.standing"):
        assert wrap_ups.post_due(april) == [last[mended]], "the other channel's went out"
        assert wrap_ups.post_due(april + timedelta(minutes=1)) == []
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1, "logged once"
    assert errors[0].exc_info is not None and "this channel's" in str(errors[0].exc_info[1])
    assert wrap_up_lines(sessions, broken) == []

    monkeypatch.setattr(history, "season_records", real)
    assert wrap_ups.post_due(april + timedelta(minutes=2)) == [last[broken]], "once mended"
    assert len(wrap_up_lines(sessions, mended)) == len(wrap_up_lines(sessions, broken)) == 1
