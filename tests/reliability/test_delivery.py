"""The deliverer in process, on PostgreSQL and the fake Slack: newest version per message, no
lock held while Slack answers, retries, failures reported to the machine, one deliverer per
game, and what a dead process left undelivered picked up by another."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import Connection, Engine, Executable, create_engine, event, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import make_sessions, sqlalchemy_url, transaction
from slackapp.db.migrate import upgrade
from slackapp.db.models import DeliveryLease, Game, OutboxEntry, Seat, SlackMessage
from slackapp.delivery.deliverer import UNDELIVERABLE, Deliverer
from slackapp.delivery.leases import CLAIM, RENEW
from slackapp.delivery.outbox import enqueue
from slackapp.delivery.pacing import POST_BURST, Limit, Pacer
from slackapp.delivery.policy import MAX_ATTEMPTS, backoff
from slackapp.delivery.reading import UNDELIVERED
from slackapp.delivery.sending import utc_now
from slackapp.delivery.slack import web_client
from slackapp.fakeslack import FakeSlack
from slackapp.fakeslack.webapi import Answerer, ApiAnswer, ApiRequest
from slackapp.game import machine as m
from slackapp.game.effects import LOBBY_BOARD, ClosedView, Effect, Say, Show
from tests import faults
from tests.e2e.conftest import BOT_TOKEN
from tests.reliability.support import Clock, Held, lobby_game
from tests.waiting import until

pytestmark = pytest.mark.long(14)

_channels = itertools.count(1)


@pytest.fixture(scope="module")
def sessions(db: Engine) -> sessionmaker[Session]:
    upgrade(db)
    return make_sessions(db)


class Reports:
    def __init__(self) -> None:
        self.events: list[tuple[int, m.Event]] = []

    def __call__(self, game_id: int, event: m.Event) -> None:
        self.events.append((game_id, event))


@pytest.fixture
def reports() -> Reports:
    return Reports()


def new_deliverer(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    reports: Reports,
    now: Callable[[], datetime] = utc_now,
    pacer: Pacer | None = None,
) -> Deliverer:
    """A deliverer whose client hands every 429 to it rather than waiting it out itself."""
    client = web_client(BOT_TOKEN, fake.api_url, wait_out_rate_limits=False)
    return Deliverer(sessions, lambda team: client, reports, now=now, pacer=pacer)


@pytest.fixture
def deliverer(
    fake: FakeSlack, sessions: sessionmaker[Session], reports: Reports
) -> Iterator[Deliverer]:
    deliverer = new_deliverer(fake, sessions, reports)
    yield deliverer
    deliverer.stop()


def new_game(fake: FakeSlack, sessions: sessionmaker[Session]) -> tuple[int, str]:
    channel = f"C{next(_channels):04d}DLV"
    return lobby_game(fake, sessions, channel), channel


def show(sessions: sessionmaker[Session], game_id: int, *effects: Effect) -> None:
    with transaction(sessions) as session:
        game = session.get(Game, game_id)
        assert game is not None
        enqueue(session.connection(), game, effects)


def closed(text: str) -> Show:
    return Show(LOBBY_BOARD, ClosedView(text))


def delivered(sessions: sessionmaker[Session], game_id: int) -> bool:
    with sessions() as session:
        left = session.scalar(
            select(OutboxEntry.id).where(
                OutboxEntry.stream == game_id, OutboxEntry.done_at.is_(None)
            )
        )
        return left is None


def drained(sessions: sessionmaker[Session], game_id: int, timeout: float = 60.0) -> None:
    """Once the game's outbox is empty; the database tells no one, so it is looked at again
    and again (the bound is only how long a test that fails takes to say so)."""
    until(lambda: delivered(sessions, game_id), "the outbox to be delivered", timeout)


def leased(sessions: sessionmaker[Session], game_id: int) -> bool:
    with sessions() as session:
        return session.get(DeliveryLease, game_id) is not None


def texts(fake: FakeSlack, channel: str) -> list[str]:
    return [message.text for message in fake.messages(channel)]


def test_only_the_newest_version_is_shown_and_a_message_is_posted_once(
    fake: FakeSlack, sessions: sessionmaker[Session], deliverer: Deliverer
) -> None:
    game_id, channel = new_game(fake, sessions)
    show(sessions, game_id, closed("one"), closed("two"), closed("three"))
    deliverer.drain(game_id)
    assert texts(fake, channel) == ["three"], "superseded redraws are never sent"
    show(sessions, game_id, closed("four"), Say("a line"))
    deliverer.drain(game_id)
    assert texts(fake, channel) == ["four", "a line"], "the same message, redrawn in place"
    with sessions() as session:
        failures = session.scalars(
            select(OutboxEntry.failure)
            .where(OutboxEntry.stream == game_id, OutboxEntry.surface == LOBBY_BOARD)
            .order_by(OutboxEntry.version)
        ).all()
        assert failures == ["superseded", "superseded", None, None]
        shown = session.get(SlackMessage, (game_id, LOBBY_BOARD))
        assert shown is not None and shown.version == 4


def test_an_older_version_never_paints_over_a_newer_one(
    fake: FakeSlack, sessions: sessionmaker[Session], deliverer: Deliverer
) -> None:
    game_id, channel = new_game(fake, sessions)
    show(sessions, game_id, closed("new"))
    deliverer.drain(game_id)
    with transaction(sessions) as session:  # as if a newer picture were on screen already
        session.execute(text("UPDATE messages SET version = 9 WHERE stream = :g"), {"g": game_id})
    show(sessions, game_id, closed("stale"))  # version 2 < 9 shown
    deliverer.drain(game_id)
    assert texts(fake, channel) == ["new"]
    assert delivered(sessions, game_id)


def test_no_lock_is_held_while_slack_answers(
    fake: FakeSlack, sessions: sessionmaker[Session], deliverer: Deliverer
) -> None:
    game_id, _ = new_game(fake, sessions)
    show(sessions, game_id, closed("slow"))
    worker = threading.Thread(target=deliverer.drain, args=(game_id,))
    with Held(fake, "chat.postMessage", applied=True) as held:
        worker.start()
        held.wait()  # the post is with Slack now
        with transaction(sessions) as session:
            session.execute(text("SET LOCAL lock_timeout = '100ms'"))
            locked = session.execute(
                text("SELECT id FROM games WHERE id = :g FOR UPDATE"), {"g": game_id}
            ).scalar_one()
            assert locked == game_id, "a step can lock the game while its message is with Slack"
            session.execute(
                text("SELECT * FROM outbox WHERE stream = :g FOR UPDATE"), {"g": game_id}
            )
    worker.join(60)
    assert delivered(sessions, game_id)


class Gate:
    """The first call to ``method`` waits at the stand-in, before Slack acts on it, until the
    gate is opened."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.reached = threading.Event()
        self.opened = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, request: ApiRequest, answer: Answerer) -> ApiAnswer:
        with self._lock:
            mine = request.method == self.method and not self.reached.is_set()
            if mine:
                self.reached.set()
        if mine:
            self.opened.wait(60)
        return answer(request)


