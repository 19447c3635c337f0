"""Retention: ended games older than VARULV_RETENTION_DAYS are deleted with their seats, ballots
and messages, daily and by ``varulv prune``; scores, season wrap-ups and running games stay,
and a revealed game stays while its season may still count it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import make_engine
from slackapp.db.models import (
    Ballot,
    ChannelSettings,
    DeliveryLease,
    Game,
    OutboxEntry,
    Score,
    SeasonWrapUp,
    Seat,
    SlackMessage,
)
from slackapp.db.retention import Retention, prune
from slackapp.delivery.outbox import notice
from tests.databases import migrated_database
from tests.operate.test_startup import varulv

NOW = datetime(2026, 4, 15, 12, tzinfo=UTC)
MONTHLY, QUARTERLY = "C0MONTH", "C0QUARTER"


@pytest.fixture
def engine(postgres: str) -> Iterator[Engine]:
    engine = make_engine(migrated_database(postgres, "retention"))
    with Session(engine) as session, session.begin():
        session.add(
            ChannelSettings(
                team_id="T0001",
                channel_id=QUARTERLY,
                night_seconds=120,
                day_seconds=300,
                vote_seconds=120,
                bots_allowed=True,
                season="quarter",
                updated_by="U0001",
            )
        )
        session.add(Score(team_id="T0001", channel_id=MONTHLY, user_id="U0001", games=9, points=7))
        session.add(SeasonWrapUp(team_id="T0001", channel_id=MONTHLY, season="2025-10"))
    yield engine
    engine.dispose()


def game(engine: Engine, phase: str, ended_days_ago: float, channel: str = MONTHLY) -> int:
    """A game with a seat, a ballot, a message and an outbox entry, ended that long before NOW
    (a running one: opened then)."""
    at = NOW - timedelta(days=ended_days_ago)
    with Session(engine) as session, session.begin():
        row = Game(
            team_id="T0001",
            channel_id=channel,
            host_user_id="U0001",
            phase=phase,
            seed=1,
            night_seconds=120,
            day_seconds=300,
            vote_seconds=120,
            deadline=at if phase in ("night", "day", "vote") else None,
            finished_at=at if phase == "over" else None,
            created_at=at,
            updated_at=at,
        )
        row.seats = [
            Seat(position=0, user_id="U0001", display_name="alva", dealt="werewolf"),
            Seat(position=1, user_id="U0002", display_name="bengt", dealt="seer"),
        ]
        session.add(row)
        session.flush()
        session.add(
            Ballot(seat_id=row.seats[0].id, game_id=row.id, voter_key="U0001", target="U0002")
        )
        session.add(
            SlackMessage(stream=row.id, surface="lobby", channel=channel, ts="1.2", version=1)
        )
        session.add(
            OutboxEntry(
                stream=row.id,
                team_id=row.team_id,
                surface="lobby",
                version=1,
                channel=channel,
                text="x",
            )
        )
        session.flush()
        # updated_at follows every change: set it last, as the game's last step would have.
        row.updated_at = at
        return row.id


def rows(engine: Engine, model: type, game_id: int | None = None) -> int:
    query = select(func.count()).select_from(model)
    if game_id is not None:
        key = "stream" if hasattr(model, "stream") else "game_id"  # a game's stream is its id
        query = query.where(getattr(model, key) == game_id)
    with Session(engine) as session:
        return int(session.scalar(query) or 0)


def test_a_channels_notices_are_pruned_once_as_old_as_a_pruned_game(engine: Engine) -> None:
    """A notice is a stream no game carries, so no game's deletion takes it along, and it is
    as old as its last entry (its author told privately later); a running game's old entries
    are its own, and stay. What a landing or a claim wrote for a stream deleted meanwhile goes
    too (no foreign key refuses it)."""
    old, recent, stray, told = 2_000_001, 2_000_002, 2_000_003, 2_000_004
    running = game(engine, "night", 120)
    with Session(engine) as session, session.begin():
        session.execute(
            update(OutboxEntry)
            .where(OutboxEntry.stream == running)
            .values(created_at=NOW - timedelta(days=120))
        )
        session.add_all(
            [
                SlackMessage(stream=stray, surface="lobby", channel="C0GONE", ts="3.0",
                             version=1),
                DeliveryLease(stream=stray, holder="gone", until=NOW - timedelta(days=2)),
                DeliveryLease(stream=recent, holder="here", until=NOW + timedelta(hours=1)),
            ]
        )  # fmt: skip
        for stream, days in ((old, 91), (recent, 89), (told, 91)):
            written = NOW - timedelta(days=days)
            session.add_all(
                [
                    OutboxEntry(stream=stream, team_id="T0001", surface="notice:settings:1",
                                version=1, channel="C0NOTICE", text="the settings changed",
                                created_at=written, done_at=written),
                    SlackMessage(stream=stream, surface="notice:settings:1", channel="C0NOTICE",
                                 ts=f"{stream}.0", version=1),
                ]
            )  # fmt: skip
        # refused 91 days ago, its author told two days later: it is as old as its last word
        session.add(
            OutboxEntry(stream=told, team_id="T0001", surface="tell:U0001:1", version=1,
                        user_id="U0001", text="the channel was not told",
                        created_at=NOW - timedelta(days=89))
        )  # fmt: skip
    prune(sessionmaker(engine), NOW, days=90)
    assert [rows(engine, model, old) for model in (OutboxEntry, SlackMessage)] == [0, 0]
    assert [rows(engine, model, recent) for model in (OutboxEntry, SlackMessage)] == [1, 1]
    assert [rows(engine, model, told) for model in (OutboxEntry, SlackMessage)] == [2, 1]
    assert rows(engine, OutboxEntry, running) == 1, "a running game's entries are its own"
    assert [rows(engine, model, stray) for model in (SlackMessage, DeliveryLease)] == [0, 0]
    assert rows(engine, DeliveryLease, recent) == 1, "a live lease stays"


def test_old_ended_games_are_pruned_and_scores_seasons_and_running_games_stay(
    engine: Engine,
) -> None:
    old_reveal = game(engine, "over", 120)
    old_stop = game(engine, "stopped", 95)
    old_cancel = game(engine, "cancelled", 400)
    recent = game(engine, "over", 30)
    running_for_months = game(engine, "night", 200, channel="C0NIGHT")
    old_lobby = game(engine, "lobby", 300, channel="C0LOBBY")
    # Decided 104 days ago, in January: its quarter's wrap-up (January to March) is still due.
    this_quarter = game(engine, "over", 104, channel=QUARTERLY)
    last_quarter = game(engine, "over", 120, channel=QUARTERLY)  # in December: final

    pruned = prune(sessionmaker(engine), NOW, days=90)

    assert (pruned.games, pruned.kept_for_their_season) == (4, 1)
    gone = [old_reveal, old_stop, old_cancel, last_quarter]
    kept = [recent, running_for_months, old_lobby, this_quarter]
    with Session(engine) as session:
        assert sorted(session.scalars(select(Game.id))) == sorted(kept)
    for game_id in gone:
        for model in (Seat, Ballot, SlackMessage, OutboxEntry):
            assert rows(engine, model, game_id) == 0, (model, game_id)
    for game_id in kept:
        assert rows(engine, Seat, game_id) == 2
        assert rows(engine, Ballot, game_id) == 1
    with Session(engine) as session:
        score = session.get(Score, ("T0001", MONTHLY, "U0001"))
        assert score is not None and (score.games, score.points) == (9, 7)
        assert session.get(SeasonWrapUp, ("T0001", MONTHLY, "2025-10")) is not None

    assert prune(sessionmaker(engine), NOW, days=90).games == 0, "nothing more to prune"


def test_the_scheduler_prunes_once_a_day(engine: Engine) -> None:
    clock = [NOW]
    retention = Retention(sessionmaker(engine), days=90, now=lambda: clock[0])
    game(engine, "over", 91)
    first = retention.sweep()
    assert first is not None and first.games == 1
    game(engine, "over", 91)
    clock[0] = NOW + timedelta(hours=23)
    assert retention.sweep() is None, "not again the same day"
    clock[0] = NOW + timedelta(days=1)
    again = retention.sweep()
    assert again is not None and again.games == 1
    assert rows(engine, Game) == 0


def test_varulv_prune_prunes_with_the_configured_days(engine: Engine, tmp_path: Path) -> None:
    days_ago = (datetime.now(UTC) - NOW).days
    game(engine, "stopped", 10 - days_ago)  # ended ten days before the real today
    url = engine.url.render_as_string(hide_password=False)
    kept = varulv(["prune"], {"DATABASE_URL": url}, tmp_path / "default")
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout.startswith("pruned 0 games that ended more than 90 days ago")
    done = varulv(["prune"], {"DATABASE_URL": url, "VARULV_RETENTION_DAYS": "7"}, tmp_path / "7")
    assert done.stdout.startswith("pruned 1 games that ended more than 7 days ago"), done.stderr
    assert rows(engine, Game) == 0


def test_a_notice_that_names_no_change_is_pruned_as_every_notice_is(engine: Engine) -> None:
    """A notice written without saying what changed is still a notice: the prune finds it by
    its own row, as it finds the others, rather than keeping it for ever."""
    with Session(engine) as session, session.begin():
        stream = notice(session.connection(), "T0001", None, "C0NOTICE", "the schedule is set")
        written = NOW - timedelta(days=91)
        session.execute(
            update(OutboxEntry)
            .where(OutboxEntry.stream == stream)
            .values(created_at=written, done_at=written)
        )
    prune(sessionmaker(engine), NOW, days=90)
    assert rows(engine, OutboxEntry, stream) == 0
