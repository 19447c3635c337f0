"""The game rows as a step writes and reads them (``slackapp.db.games``): whatever state the
machine reaches is read back exactly as it was written, and a step writes only what changed."""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, event
from sqlalchemy.orm import Session

from slackapp.db import games
from slackapp.db.engine import make_sessions
from slackapp.db.migrate import upgrade
from slackapp.db.models import Game
from slackapp.game import machine as m
from slackapp.services.uow import commit_step
from tests.game.test_machine import LENGTHS, PEOPLE, T0, night_moves

_channels = itertools.count(1)


@pytest.fixture(scope="module")
def migrated(db: Engine) -> Engine:
    upgrade(db)
    return db


@pytest.fixture
def session(migrated: Engine) -> Iterator[Session]:
    """A session whose work is rolled back at the end: nothing of a test stays behind."""
    with migrated.connect() as connection, connection.begin() as outer:
        with Session(connection, join_transaction_mode="create_savepoint") as within:
            yield within
        outer.rollback()


def opened(session: Session, seed: int) -> games.StoredGame:
    """A new table, its host seated, dealt by ``seed`` when it starts."""
    game = Game(
        team_id="T0ROWS",
        channel_id=f"C{next(_channels):05d}ROW",
        host_user_id="UANNA",
        seed=seed,
        night_seconds=LENGTHS.night_seconds,
        day_seconds=LENGTHS.day_seconds,
        vote_seconds=LENGTHS.vote_seconds,
    )
    session.add(game)
    session.flush()
    table = m.open_table(game.id, game.channel_id, "UANNA", "anna", seed, LENGTHS)
    games.store_new(session, game, table.state)
    stored = games.lock(session.connection(), game.id)
    assert stored is not None and stored.state == table.state
    return stored


CLICKED_AT = st.one_of(st.none(), st.decimals(1, 10**6, places=6))
PAUSES = st.sampled_from([0, 0, 0, 0, 0, 1, 400])
"""Seconds between events: now and then long enough for the phase's deadline to pass."""


MOVE_OF: dict[str, Callable[..., m.Event]] = {
    "peek": m.NightPeek,
    "look": m.NightLook,
    "rob": m.NightRob,
    "swap": m.NightPick,
}
"""The move each kind of night card makes (a Troublemaker picks twice)."""


def forward(state: m.GameState) -> st.SearchStrategy[m.Event]:
    """Events that carry a game through every kind of row a step writes: seats taken, given up
    and renamed, cards dealt, every night move (a Troublemaker's first pick kept while it
    chooses the second), marks and their click times, ballots cast and changed, a DM failed."""
    return _forward(
        state.phase,
        tuple(seat.key for seat in state.seats),
        tuple(seat.key for seat in state.people),
        tuple((key, state.choice_kind(key)) for key in state.awaiting() if key in PEOPLE),
    )


@functools.cache
def _forward(
    phase: m.Phase,
    seats: tuple[str, ...],
    people: tuple[str, ...],
    waiting: tuple[tuple[str, str | None], ...],
) -> st.SearchStrategy[m.Event]:
    person = st.sampled_from(people or ("UANNA",))
    seat = st.sampled_from(seats or ("UANNA",))
    if phase == m.Phase.LOBBY:
        join = st.builds(
            m.Join,
            st.sampled_from([p for p in PEOPLE if p not in seats] or ["UANNA"]),
            st.sampled_from(["bot1", "Bo", "someone"]),  # a bot gives way to a namesake
        )
        fill = st.builds(m.FillWithBots, person)
        if len(seats) < 3:
            return st.one_of(join, fill)
        start = st.builds(m.Start, person, st.just(()), st.just(people))
        leave = [st.builds(m.Leave, person)] if len(people) > 1 else []  # not the last one
        return st.one_of(start, start, join, fill, *leave)
    if phase == m.Phase.NIGHT:
        who = st.sampled_from([key for key, _ in waiting] or ["UANNA"])
        # Each waiting card's own move, as often as all the others together.
        own = [
            st.builds(
                MOVE_OF[kind], st.just(key), *(st.integers(0, 1),) if kind == "peek" else (seat,)
            )
            for key, kind in waiting
            if kind is not None
        ]
        return st.one_of(
            st.one_of(*own) if own else st.builds(m.NightConfirm, who),
            st.one_of(
                *night_moves(who, seat, st.integers(0, 1)),
                st.builds(m.DmFailed, who, st.just("account_inactive")),
            ),
        )
    if phase == m.Phase.DAY:
        return st.builds(m.HeardEnough, person, CLICKED_AT)
    if phase == m.Phase.VOTE:
        return st.builds(m.CastBallot, person, st.one_of(st.none(), seat), CLICKED_AT)
    return st.just(m.Deadline())


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.data())
def test_every_state_the_machine_reaches_is_read_back_as_it_was_written(
    session: Session, data: st.DataObject
) -> None:
    example = session.begin_nested()  # each example's rows rolled back, whatever happens
    try:
        play_and_read_back(session, data)
    finally:
        example.rollback()