def test_a_message_with_slack_does_not_hold_back_the_games_others_nor_race_itself(
    fake: FakeSlack, sessions: sessionmaker[Session], deliverer: Deliverer
) -> None:
    """The board's redraw is slow at Slack; the reveal, a message of its own, goes out while
    it is in flight. A newer redraw of the board waits for the one in flight, then follows."""
    game_id, channel = new_game(fake, sessions)
    show(sessions, game_id, closed("board 1"))
    deliverer.drain(game_id)
    before = len(fake.calls)
    held = Gate("chat.update")
    fake.api.hooks.append(held)
    try:
        show(sessions, game_id, closed("board 2"))
        deliverer.kick(game_id)
        assert held.reached.wait(60), "the board was never redrawn"  # it is with Slack now
        show(sessions, game_id, Say("the reveal"), closed("board 3"))
        deliverer.kick(game_id)
        fake.wait_for(
            lambda: [c for c in fake.calls[before:] if c.params.get("text") == "the reveal"],
            timeout=60,
            what="the reveal posted while the board's redraw is with Slack",
        )
    finally:
        held.opened.set()
        fake.api.hooks.remove(held)
    drained(sessions, game_id)
    calls = [c for c in fake.calls[before:] if c.method in ("chat.postMessage", "chat.update")]
    answered = [(c.method, c.params.get("text")) for c in calls]
    assert answered == [
        ("chat.postMessage", "the reveal"),
        ("chat.update", "board 2"),
        ("chat.update", "board 3"),
    ], "the reveal answered first; the board's versions one after the other, in order"
    assert texts(fake, channel) == ["board 3", "the reveal"]


