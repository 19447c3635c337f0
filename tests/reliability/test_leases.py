"""Delivery leases, on PostgreSQL and the fake Slack, by a clock the test moves: a lease is
renewed while its holder works, respected by the others meanwhile, and taken over once its
holder stops renewing it (a process on another host that died: no pid to look at)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, event, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db import games
from slackapp.db.engine import make_sessions, outside_transaction, transaction
from slackapp.db.migrate import upgrade
from slackapp.db.models import DeliveryLease, Game, OutboxEntry, SlackMessage
from slackapp.delivery import leases
from slackapp.delivery.deliverer import Deliverer
from slackapp.delivery.outbox import enqueue
from slackapp.delivery.slack import LATE_LANDING_SECONDS, web_client
from slackapp.fakeslack import FakeSlack
from slackapp.game import machine as m
from slackapp.game.effects import LOBBY_BOARD, ClosedView, Show
from slackapp.services import opening
from slackapp.services.game import GameService
from tests.e2e.conftest import BOT_TOKEN
from tests.reliability.support import Held, lobby_game
from tests.waiting import PATIENCE

_channels = itertools.count(1)


class Clock:
    """From the database's now (the outbox's rows are due from then), moved on by the test."""

    def __init__(self) -> None:
        self.at = datetime.now(UTC) + timedelta(seconds=1)

    def __call__(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


@pytest.fixture(scope="module")
def sessions(db: Engine) -> sessionmaker[Session]:
    upgrade(db)
    return make_sessions(db)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def two(
    fake: FakeSlack, sessions: sessionmaker[Session], clock: Clock
) -> Iterator[tuple[Deliverer, Deliverer]]:
    client = web_client(BOT_TOKEN, fake.api_url, wait_out_rate_limits=False)
    # Two holders of one host and pid: only a lapse lets one take over from the other.
    first = Deliverer(sessions, lambda team: client, lambda g, e: None, now=clock)
    second = Deliverer(sessions, lambda team: client, lambda g, e: None, now=clock)
    yield first, second
    first.stop()
    second.stop()


def new_game(fake: FakeSlack, sessions: sessionmaker[Session], text: str) -> tuple[int, str]:
    channel = f"C{next(_channels):04d}LSE"
    return lobby_game(fake, sessions, channel, [Show(LOBBY_BOARD, ClosedView(text))]), channel


def session_channel(sessions: sessionmaker[Session], game_id: int) -> str:
    with sessions() as session:
        return str(session.scalar(select(Game.channel_id).where(Game.id == game_id)))


def lease_of(sessions: sessionmaker[Session], game_id: int) -> tuple[str, datetime] | None:
    with sessions() as session:
        row = session.execute(
            select(DeliveryLease.holder, DeliveryLease.until).where(DeliveryLease.stream == game_id)
        ).one_or_none()
        return None if row is None else (row[0], row[1])


def undelivered(sessions: sessionmaker[Session], game_id: int) -> int:
    with sessions() as session:
        return len(
            session.scalars(
                select(OutboxEntry.id).where(
                    OutboxEntry.stream == game_id, OutboxEntry.done_at.is_(None)
                )
            ).all()
        )


def test_a_lease_is_renewed_while_its_holder_sends_and_taken_over_once_it_lapses(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    clock: Clock,
    two: tuple[Deliverer, Deliverer],
) -> None:
    first, second = two
    game_id, channel = new_game(fake, sessions, "the lobby")
    post = Held(fake, "chat.postMessage", lambda p: p.get("channel") == channel, applied=False)
    with post:
        first.kick(game_id)
        post.wait()  # the first holder is sending
        taken = lease_of(sessions, game_id)
        assert taken is not None and taken[0] == first.holder

        # Time passes beyond the lease it took: its heartbeat renews it meanwhile.
        clock.advance(leases.LEASE_SECONDS * 2)
        wanted = clock() + timedelta(seconds=leases.LEASE_SECONDS)
        fake.wait_for(
            lambda: (lease := lease_of(sessions, game_id)) is not None and lease[1] >= wanted,
            what="the lease renewed",
        )
        second.sweep()
        second.drain(game_id)
        assert lease_of(sessions, game_id) == (first.holder, wanted), "a live lease holds"
        assert undelivered(sessions, game_id) == 1

        first.stop()  # dies: nothing renews its lease any more
        clock.advance(leases.LEASE_SECONDS + 0.001)
        post.release()  # what it had sent never reached Slack
    second.sweep()
    fake.wait_for(lambda: undelivered(sessions, game_id) == 0 or None, what="taken over")
    assert [message.text for message in fake.messages(channel)] == ["the lobby"]


def test_only_dead_holders_of_this_pid_space_are_freed_at_once(
    fake: FakeSlack, sessions: sessionmaker[Session], clock: Clock
) -> None:
    """A dead pid means something only in the pid space it was taken in: a container with
    the same host name (another pid space) keeps its lease until the lease lapses."""
    mine, same_name = new_game(fake, sessions, "mine")[0], new_game(fake, sessions, "other")[0]
    dead_pid = 2**22 + 12_345  # above any pid_max Linux allows by default: no such process
    here = leases.pid_space()
    host_name = here.split("~")[0]
    holders = {mine: f"{here}:{dead_pid}:aaaa", same_name: f"{host_name}~0123456789ab:{dead_pid}:b"}
    with transaction(sessions) as session:
        for game_id, holder in holders.items():
            assert leases.claim(session.connection(), holder, [game_id], clock()) == [game_id]
    alive = leases.new_holder()
    assert alive.startswith(f"{here}:"), "a process's holder names its own pid space"
    with transaction(sessions) as session:
        leases.free_dead_of_host(session.connection(), alive, clock())
    with sessions() as session:
        rows = session.execute(select(DeliveryLease.stream, DeliveryLease.holder)).all()
        left = {game_id: holder for game_id, holder in rows}
    assert mine not in left, "a dead process of this pid space lets go at once"
    assert left[same_name] == holders[same_name], "another pid space's lease waits to lapse"


def test_a_lease_that_lapsed_in_another_hand_leaves_its_messages_unsure(
    fake: FakeSlack, sessions: sessionmaker[Session], clock: Clock, two: tuple[Deliverer, Deliverer]
) -> None:
    """A process on another host that died, or was stopped, may have left a redraw on its way
    to Slack: once its lease lapses, the sweep that finds its stream makes the messages with a
    version still to send unsure for a late landing's time, so the newest is sent once more
    after it. A stream nobody held is not."""
    first, second = two
    lapsed, never_held = (new_game(fake, sessions, "lobby")[0] for _ in range(2))
    for game_id in (lapsed, never_held):
        first.drain(game_id)  # posted: each has its message
        with transaction(sessions) as session:
            game = session.get(Game, game_id)
            assert game is not None
            enqueue(session.connection(), game, [Show(LOBBY_BOARD, ClosedView("redrawn"))])
    with transaction(sessions) as session:  # its holder's last renewal, long ago
        then = clock() - timedelta(seconds=leases.LEASE_SECONDS * 10)
        leases.claim(session.connection(), "elsewhere~0:1:gone", [lapsed], then)
    second.sweep()
    with sessions() as session:
        unsure = dict(
            session.execute(
                select(SlackMessage.stream, SlackMessage.unsure_until).where(
                    SlackMessage.stream.in_([lapsed, never_held])
                )
            ).all()
        )
    at_least = clock() + timedelta(seconds=LATE_LANDING_SECONDS)
    marked = unsure[lapsed]
    assert marked is not None and marked >= at_least, unsure
    assert unsure[never_held] is None, "nobody held it: no call of another's can be on its way"


def test_a_step_leaves_a_lease_that_lapsed_in_another_hand_to_the_sweep_which_marks_it(
    fake: FakeSlack, sessions: sessionmaker[Session], clock: Clock, two: tuple[Deliverer, Deliverer]
) -> None:
    """A click's step (or a drain it kicked) that comes upon a lease lapsed in another's
    hands does not take it, so no takeover goes unmarked: the sweep lets it go once it has
    marked the messages unsure, and then the stream is any process's to claim, once."""
    first, second = two
    game_id = new_game(fake, sessions, "lobby")[0]
    first.drain(game_id)  # posted: the game has its message
    with transaction(sessions) as session:
        game = session.get(Game, game_id)
        assert game is not None
        enqueue(session.connection(), game, [Show(LOBBY_BOARD, ClosedView("redrawn"))])
        then = clock() - timedelta(seconds=leases.LEASE_SECONDS * 10)
        leases.claim(session.connection(), "elsewhere~0:1:gone", [game_id], then)
    with transaction(sessions) as session:
        assert second.take(session.connection(), [game_id]).streams == set(), "not the step's"
    held = lease_of(sessions, game_id)
    assert held is not None and held[0] == "elsewhere~0:1:gone", "still the lapsed holder's"
    second.sweep()
    with sessions() as session:
        marked = session.scalar(
            select(SlackMessage.unsure_until).where(SlackMessage.stream == game_id)
        )
    assert marked is not None and marked >= clock() + timedelta(seconds=LATE_LANDING_SECONDS)
    lease = lease_of(sessions, game_id)
    assert lease is None or lease[0] == second.holder, "let go, or taken up by the sweep's kick"
    channel = session_channel(sessions, game_id)
    fake.wait_for(
        lambda: [m.text for m in fake.messages(channel)] == ["redrawn"] or None,
        what="the newest sent by the process that took the game over",
    )


