"""Slack's rate limits with small numbers: the stand-in refuses beyond them, the deliverer waits
out its Retry-After, and the pacing every process shares keeps calls within them."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, event, func, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db.engine import make_sessions, transaction
from slackapp.db.migrate import upgrade
from slackapp.db.models import Game, OutboxEntry
from slackapp.delivery.deliverer import Deliverer
from slackapp.delivery.outbox import answering, outbox_rows, write
from slackapp.delivery.pacing import Limit, Pacer, SharedBuckets, Turn
from slackapp.delivery.slack import web_client
from slackapp.fakeslack import UNLIMITED, Call, FakeSlack, RateLimits
from slackapp.fakeslack import Limit as SlackLimit
from slackapp.fakeslack.grants import HookError
from slackapp.fakeslack.limits import Limiter
from slackapp.game.effects import LOBBY_BOARD, ClosedView, LobbyView, Show, View, settles
from slackapp.game.lines import SeatName
from slackapp.game.settings import Kept
from tests.e2e.conftest import BOT_TOKEN
from tests.reliability.support import Clock, lobby_game
from tests.waiting import until

_channels = itertools.count(1)
_teams = itertools.count(1)


@pytest.fixture(scope="module")
def sessions(db: Engine) -> sessionmaker[Session]:
    upgrade(db)
    return make_sessions(db)


@pytest.fixture
def limited(fake: FakeSlack) -> Iterator[FakeSlack]:
    """The run's stand-in, allowing one chat.update a second after a burst of one."""
    fake.limits = RateLimits(updates=SlackLimit(1.0, 1), posts=None)
    try:
        yield fake
    finally:
        fake.limits = UNLIMITED


def new_game(fake: FakeSlack, sessions: sessionmaker[Session]) -> tuple[int, str]:
    channel = f"C{next(_channels):04d}LIM"
    return lobby_game(fake, sessions, channel), channel


def show(
    sessions: sessionmaker[Session],
    game_ids: list[int],
    text: str,
    answers: tuple[str, str] | None = None,
) -> None:
    """Each game's board, to say ``text``: in one transaction, so all are due at once;
    ``answers``: the redraw answers a click (its response_url, and the copy's ts)."""
    with transaction(sessions) as session:
        for game_id in game_ids:
            game = session.get(Game, game_id)
            assert game is not None
            rows = outbox_rows(game, [Show(LOBBY_BOARD, ClosedView(text))])
            if answers:
                answering(rows, LOBBY_BOARD, *answers)
            write(session.connection(), rows)


def undelivered(sessions: sessionmaker[Session], game_ids: list[int]) -> list[OutboxEntry]:
    with sessions() as session:
        return list(
            session.scalars(
                select(OutboxEntry).where(
                    OutboxEntry.stream.in_(game_ids), OutboxEntry.done_at.is_(None)
                )
            )
        )


def updates_of(calls: list[Call], channel: str) -> list[Call]:
    return [c for c in calls if c.method == "chat.update" and c.params.get("channel") == channel]