@pytest.mark.parametrize("newer", ["board 3", None])
def test_a_game_read_again_while_its_drain_holds_it_is_not_claimed_again(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    reports: Reports,
    db: Engine,
    newer: str | None,
) -> None:
    """Kicked while its board's redraw is with Slack (given a newer board, or nothing new),
    and read again once that lands (with a board to send, or nothing left), the game is read
    on the lease its drain took: one claim in all, not one a read."""
    # A clock that stands ahead of every entry's due time: however late the heartbeat runs on
    # a loaded machine, the lease never nears its end, so only the rule decides a claim.
    clock = Clock(datetime.now(UTC) + timedelta(minutes=1))
    deliverer = new_deliverer(fake, sessions, reports, now=clock)
    game_id, channel = new_game(fake, sessions)
    show(sessions, game_id, closed("board 1"))
    deliverer.drain(game_id)
    claims: list[str] = []

    def counted(connection: Connection, cursor: Any, statement: str, *_: Any) -> None:
        if "INSERT INTO delivery_leases" in statement:
            claims.append(statement)

    held = Gate("chat.update")
    fake.api.hooks.append(held)
    event.listen(db, "before_cursor_execute", counted)
    held_reads = held_reads_so_far()
    try:
        show(sessions, game_id, closed("board 2"))
        deliverer.kick(game_id)
        assert held.reached.wait(60), "the board was never redrawn"
        if newer is not None:
            show(sessions, game_id, closed(newer))
        deliverer.kick(game_id)  # while the drain holds it: read again, and held back
    finally:
        held.opened.set()
        drained(sessions, game_id)
        until(lambda: not leased(sessions, game_id), "the drain to let the game go", 60)
        event.remove(db, "before_cursor_execute", counted)
        fake.api.hooks.remove(held)
        deliverer.stop()
    assert texts(fake, channel) == [newer or "board 2"]
    assert len(claims) == 1, "claimed when its drain began, and never again while it held it"
    assert held_reads_so_far() > held_reads, "/metrics counts the reads on leases it held"


def held_reads_so_far() -> float:
    return REGISTRY.get_sample_value("varulv_delivery_reads_total", {"how": "held"}) or 0.0


def test_throttling_is_retried_after_retry_after(
    fake: FakeSlack, sessions: sessionmaker[Session], reports: Reports
) -> None:
    game_id, channel = new_game(fake, sessions)
    show(sessions, game_id, closed("later"))
    clock = Clock(datetime.now(UTC))  # the entry is due
    deliverer = new_deliverer(fake, sessions, reports, now=clock)
    try:
        faults.rate_limit(fake, "chat.postMessage", times=1, retry_after=1)
        deliverer.drain(game_id)
        assert texts(fake, channel) == []
        with sessions() as session:
            entry = session.scalars(select(OutboxEntry).where(OutboxEntry.stream == game_id)).one()
            assert entry.attempts == 1 and entry.done_at is None
            assert entry.due_at == clock.at + timedelta(seconds=1), "due when Retry-After says"
        clock.at += timedelta(seconds=0.9)
        deliverer.sweep()
        deliverer.drain(game_id)
        assert texts(fake, channel) == [], "not before its time"
        clock.at += timedelta(seconds=0.1)
        deliverer.sweep()
        drained(sessions, game_id)
        assert texts(fake, channel) == ["later"]
    finally:
        deliverer.stop()