def test_a_shown_message_left_unsure_by_a_takeover_waits_and_its_drain_ends(
    fake: FakeSlack, sessions: sessionmaker[Session], clock: Clock, two: tuple[Deliverer, Deliverer]
) -> None:
    """Its newest version is shown and due again (an unsure landing before), and a takeover
    makes it unsure for longer: the drain puts its versions off until then and ends, rather
    than finding the stream due and reading it again and again."""
    first, second = two
    game_id = new_game(fake, sessions, "lobby")[0]
    first.drain(game_id)
    with transaction(sessions) as session:  # shown, yet due again: as an unsure landing leaves it
        session.execute(
            update(OutboxEntry)
            .where(OutboxEntry.stream == game_id)
            .values(done_at=None, due_at=clock() - timedelta(seconds=1))
        )
        then = clock() - timedelta(seconds=leases.LEASE_SECONDS * 10)
        leases.claim(session.connection(), "elsewhere~0:1:gone", [game_id], then)
    second.sweep()  # finds the lapsed lease: unsure for a late landing's time
    done = threading.Event()

    def draining() -> None:
        second.drain(game_id)
        done.set()

    threading.Thread(target=draining, daemon=True).start()
    assert done.wait(PATIENCE), "the drain went on reading the stream"
    with sessions() as session:
        due = session.scalar(select(OutboxEntry.due_at).where(OutboxEntry.stream == game_id))
        unsure = session.scalar(
            select(SlackMessage.unsure_until).where(SlackMessage.stream == game_id)
        )
    assert unsure is not None and due == unsure, "its versions wait for that time"