def test_the_stand_ins_429_is_waited_out_for_its_retry_after(
    limited: FakeSlack, sessions: sessionmaker[Session]
) -> None:
    """An app that does not pace itself (here: the deliverer given a huge budget) is refused by
    the stand-in as Slack refuses, and tries again once Retry-After has passed on its clock, not
    before: the refused redraw waits in the outbox until then, and goes once the clock is
    there."""
    fake = limited
    client = web_client(BOT_TOKEN, fake.api_url, wait_out_rate_limits=False)
    unpaced = Pacer(updates=Limit(1000.0, 1000))
    clock = Clock(datetime.now(UTC) + timedelta(minutes=1))  # ahead of the rows' own stamps
    deliverer = Deliverer(
        sessions, lambda team: client, lambda g, e: None, pacer=unpaced, now=clock
    )
    games = [new_game(fake, sessions) for _ in range(2)]
    ids = [game_id for game_id, _ in games]
    mine = {channel for _, channel in games}  # the sweep may deliver other tests' leftovers
    slack_seconds = [0.0]  # the stand-in's clock, held too: its budget refills as the test says
    real_limiter, fake.api.limiter = (
        fake.api.limiter,
        Limiter(fake.limits, lambda: slack_seconds[0]),
    )
    try:
        deliverer.start(sweep_seconds=0.1)
        show(sessions, ids, "posted")
        for game_id in ids:
            deliverer.kick(game_id)
        until(lambda: not undelivered(sessions, ids), "both boards posted")
        before = len(fake.calls)
        show(sessions, ids, "redrawn")
        for game_id in ids:  # both redraws at once: one is refused
            deliverer.kick(game_id)

        def refused() -> list[Call]:
            calls = [c for c in fake.calls[before:] if c.params.get("channel") in mine]
            return [c for c in calls if c.method == "chat.update" and c.status == 429]

        until(lambda: refused() and len(waiting(sessions, ids)) == len(refused()), "refused")
        # One at least: a busy run's other tests share the workspace's budget, so maybe both.
        for due in waiting(sessions, ids):
            assert due == clock.at + timedelta(seconds=1), "tried again after Retry-After"
        for _ in range(20):  # a run's other leftovers may take the one turn too: then the next
            clock.at += timedelta(seconds=1)
            slack_seconds[0] += 1.0

            def redrawn_or_put_off() -> bool:
                if not undelivered(sessions, ids):
                    return True
                put_off = waiting(sessions, ids)
                return bool(put_off) and all(due > clock.at for due in put_off)

            until(redrawn_or_put_off, "the boards redrawn, or put off again")
            if not undelivered(sessions, ids):
                break
        assert not undelivered(sessions, ids), "both boards redrawn"
    finally:
        deliverer.stop()
        fake.api.limiter = real_limiter
    for refusal in refused():
        assert refusal.response == {"ok": False, "error": "ratelimited"}
        assert updates_of(fake.calls[before:], str(refusal.params["channel"]))[-1].ok
    for _, board in games:
        assert fake.messages(board)[-1].text == "redrawn"


def waiting(sessions: sessionmaker[Session], ids: list[int]) -> list[datetime]:
    """When each of the games' undelivered redraws that were tried already is due again."""
    with sessions() as session:
        return list(
            session.scalars(
                select(OutboxEntry.due_at).where(
                    OutboxEntry.stream.in_(ids),
                    OutboxEntry.done_at.is_(None),
                    OutboxEntry.attempts > 0,
                )
            )
        )


def test_a_redraw_answering_a_click_spends_no_update_unless_its_url_is_refused(
    limited: FakeSlack, sessions: sessionmaker[Session]
) -> None:
    fake = limited
    client = web_client(BOT_TOKEN, fake.api_url, wait_out_rate_limits=False)
    deliverer = Deliverer(sessions, lambda team: client, lambda g, e: None)
    game_id, channel = new_game(fake, sessions)
    try:
        deliverer.start(sweep_seconds=0.1)
        show(sessions, [game_id], "posted")
        deliverer.kick(game_id)
        until(lambda: not undelivered(sessions, [game_id]), "the board posted")
        board = fake.messages(channel)[-1]
        hook = fake.grants.issue_hook("U0HOST", channel, board.ts)  # a click on the board
        url = f"{fake.people.response_base_url}/response/{hook}"
        before = len(fake.calls)
        show(sessions, [game_id], "answered in place", answers=(url, board.ts))
        deliverer.kick(game_id)
        until(lambda: not undelivered(sessions, [game_id]), "the board redrawn")
        assert fake.message(channel, board.ts).text == "answered in place"
        assert updates_of(fake.calls[before:], channel) == [], "no chat.update spent"
        with pytest.raises(HookError):
            while True:  # the URL's other uses, spent elsewhere
                fake.grants.use_hook(hook)
        show(sessions, [game_id], "updated after all", answers=(url, board.ts))
        deliverer.kick(game_id)
        until(lambda: not undelivered(sessions, [game_id]), "the board redrawn again")
    finally:
        deliverer.stop()
    assert fake.message(channel, board.ts).text == "updated after all"
    assert [c.ok for c in updates_of(fake.calls[before:], channel)] == [True], "updated instead"


def database_clock(db: Engine) -> float:
    """The database's clock, the one the shared buckets go by, in epoch seconds."""
    with db.connect() as connection:
        return float(connection.scalar(text("SELECT extract(epoch FROM clock_timestamp())")))