def test_a_version_written_while_its_message_waits_out_retry_after_waits_with_it(
    fake: FakeSlack, sessions: sessionmaker[Session], reports: Reports
) -> None:
    """Only the newest version's wait holds a message back, so a newer one inherits the wait
    and the tries of a failure (a count put off for a turn does not hold a last word back)."""
    game_id, channel = new_game(fake, sessions)
    show(sessions, game_id, closed("first"))
    clock = Clock(datetime.now(UTC))
    deliverer = new_deliverer(fake, sessions, reports, now=clock)
    try:
        faults.rate_limit(fake, "chat.postMessage", times=1, retry_after=60)
        deliverer.drain(game_id)
        show(sessions, game_id, closed("second"))
        deliverer.drain(game_id)
        assert texts(fake, channel) == [], "not before Retry-After"
        with sessions() as session:
            entries = session.scalars(
                select(OutboxEntry)
                .where(OutboxEntry.stream == game_id)
                .order_by(OutboxEntry.version)
            ).all()
            waits = [(entry.attempts, entry.due_at) for entry in entries]
        assert waits == [(1, clock.at + timedelta(seconds=60))] * 2, waits
        clock.at += timedelta(seconds=60)
        deliverer.sweep()
        drained(sessions, game_id)
        assert texts(fake, channel) == ["second"]
    finally:
        deliverer.stop()


def test_a_channel_that_refuses_the_bot_is_reported_and_its_messages_given_up(
    fake: FakeSlack, sessions: sessionmaker[Session], deliverer: Deliverer, reports: Reports
) -> None:
    game_id, channel = new_game(fake, sessions)
    faults.set_unreachable(fake, channel, "not_in_channel")
    show(sessions, game_id, closed("lobby"), Say("a line"))
    deliverer.drain(game_id)
    assert (game_id, m.ChannelUnwritable("not_in_channel")) in reports.events
    assert delivered(sessions, game_id), "nothing to that channel is tried again"


@pytest.mark.parametrize("tried_before", [0, MAX_ATTEMPTS - 1])
def test_a_call_whose_handling_raises_is_put_off_not_sent_again_at_once(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    reports: Reports,
    monkeypatch: pytest.MonkeyPatch,
    tried_before: int,
) -> None:
    """Slack fails the post, and handling that failure raises (a bug, or the database failing
    as it is written down): the lobby stays due, but after a backoff, as a failed try is, so
    the drain ends instead of posting it again and again; after its last try it is given up."""
    clock = Clock(datetime.now(UTC) + timedelta(minutes=1))  # the entry is due, and stays so
    deliverer = new_deliverer(fake, sessions, reports, now=clock)
    game_id, _ = new_game(fake, sessions)
    faults.fail_next(fake, "chat.postMessage", "internal_error")

    def failing(*_: object) -> None:
        raise RuntimeError("the outcome could not be written down")

    monkeypatch.setattr(deliverer.sender, "_failed", failing)
    show(sessions, game_id, closed("lobby"))
    with transaction(sessions) as session:
        session.execute(
            update(OutboxEntry).where(OutboxEntry.stream == game_id).values(attempts=tried_before)
        )
    before = len(fake.calls)
    drain = threading.Thread(target=deliverer.drain, args=(game_id,), daemon=True)
    drain.start()
    try:
        drain.join(60)  # only how long a drain that never ends takes to fail the test
        assert not drain.is_alive(), "the drain ended"
    finally:
        deliverer.stop()
    posts = [c for c in fake.calls[before:] if c.method == "chat.postMessage"]
    assert len(posts) == 1, "tried once, not again at once"
    with sessions() as session:
        entry = session.scalars(select(OutboxEntry).where(OutboxEntry.stream == game_id)).one()
    if tried_before < MAX_ATTEMPTS - 1:
        assert entry.done_at is None and entry.attempts == tried_before + 1
        assert entry.due_at == clock.at + timedelta(seconds=backoff(tried_before + 1))
    else:
        assert entry.done_at is not None and entry.failure == UNDELIVERABLE