class NoAlarm:
    def arm(self, game_id: int, at: datetime) -> None:
        pass

    def disarm(self, game_id: int) -> None:
        pass


def test_a_steps_first_post_follows_its_commit_with_no_claim_between(
    fake: FakeSlack,
    db: Engine,
    sessions: sessionmaker[Session],
    clock: Clock,
    two: tuple[Deliverer, Deliverer],
) -> None:
    """``/varulv``'s step takes its game's lease in its own statement, and the deliverer
    posts its lobby as the step handed it over, in memory: between the commit and the post,
    nothing claims the lease, writes or reads the outbox back (only the heartbeat, renewing
    leases every 0.75 s, may run a transaction meanwhile)."""
    first, _ = two
    steps = GameService(sessions, m.Lengths(120, 300, 120), first, NoAlarm(), clock)
    channel = f"C{next(_channels):04d}LSE"
    fake.add_channel(channel, channel.lower())
    sent: list[str] = []
    values: list[object] = []  # each statement's parameters, to tell this game's from others'

    def seen(
        conn: Connection, _cursor: object, statement: str, parameters: object, *_: object
    ) -> None:
        alone = conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT"
        sent.append(("(autocommit) " if alone else "") + " ".join(statement.split()))
        values.append(parameters)

    def committed(_conn: object) -> None:
        sent.append("COMMIT")
        values.append(None)

    post = Held(fake, "chat.postMessage", lambda p: p.get("channel") == channel, applied=True)
    event.listen(db, "before_cursor_execute", seen)
    event.listen(db, "commit", committed)
    try:
        with post:
            assert steps.open_table("T0001", channel, "U0HOST", "host") is None
            post.wait()
            at_post = list(sent)
    finally:
        event.remove(db, "before_cursor_execute", seen)
        event.remove(db, "commit", committed)
    # The usual /varulv writes its game, lobby and lease in one statement that commits alone.
    (step,) = [n for n, s in enumerate(at_post) if "INSERT INTO outbox" in s]
    assert at_post[step].startswith("(autocommit) WITH game AS (INSERT INTO games"), at_post
    assert "INSERT INTO delivery_leases" in at_post[step], at_post[step]
    game = steps_game(sessions, channel)
    # Only this game's: a deliverer of a test before may still be recording its last landing.
    touched = [
        s
        for s, given in zip(at_post[step + 1 :], values[step + 1 :], strict=False)
        if ("delivery_leases" in s or "outbox" in s) and names(given, game)
    ]
    heartbeat = [s for s in touched if s.startswith("UPDATE delivery_leases")]
    after = [s for s in touched if s not in heartbeat]
    assert all(s.startswith("(autocommit) ") for s in after), after
    assert not any("INSERT INTO delivery_leases" in s for s in after), after
    assert not any(s.startswith(("(autocommit) INSERT", "(autocommit) UPDATE")) for s in after)
    assert not any("SELECT outbox." in s for s in after), "the lobby goes from memory"
    fake.wait_for(lambda: undelivered(sessions, steps_game(sessions, channel)) == 0 or None)