class Turns:
    """When the turns a pacer hands out fall, on the database's clock: each call is read
    between two readings of that clock, so its turn lies between them plus its wait."""

    def __init__(self, db: Engine) -> None:
        self.db = db
        self.first: tuple[float, float] = (0.0, 0.0)
        self.last_span = 0.0
        """How long the call before took, from before it to after it on the database's clock."""

    def seen(self, call: Callable[[], float]) -> tuple[float, float, float]:
        """The call's wait, and the earliest and latest moment its turn can be at."""
        before = database_clock(self.db)
        wait = call()
        after = database_clock(self.db)
        self.last_span = after - before
        return wait, before + wait, after + wait

    def start(self, call: Callable[[], float]) -> float:
        """The first call: the one the turns after it are counted from."""
        wait, earliest, latest = self.seen(call)
        self.first = (earliest - wait, latest - wait)
        return wait

    def at(self, call: Callable[[], float], due: float, hint: bool = False) -> None:
        """The call's turn is ``due`` seconds after the first call. A ``hint`` (when to ask
        again, for a call refused from what the pacer learned by the call before) may come
        sooner, by at most that call's span: the pacer learned it on its own clock, read
        before that call's statement."""
        learned_within = self.last_span if hint else 0.0
        wait, earliest, latest = self.seen(call)
        first_earliest, first_latest = self.first
        assert wait > 0, wait
        assert earliest - EPSILON <= first_latest + due, (wait, due, "later than due")
        assert first_earliest + due <= latest + learned_within + EPSILON, (wait, due, "sooner")


EPSILON = 1e-6
"""What the database's floating epoch seconds round off."""


def test_two_pacers_on_one_database_share_a_budget(db: Engine, sessions: object) -> None:
    """Each process has a pacer of its own: on the database they take turns from one bucket,
    never the same turn twice, and a board's redraw takes none while the budget is spent."""
    team = f"T{next(_teams):04d}PACE"
    every_two_seconds = Limit(0.5, 2)
    first, second = (Pacer(updates=every_two_seconds, engine=db) for _ in range(2))
    turns = Turns(db)
    assert turns.start(lambda: first.update(team)) == 0.0, "a burst of two"
    assert second.update(team) == 0.0, "a burst of two"
    turns.at(lambda: first.update(team), 2.0)
    turns.at(lambda: second.update(team), 4.0)
    boards: list[Turn] = []

    def board() -> float:
        """A board's redraw, which takes a turn only if one is free within a second."""
        boards.append(second.updates.reserve(team, within=1.0))
        return boards[-1].wait

    turns.at(board, 5.0, hint=True)  # when the free turn at 6 s is within a second
    assert not boards[0].taken
    turns.at(lambda: first.update(team), 6.0)  # the turn the board did not take
    assert first.update(f"{team}X") == 0.0, "another workspace has a budget of its own"
    fresh = f"{team}Y"  # a burst of two: a redraw that may wait longest leaves one of it
    assert first.update_sparing(fresh, spare=20).taken
    assert not second.update_sparing(fresh, spare=20).taken
    assert second.update(fresh) == 0.0, "the call left over, for a board"
    still = 100.0  # posts are paced in memory, on a clock the test holds still
    posts = Pacer(posts=Limit(1.0, 1), engine=db, clock=lambda: still)
    assert posts.post(f"C{team}") == 0.0
    assert posts.post(f"C{team}") == pytest.approx(1.0), "a second after the first"


def test_calls_that_ask_while_a_turn_is_taken_take_theirs_in_the_next_statement(
    db: Engine, sessions: object
) -> None:
    """A storm of redraws in one workspace: while one statement waits for the bucket's row,
    the calls that ask meanwhile wait for it, then take their turns in one statement, the
    same turns as one by one (none twice, none skipped)."""
    team = f"T{next(_teams):04d}TOGETHER"
    key = f"update:{team}"
    asked = threading.Semaphore(0)

    def clock() -> float:
        asked.release()  # a call has asked (it waits in line from then on)
        return time.monotonic()

    every_100_s = Limit(0.01, 1)  # far apart: the turns do not depend on when statements run
    buckets = SharedBuckets(db, "update", every_100_s, clock=clock)
    assert buckets.reserve(team).wait == 0.0, "a burst of one"
    assert asked.acquire(timeout=0)

    def free_from() -> float:
        with db.connect() as connection:
            found = connection.scalar(
                text("SELECT free_from FROM pacing_buckets WHERE key = :k"), {"k": key}
            )
        return float(found)

    first_free = free_from()
    statements: list[str] = []

    def counted(conn: object, cursor: object, statement: str, *args: object) -> None:
        if statement.lstrip().startswith("INSERT INTO pacing_buckets"):
            statements.append(statement)

    waits: dict[str, float] = {}

    def call(name: str) -> threading.Thread:
        thread = threading.Thread(target=lambda: waits.update({name: buckets.reserve(team).wait}))
        thread.start()
        return thread

    def waiting_for_the_row(holder: int) -> bool:
        with db.connect() as connection:
            found = connection.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND :holder = ANY(pg_blocking_pids(pid))"
                ),
                {"holder": holder},
            )
        return bool(found)

    event.listen(db, "before_cursor_execute", counted)
    try:
        with db.connect() as holder:
            holder.execute(
                text("SELECT 1 FROM pacing_buckets WHERE key = :k FOR UPDATE"), {"k": key}
            )
            pid = int(holder.scalar(text("SELECT pg_backend_pid()")))
            threads = [call("first")]
            until(lambda: waiting_for_the_row(pid), "the first call's statement waiting")
            threads += [call("second"), call("third")]
            for _ in range(3):
                assert asked.acquire(timeout=60), "every call has asked"
            holder.commit()  # the row is free: the first statement goes, then the next
        for thread in threads:
            thread.join(timeout=60)
    finally:
        event.remove(db, "before_cursor_execute", counted)
    assert len(statements) == 2, "the first call's statement, then one for the other two"
    assert free_from() - first_free == pytest.approx(300.0), "three more turns, in a row"
    later = sorted([waits["second"], waits["third"]])
    assert later[1] - later[0] == pytest.approx(100.0), "turns in a row, from one statement"
    assert waits["first"] < later[0]