@pytest.mark.parametrize("error", ["account_inactive", "messages_tab_disabled"])
def test_a_person_whose_dm_fails_is_reported(
    fake: FakeSlack,
    sessions: sessionmaker[Session],
    deliverer: Deliverer,
    reports: Reports,
    error: str,
) -> None:
    """Slack refusing a private message for good (chat.postMessage's ``messages_tab_disabled``
    too: an app whose Messages tab is off can DM no one) is told to the game, which names the
    person as one Varulv cannot reach, rather than left unsaid."""
    game_id, _ = new_game(fake, sessions)
    fake.add_user("U0GONE", "gone")
    with transaction(sessions) as session:
        game = session.get(Game, game_id)
        assert game is not None
        game.seats.append(
            Seat(position=1, user_id="U0GONE", display_name="gone", dm_channel="D0GONE")
        )
    faults.set_unreachable(fake, "D0GONE", error)
    show(sessions, game_id, Show("dm:U0GONE", ClosedView("your card")))
    deliverer.drain(game_id)
    assert reports.events == [(game_id, m.DmFailed("U0GONE", error))]


def test_one_deliverer_at_a_time_and_a_dead_ones_lease_is_taken_over(
    fake: FakeSlack, sessions: sessionmaker[Session], deliverer: Deliverer, reports: Reports
) -> None:
    game_id, channel = new_game(fake, sessions)
    other = new_deliverer(fake, sessions, reports)
    try:
        show(sessions, game_id, closed("once"))
        one_left = threading.Event()

        def drain(one: Deliverer) -> None:
            one.drain(game_id)
            one_left.set()

        with Held(fake, "chat.postMessage", applied=True) as post:
            together = [threading.Thread(target=drain, args=(d,)) for d in (deliverer, other)]
            for thread in together:
                thread.start()
            post.wait()  # one deliverer's post is with Slack, and held there
            assert one_left.wait(60), "the other deliverer left the game to the one holding it"
        for thread in together:
            thread.join(60)
        assert texts(fake, channel) == ["once"]
        assert (
            len(
                [c for c in fake.calls_to("chat.postMessage") if c.params.get("channel") == channel]
            )
            == 1
        )

        # A process of this host that died holding a lease: its work is taken over at once.
        show(sessions, game_id, closed("after a crash"))
        with transaction(sessions) as session:
            session.add(
                DeliveryLease(
                    stream=game_id,
                    holder=f"{deliverer.holder.split(':')[0]}:999999:dead",
                    until=datetime.now(UTC) + timedelta(minutes=5),
                )
            )
        other.drain(game_id)
        assert texts(fake, channel) == ["once"], "a live lease is respected"
        other.sweep()
        # The newest goes out at once; the dead process may have left a redraw on its way, so
        # the message stays unsure, to be drawn once more after a late landing's time.
        fake.wait_for(
            lambda: texts(fake, channel) == ["after a crash"] or None, what="the taken-over redraw"
        )
        with sessions() as session:
            unsure = session.scalar(
                select(SlackMessage.unsure_until).where(SlackMessage.stream == game_id)
            )
        assert unsure is not None and unsure > datetime.now(UTC), "unsure for a late landing"
    finally:
        other.stop()