def names(parameters: object, stream: int) -> bool:
    """Whether a statement's parameters give ``stream`` as a value (alone, or in a list)."""
    if isinstance(parameters, dict):
        return any(names(value, stream) for value in parameters.values())
    if isinstance(parameters, list | tuple):
        return any(names(value, stream) for value in parameters)
    return isinstance(parameters, int) and not isinstance(parameters, bool) and parameters == stream


def steps_game(sessions: sessionmaker[Session], channel: str) -> int:
    with sessions() as session:
        return int(session.scalars(select(Game.id).where(Game.channel_id == channel)).one())


def test_a_lease_is_taken_while_a_step_holds_its_games_row(
    fake: FakeSlack, db: Engine, sessions: sessionmaker[Session], clock: Clock
) -> None:
    """A step holds its game's row ``FOR NO KEY UPDATE``: a lease (or anything else that
    refers to the game) is written meanwhile without waiting for it, so a step that takes the
    lease too never closes a cycle of waits with a deliverer claiming it."""
    game_id, _ = new_game(fake, sessions, "the lobby")
    with db.connect() as stepping, stepping.begin():
        assert games.lock(stepping, game_id) is not None
        with db.connect() as claiming, claiming.begin():
            claiming.execute(text("SET LOCAL lock_timeout = '1ms'"))  # waiting at all fails
            assert leases.claim(claiming, "another:1:x", [game_id], clock()) == [game_id]


def test_a_lease_that_lapsed_before_its_drain_began_is_not_read_as_held(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    clock: Clock,
    two: tuple[Deliverer, Deliverer],
) -> None:
    """A step took the game's lease, but no drain thread came for it before the lease lapsed,
    and another process took the game over: the late drain checks the lease before it reads,
    and sends nothing alongside the other."""
    first, second = two
    game_id, channel = new_game(fake, sessions, "the lobby")
    with transaction(sessions) as session:
        taken = first.take(session.connection(), [game_id])
    assert taken.streams == {game_id}
    clock.advance(leases.LEASE_SECONDS + 0.001)  # never renewed while it waited: lapsed
    post = Held(fake, "chat.postMessage", lambda p: p.get("channel") == channel, applied=True)
    with post:
        second.sweep()  # finds the lapsed lease, lets it go and takes the game up
        post.wait()  # the other process took it over: Slack has the post, the answer waits
        first.drain_many([game_id], leased={game_id})  # the late drain
        lease = lease_of(sessions, game_id)
        assert lease is not None and lease[0] == second.holder
    fake.wait_for(lambda: undelivered(sessions, game_id) == 0 or None, what="delivered")
    assert [message.text for message in fake.messages(channel)] == ["the lobby"]