def play_and_read_back(session: Session, data: st.DataObject) -> None:
    stored = opened(session, data.draw(st.integers(0, 2**62), label="seed"))
    state, now = stored.state, T0
    for _ in range(data.draw(st.integers(0, 40), label="length")):
        now += timedelta(seconds=data.draw(PAUSES))
        event = m.Deadline() if now > (state.deadline or now) else data.draw(forward(state))
        done = m.step(state, event, now)
        began = state.phase == m.Phase.LOBBY and done.state.phase == m.Phase.NIGHT
        opened_dms = {seat.key: f"D{seat.key}" for seat in done.state.people} if began else None
        changes = games.Changes()
        changes.step(stored, done.state, opened_dms)
        changes.write(session)
        read = games.read(session.connection(), stored.id)
        assert read is not None
        assert read.state == done.state
        assert set(read.seat_ids) == {seat.key for seat in done.state.seats}
        if opened_dms:
            assert {key: read.dm_channels[key] for key in opened_dms} == opened_dms
        stored, state = read, done.state


@contextmanager
def statements(engine: Engine) -> Iterator[Counter[str]]:
    """The kinds of statement (``UPDATE seats``, …) ``engine`` runs meanwhile, counted."""
    seen: Counter[str] = Counter()

    def count(_c: object, _cursor: object, statement: str, *_: object) -> None:
        words = statement.split()
        target = words[2] if words[0] in ("INSERT", "DELETE") else words[1]
        seen[f"{words[0]} {target}"] += 1

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


def writes(seen: Counter[str]) -> set[str]:
    return {kind for kind in seen if kind.split()[0] in ("INSERT", "UPDATE", "DELETE")}


def test_a_ballot_writes_its_ballot_and_its_messages_and_nothing_else(migrated: Engine) -> None:
    sessions = make_sessions(migrated)
    people = ["UANNA", "UBO", "UCIA"]
    with sessions() as session, session.begin():
        stored = opened(session, seed=1)
        state = stored.state
        for user in people[1:]:
            state = m.step(state, m.Join(user, user.lower()), T0).state
        state = m.step(state, m.Start("UANNA", (), tuple(people)), T0).state
        for user in people:
            quiet = state.choice_kind(user) is None
            state = m.step(state, m.NightConfirm(user) if quiet else m.NightSkip(user), T0).state
        for user in people[:2]:  # more than half of the people: the vote opens
            state = m.step(state, m.HeardEnough(user), T0).state
        assert state.phase == m.Phase.VOTE
        changes = games.Changes()
        changes.step(stored, state)
        changes.write(session)
    with statements(migrated) as seen:
        done = commit_step(sessions, stored.id, m.CastBallot("UANNA", "UBO"), lambda: T0)
    assert done is not None and done.shown >= 1
    assert writes(seen) == {"INSERT ballots", "INSERT outbox"}, seen
    with statements(migrated) as seen:
        commit_step(sessions, stored.id, m.CastBallot("UANNA", None), lambda: T0)
    assert writes(seen) == {"INSERT ballots", "INSERT outbox"}, "the same row, upserted"
    with sessions() as session:
        read = games.read(session.connection(), stored.id)
    assert read is not None
    ballot = read.state.seat("UANNA")
    assert ballot is not None and ballot.ballot is not None and ballot.ballot.target is None