def test_games_claimed_together_leave_out_only_the_one_held_elsewhere(
    fake: FakeSlack, sessions: sessionmaker[Session], deliverer: Deliverer
) -> None:
    """One claim takes several games at once (as a batch of deadlines does): a live lease
    of another host is respected for its game alone, and the others are shown."""
    games = [new_game(fake, sessions) for _ in range(3)]
    for number, (game_id, _) in enumerate(games):
        show(sessions, game_id, closed(f"table {number}"))
    held_elsewhere = games[1][0]
    with transaction(sessions) as session:
        session.add(
            DeliveryLease(
                stream=held_elsewhere,
                holder="another-host:1:alive",
                until=datetime.now(UTC) + timedelta(minutes=5),
            )
        )
    deliverer.drain_many([game_id for game_id, _ in games])
    assert [texts(fake, channel) for _, channel in games] == [["table 0"], [], ["table 2"]]
    assert not delivered(sessions, held_elsewhere)


def test_the_statements_of_every_drain_are_compiled_once(
    db: Engine, sessions: sessionmaker[Session]
) -> None:
    """SQLAlchemy caches a statement's compiled form only if it has a cache key; one built
    with ``values([...])`` has none and is compiled on every call, a millisecond each. Each
    statement, run twice with other values, leaves one compiled form in the cache it is given
    (``sessions`` migrates the database)."""
    holder, until = "compiled-once", datetime.now(UTC) + timedelta(minutes=5)
    runs: list[tuple[Executable, Callable[[int], Any]]] = [
        (CLAIM, lambda n: [{"of_stream": -s, "h": holder, "u": until} for s in (n, n + 10)]),
        (RENEW, lambda n: {"by": holder, "streams": [-n], "to": until}),
        (UNDELIVERED, lambda n: {"streams": [-n]}),
    ]
    for statement, values in runs:
        compiled: dict[Any, Any] = {}
        with db.connect() as connection:
            cached = connection.execution_options(compiled_cache=compiled)
            for n in (1, 2):
                cached.execute(statement, values(n))
            connection.rollback()
        assert len(compiled) == 1, statement


def test_a_lease_this_process_failed_to_let_go_holds_nothing_back(
    fake: FakeSlack, sessions: sessionmaker[Session], deliverer: Deliverer
) -> None:
    """Letting a game go fails when the database goes away just then, and the lease stays
    behind with this process's name on it: the next sweep takes the game up all the same."""
    game_id, channel = new_game(fake, sessions)
    show(sessions, game_id, closed("shown while the database was away"))
    with transaction(sessions) as session:
        session.add(
            DeliveryLease(
                stream=game_id,
                holder=deliverer.holder,
                until=datetime.now(UTC) + timedelta(minutes=5),
            )
        )
    deliverer.sweep()
    drained(sessions, game_id)
    assert texts(fake, channel) == ["shown while the database was away"]


class Turns(Pacer):
    """The pacer, on the wall clock the stand-in stamps its calls with, noting the moment each
    post to a channel was given."""

    def __init__(self) -> None:
        self._read = threading.local()
        super().__init__(clock=self._clock)
        self.given: dict[str, list[float]] = {}
        self.waits: dict[str, list[float]] = {}

    def _clock(self) -> float:
        self._read.now = time.time()
        return float(self._read.now)

    def post(self, channel: str) -> float:
        wait = super().post(channel)
        self.given.setdefault(channel, []).append(self._read.now + wait)
        self.waits.setdefault(channel, []).append(wait)
        return wait