def test_a_lobby_handed_over_in_memory_is_read_again_if_written_to_before_its_drain(
    fake: FakeSlack, sessions: sessionmaker[Session], clock: Clock
) -> None:
    """A new table's lobby goes to the deliverer in memory; should someone join before a
    drain thread takes it up, the lobby is read from the database instead, and its first post
    already shows them (never the lobby as it was, then a redraw)."""
    client = web_client(BOT_TOKEN, fake.api_url, wait_out_rate_limits=False)
    deliverer = Deliverer(
        sessions, lambda team: client, lambda g, e: None, now=clock, drain_threads=1
    )
    steps = GameService(sessions, m.Lengths(120, 300, 120), deliverer, NoAlarm(), clock)
    busy, quick = (f"C{next(_channels):04d}LSE" for _ in range(2))
    for channel in (busy, quick):
        fake.add_channel(channel, channel.lower())
    joining = "U0JOINSQUICK"
    since = len(fake.calls)
    held = Held(fake, "chat.postMessage", lambda p: p.get("channel") == busy, applied=False)
    try:
        with held:
            assert steps.open_table("T0001", busy, "U0HOST", "host") is None
            assert held.reached.wait(30), "the one drain thread waits on the busy lobby's post"
            assert steps.open_table("T0001", quick, "U0HOST", "host") is None  # in memory
            assert steps.act(steps_game(sessions, quick), m.Join(joining, "quick")) is None
        fake.wait_for(lambda: undelivered(sessions, steps_game(sessions, quick)) == 0 or None)
    finally:
        deliverer.stop()
    posts = [
        call
        for call in fake.calls[since:]
        if call.method in ("chat.postMessage", "chat.update")
        and call.params.get("channel") == quick
    ]
    assert posts and posts[0].method == "chat.postMessage"
    assert joining in str(posts[0].params.get("blocks")), "the first post shows who joined"


class KicksNoted(Deliverer):
    """A deliverer that notes the games its sweep would kick, and kicks none."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kicked: list[int] = []

    def kick(self, game_id: int) -> None:
        self.kicked.append(game_id)


def test_the_sweep_leaves_a_new_game_to_the_step_writing_it(
    fake: FakeSlack, sessions: sessionmaker[Session], clock: Clock
) -> None:
    """Between the commit of a new table and its hand-over, the game is due and leased to this
    process, which is not delivering it yet: the sweep must leave it be, or its drain could
    post the lobby before the hand-over posts it again from memory."""
    deliverer = KicksNoted(sessions, lambda team: None, lambda g, e: None, now=clock)
    channel = f"C{next(_channels):04d}LSE"
    fake.add_channel(channel, channel.lower())
    with outside_transaction(sessions) as session:
        connection = session.connection()
        known = opening.read(connection, "T0001", channel, "U0HOST", m.Lengths(120, 300, 120))
        lease = deliverer.new_lease(known.game_id)
        args = ("T0001", channel, "U0HOST", "host", None, None)
        written = opening.open_new(connection, known, *args, lease)
    assert written is not None and undelivered(sessions, written.game.id) == 1
    deliverer.sweep()
    assert written.game.id not in deliverer.kicked, "left to its hand-over"
    clock.advance(leases.LEASE_SECONDS + 1)  # should the hand-over never come
    deliverer.sweep()
    assert written.game.id in deliverer.kicked, "taken up once its lease lapsed"


def test_a_lapsed_lease_is_taken_over_however_many_streams_this_process_is_busy_with(
    fake: FakeSlack, sessions: sessionmaker[Session], clock: Clock
) -> None:
    """The sweep lists at most a thousand due streams, and a process in a storm may hold that
    many of its own: a stream whose lease lapsed in another's hands is still taken over at the
    sweep, whatever its id, or its game would wait out the storm."""
    busy = KicksNoted(sessions, lambda team: None, lambda g, e: None, now=clock)
    lapsed = 9_000_000
    with transaction(sessions) as session:
        session.execute(
            text(
                "INSERT INTO outbox (stream, team_id, surface, version, channel, text, attempts,"
                " due_at) SELECT s, 'T0001', 'lobby', 1, 'C0BUSY', 'busy', 0, :now"
                " FROM generate_series(8000000, 8001100) AS s"
                " UNION ALL SELECT :lapsed, 'T0001', 'lobby', 1, 'C0LAPSED', 'lapsed', 0, :now"
            ),
            {"now": clock() - timedelta(seconds=1), "lapsed": lapsed},
        )
        session.execute(
            text(
                "INSERT INTO delivery_leases (stream, holder, until)"
                " SELECT s, :busy, :later FROM generate_series(8000000, 8001100) AS s"
                " UNION ALL SELECT :lapsed, 'elsewhere~0:1:gone', :earlier"
            ),
            {
                "busy": busy.holder,
                "later": clock() + timedelta(seconds=60),
                "earlier": clock() - timedelta(seconds=60),
                "lapsed": lapsed,
            },
        )
    try:
        busy.sweep()
        assert lapsed in busy.kicked, "taken over and kicked"
        assert lease_of(sessions, lapsed) is None, "let go, for any process to claim"
    finally:
        with transaction(sessions) as session:
            session.execute(text("DELETE FROM delivery_leases WHERE stream >= 8000000"))
            session.execute(text("DELETE FROM outbox WHERE stream >= 8000000"))