def test_when_a_statement_taking_turns_fails_every_call_it_was_for_fails_with_it(
    db: Engine, sessions: object
) -> None:
    """The calls waiting for one statement fail with it, at once, rather than each asking
    the database again in turn; those who ask next are served."""
    team = f"T{next(_teams):04d}FAILS"
    asked = threading.Semaphore(0)
    entered, go_on = threading.Event(), threading.Event()

    def clock() -> float:
        asked.release()
        return time.monotonic()

    class FailingSecond(SharedBuckets):
        """The first statement waits to be let go; the second finds the database gone."""

        statements = 0

        def _run(
            self, key: str, interval: float, within: float | None
        ) -> tuple[float, bool, float]:
            self.statements += 1
            if self.statements == 1:
                entered.set()
                assert go_on.wait(timeout=60)
            elif self.statements == 2:
                raise ConnectionError("the database went away")
            return super()._run(key, interval, within)

    buckets = FailingSecond(db, "update", Limit(0.01, 1), clock=clock)
    outcomes: dict[str, float | Exception] = {}

    def call(name: str) -> threading.Thread:
        def reserve() -> None:
            try:
                outcomes[name] = buckets.reserve(team).wait
            except ConnectionError as error:
                outcomes[name] = error

        thread = threading.Thread(target=reserve)
        thread.start()
        return thread

    threads = [call("first")]
    assert entered.wait(timeout=60)
    threads += [call("second"), call("third")]
    for _ in range(3):
        assert asked.acquire(timeout=60), "every call has asked"
    go_on.set()
    for thread in threads:
        thread.join(timeout=60)
    assert outcomes["first"] == 0.0, "a burst of one"
    assert isinstance(outcomes["second"], ConnectionError)
    assert isinstance(outcomes["third"], ConnectionError)
    assert buckets.statements == 2, "the two that failed together asked once"
    next_turn = buckets.reserve(team).wait  # 100 s after the first, less the time since
    assert 0 < next_turn <= 100.0, "the failed statement took no turn"