def test_posts_to_a_channel_are_paced_to_about_one_a_second_after_a_short_burst(
    fake: FakeSlack, sessions: sessionmaker[Session], reports: Reports
) -> None:
    """Slack's limit is the pacer's to keep (its buckets are tested by its own clock); here, the
    deliverer asks it for every post and sends none before the moment it was given, but for
    the moment between reading its own clock and asking. Load only makes posts later, so these
    hold however busy the machine is."""
    turns = Turns()
    deliverer = new_deliverer(fake, sessions, reports, pacer=turns)
    game_id, channel = new_game(fake, sessions)
    other_id, other = new_game(fake, sessions)
    before = len(fake.calls)
    lines = 7
    try:
        show(sessions, game_id, *(Say(f"line {n}") for n in range(lines)))
        show(sessions, other_id, *(Say(f"other {n}") for n in range(POST_BURST)))
        deliverer.start(sweep_seconds=0.1)  # what is put off comes back with the sweep
        deliverer.kick(game_id)
        deliverer.kick(other_id)
        drained(sessions, game_id)
        drained(sessions, other_id)
    finally:
        deliverer.stop()
    posts = [c for c in fake.calls[before:] if c.method == "chat.postMessage" and c.ok]
    at = sorted(c.at for c in posts if c.params.get("channel") == channel)
    assert sorted(texts(fake, channel)) == sorted(f"line {n}" for n in range(lines))
    given = sorted(turns.given[channel])
    assert len(given) == lines, "every post waits its turn, once"
    for index, moment in enumerate(given):
        in_the_second_before = sum(1 for earlier in given[: index + 1] if earlier > moment - 0.99)
        assert in_the_second_before <= POST_BURST, f"turns per second: {given}"
    assert given[-1] - given[0] >= 0.99 * (lines - POST_BURST), f"not paced: {given}"
    # The deliverer reads its own clock a moment before it asks for a turn, so a post may go
    # out that moment early (half a second allowed, for a busy machine); a post that ignored
    # its turn would be a second or more early.
    for sent, turn in zip(at, given, strict=True):
        assert sent >= turn - 0.5, f"a post went out before its turn: {at} against {given}"
    assert turns.waits[other] == [0.0] * POST_BURST, "another channel's burst waits for no one"


def test_updates_are_paced_per_workspace_after_a_burst() -> None:
    clock = [0.0]
    pacer = Pacer(updates=Limit(50 / 60, 50), clock=lambda: clock[0])
    waits = [pacer.update("T1") for _ in range(52)]
    assert waits[:50] == [0.0] * 50, "a burst of a minute's worth goes at once"
    assert waits[50] == pytest.approx(1.2) and waits[51] == pytest.approx(2.4)
    assert pacer.update("T2") == 0.0, "each workspace has its own limit"
    clock[0] = 120.0
    assert pacer.update("T1") == 0.0, "the bucket fills again"


@contextmanager
def answered_together(fake: FakeSlack, method: str, count: int) -> Iterator[None]:
    """Calls of ``method`` wait at the fake Slack until ``count`` of them are there, and are
    then answered at the same instant, as a loaded Slack answers a burst."""
    everyone = threading.Barrier(count)

    def hook(request: ApiRequest, answer: Answerer) -> ApiAnswer:
        if request.method == method:
            everyone.wait(60)
        return answer(request)

    fake.api.hooks.append(hook)
    try:
        yield
    finally:
        fake.api.hooks.remove(hook)


def test_games_whose_calls_land_together_are_let_go_together(
    fake: FakeSlack, sessions: sessionmaker[Session], deliverer: Deliverer, db: Engine
) -> None:
    games = [new_game(fake, sessions) for _ in range(8)]
    for game_id, _ in games:
        show(sessions, game_id, closed("posted"))
    released: list[list[int]] = []

    def counted(connection: Connection, cursor: Any, statement: str, params: Any, *_: Any) -> None:
        recording = "DELETE FROM delivery_leases" in statement and isinstance(params, dict)
        if recording and params.get("release"):  # what one statement recording landings let go
            released.append(list(params["release"]))

    event.listen(db, "before_cursor_execute", counted)
    try:
        with answered_together(fake, "chat.postMessage", len(games)):  # posts answered at once
            deliverer.drain_many([game_id for game_id, _ in games])
    finally:
        event.remove(db, "before_cursor_execute", counted)

    assert sorted(g for batch in released for g in batch) == sorted(g for g, _ in games)
    # Eight posts answered at one instant land within a few milliseconds; on a loaded machine
    # they may spread over several windows, yet never one by one.
    assert len(released) < len(games), "let go together, not one by one as they land"
    with sessions() as session:
        held = select(DeliveryLease.stream).where(DeliveryLease.stream.in_(g for g, _ in games))
        assert session.scalars(held).all() == []
    for game_id, channel in games:
        assert delivered(sessions, game_id)
        assert texts(fake, channel) == ["posted"]


def test_a_post_that_waits_out_retry_after_keeps_its_place_above_the_next(
    fake: FakeSlack, sessions: sessionmaker[Session], reports: Reports
) -> None:
    """A line written after a board to the same channel waits with the board's retry, so the
    channel shows them in the order the step wrote them."""
    game_id, channel = new_game(fake, sessions)
    show(sessions, game_id, closed("first"), Say("second"))
    clock = Clock(datetime.now(UTC))
    deliverer = new_deliverer(fake, sessions, reports, now=clock)
    try:
        faults.rate_limit(fake, "chat.postMessage", times=1, retry_after=1)
        deliverer.drain(game_id)
        assert texts(fake, channel) == [], "neither goes ahead of the other"
        clock.at += timedelta(seconds=1)
        deliverer.sweep()
        drained(sessions, game_id)
        assert texts(fake, channel) == ["first", "second"]
    finally:
        deliverer.stop()


def scans_not_by_stream(plan: dict[str, Any]) -> list[str]:
    """The plan's scans of the outbox that do not begin from a stream (a game's is its id),
    named by type and index."""
    found = []
    if plan.get("Relation Name") == "outbox":
        condition = plan.get("Index Cond") or plan.get("Recheck Cond") or ""
        scans = ("Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan")
        if plan["Node Type"] in scans and "stream" not in condition:
            found.append(f"{plan['Node Type']} {plan.get('Index Name', '')}".strip())
    for inner in plan.get("Plans", []):
        found += scans_not_by_stream(inner)
    return found


def test_a_games_undelivered_entries_are_looked_up_from_the_game(
    fake: FakeSlack, database_url: str, reports: Reports
) -> None:
    """In a storm nearly every entry is undelivered: a look-up that read them all to find one
    game's made every step and drain as slow as the storm was large. Planned with sequential
    scans ruled out (a large outbox rules them out), each scan of the outbox that the steps,
    drains and landings of a game make has the game's stream in its index condition."""
    engine = create_engine(
        sqlalchemy_url(database_url), connect_args={"options": "-c enable_seqscan=off"}
    )
    plans: list[tuple[str, list[str]]] = []

    def explain(conn: Connection, cursor: Any, statement: str, parameters: Any, *rest: Any) -> None:
        if " outbox" in statement and not statement.startswith("EXPLAIN"):
            executemany = rest[-1]
            cursor.execute(
                "EXPLAIN (FORMAT JSON) " + statement, parameters[0] if executemany else parameters
            )
            plans.append((statement, scans_not_by_stream(cursor.fetchone()[0][0]["Plan"])))

    event.listen(engine, "before_cursor_execute", explain)
    sessions = make_sessions(engine)
    deliverer = new_deliverer(fake, sessions, reports)
    try:
        game_id, channel = new_game(fake, sessions)
        show(sessions, game_id, closed("one"), Say("a line"))
        deliverer.drain(game_id)
        show(sessions, game_id, closed("two"))
        deliverer.drain(game_id)
    finally:
        deliverer.stop()
        engine.dispose()
    assert texts(fake, channel) == ["two", "a line"]
    kinds = {statement.split()[0] for statement, _ in plans}
    assert {"INSERT", "SELECT", "WITH"} <= kinds, "steps, reads and landings were planned"
    assert [(statement[:60], scans) for statement, scans in plans if scans] == []