def test_a_redraw_that_ends_a_phase_goes_ahead_of_boards_that_still_count(
    fake: FakeSlack, sessions: sessionmaker[Session]
) -> None:
    """With the burst nearly spent, a board's count (who joined, confirmed, voted: it will be
    redrawn again) waits for the budget to refill, while a last word (dawn, the vote closed)
    takes the turn left for it, on a board whose count is waiting too."""
    client = web_client(BOT_TOKEN, fake.api_url, wait_out_rate_limits=False)
    short = Pacer(updates=Limit(0.01, 4))  # a burst of 4, then one every 100 s; 3 kept back
    deliverer = Deliverer(sessions, lambda team: client, lambda g, e: None, pacer=short)
    games = [new_game(fake, sessions) for _ in range(2)]
    ids = [game_id for game_id, _ in games]
    seat = SeatName("U0HOST", "host", is_bot=False)

    def redraw(game_ids: list[int], view: View) -> None:
        with transaction(sessions) as session:
            for game_id in game_ids:
                game = session.get(Game, game_id)
                assert game is not None
                write(session.connection(), outbox_rows(game, [Show(LOBBY_BOARD, view)]))
        for game_id in game_ids:
            deliverer.kick(game_id)

    def shown(saying: str) -> list[int]:
        return [g for g, channel in games if saying in fake.messages(channel)[-1].text]

    try:
        deliverer.start(sweep_seconds=0.1)
        redraw(ids, ClosedView("posted"))  # posts: a budget of their own
        until(lambda: not undelivered(sessions, ids), "the boards posted")
        counting = LobbyView(ids[0], "U0HOST", (seat,), Kept(bots_allowed=True))
        assert not settles(counting) and settles(ClosedView("done"))
        redraw(ids, counting)

        def one_count_put_off() -> int | None:
            """The game whose count waits, once the other's is shown and recorded."""
            rows, counted = undelivered(sessions, ids), shown("Varulv")
            if len(counted) == 1 and len(rows) == 1 and rows[0].stream not in counted:
                return rows[0].stream if rows[0].due_at > datetime.now(UTC) else None
            return None

        waiting = until(one_count_put_off, "one count redrawn, the other put off")
        assert waiting is not None
        redraw([waiting], ClosedView("the last word"))
        until(lambda: shown("the last word") or None, "the last word redrawn")
        # Slack has it before its landing is committed, and with it the count it replaced.
        until(
            lambda: not undelivered(sessions, ids),
            "the last word recorded, and the count it replaced done with",
        )
    finally:
        deliverer.stop()
    assert shown("the last word") == [waiting] and len(shown("Varulv")) == 1


def test_a_last_word_borrows_its_messages_newest_recent_click_with_its_copy(
    fake: FakeSlack, sessions: sessionmaker[Session]
) -> None:
    """A last word that answers no click goes through the message's newest click, as long as
    the click (not a version that borrowed it) is under 25 minutes old; a count borrows none."""
    game_id, _ = new_game(fake, sessions)
    seat = SeatName("U0HOST", "host", is_bot=False)
    counting = LobbyView(game_id, "U0HOST", (seat,), Kept(bots_allowed=True))

    def written(view: View, click: tuple[str, str] | None = None) -> tuple[str | None, ...]:
        with transaction(sessions) as session:
            game = session.get(Game, game_id)
            assert game is not None
            rows = outbox_rows(game, [Show(LOBBY_BOARD, view)])
            if click:
                answering(rows, LOBBY_BOARD, *click)
            write(session.connection(), rows)
            return rows[0]["response_url"], rows[0]["response_ts"]

    assert written(counting, ("https://hooks/old", "1.0")) == ("https://hooks/old", "1.0")
    assert written(counting, ("https://hooks/new", "2.0")) == ("https://hooks/new", "2.0")
    assert written(counting) == (None, None), "a count borrows no click"
    assert written(ClosedView("dawn")) == ("https://hooks/new", "2.0")
    with transaction(sessions) as session:  # the clicks age past what Slack allows
        session.execute(
            update(OutboxEntry)
            .where(OutboxEntry.stream == game_id, OutboxEntry.version <= 2)
            .values(created_at=func.now() - timedelta(minutes=26))
        )
    assert written(ClosedView("dawn")) == (None, None), "too old, though lent just now"


def test_a_redraw_refused_a_turn_asks_the_database_again_only_once_one_may_be_free(
    db: Engine, sessions: object
) -> None:
    """A bucket's next free moment only moves later, so a refusal holds until then: another
    redraw that may only take a turn as soon is refused without a statement, and one that may
    wait longer asks the database."""
    team = f"T{next(_teams):04d}MEMO"
    slow = Limit(1 / 60, 1)  # one turn a minute
    first, second = (Pacer(updates=slow, engine=db) for _ in range(2))
    statements: list[str] = []

    def counted(connection: object, cursor: object, statement: str, *_: object) -> None:
        if "pacing_buckets" in statement:
            statements.append(statement)

    event.listen(db, "before_cursor_execute", counted)
    try:
        assert first.updates.reserve(team, within=1.0).taken, "the minute's turn"
        refused = second.updates.reserve(team, within=1.0)
        assert not refused.taken and len(statements) == 2, "the other process asks, once"
        again = second.updates.reserve(team, within=1.0)
        assert not again.taken and len(statements) == 2, "refused from what it was told"
        assert again.wait == pytest.approx(refused.wait, abs=1.0)
        later = second.updates.reserve(team, within=120.0)
        assert later.taken and len(statements) == 3, "one that may wait asks the database"
        assert second.updates.reserve(f"{team}X", within=1.0).taken, "another workspace's own"
    finally:
        event.remove(db, "before_cursor_execute", counted)
