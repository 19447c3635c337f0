"""Decide, commit, then show: what the outbox buys, measured side by side in one run.

    python -m benchmarks.outbox               # everything BENCHMARKS.md reports
    python -m benchmarks.outbox --only lock   # one measurement: reveal, lock, quiet, deadlines,
                                              # screen
    python -m benchmarks.outbox --only screen --slack-ms 0 100   # Slack at 0 ms, then 100 ms
    python -m benchmarks.outbox --only deadlines --slack-ms 100 --workspaces 100
    python -m benchmarks.outbox --only deadlines --timers-apart   # the timers in varulv work

Against the app as deployed (``varulv serve``, one process) and the stand-in for Slack,
which can answer every Web API call late (``tests.faults.slow_down``):

- reveal: a ten-seat vote, all ten ballots at once, once its channel may take a post again
  (the app paces posts to about one a second per channel); from the first ballot sent to the
  reveal's post answered by the stand-in, with Slack answering in 0 ms and in 100 ms;
- lock: how long each step holds the game row (from its ``SELECT ... FOR NO KEY UPDATE`` to the
  connection's return after the commit), p50/p99/max over whole ten-seat games played with the
  app's own steps in a process of their own, as a web worker runs them, while this process
  delivers what they commit, as another process on the database may; Slack at 0 ms and 100 ms;
- quiet: one *Heard enough* at a quiet table while another table takes a burst of 45 ballot
  clicks, Slack at 300 ms: from the click to its board's redraw and to its private answer;
- deadlines: 1,000 nights due at the same moment in one process: until every day board is
  posted, and the acknowledgement p99 of ``/varulv help`` meanwhile against the same at idle;
  and the app's CPU from the deadline until then, per Web API call made; then the floor: the
  same messages, each posted after one committed row, from as many threads as the app's calls;
  at each ``--slack-ms``, the games spread over ``--workspaces`` workspaces (with more than
  one, the app paces itself to Slack's own per-workspace limits);
- screen: 50 ``/varulv`` in 50 channels at once, each on a fresh connection, at the app and then
  the same requests at each floor (``benchmarks/floor.py``: bare Bolt on gunicorn ``gthread``
  that acks, commits a row and posts a lobby; the lean floor, which keeps the guarantee in two
  statements; the read-first floor, the lean one with the read the lobby needs first; the
  durable floor, which keeps Varulv's design), by turns, ``--rounds`` times,
  after one unmeasured burst at each server: from each request to its lobby's post at the
  stand-in, p50/p99, the acks, and the CPU per ``/varulv`` of the server, the stand-in and the
  benchmark's own PostgreSQL, with the load average; then 30 ``/varulv`` one at a time on an
  idle server, by turns likewise; at each ``--slack-ms``.

``--slack-ms`` sets the stand-in's latency for screen and deadlines; reveal and lock compare 0
and 100 ms themselves, and quiet is measured at 300 ms.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import requests
from prometheus_client.parser import text_string_to_metric_families
from slack_sdk import WebClient
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

from benchmarks.fire import Prepared, Timed, fire
from benchmarks.floor import CREATE_ROWS, INSERT_ROW
from benchmarks.opened import close_games, open_games
from benchmarks.processes import (
    IN_FLIGHT,
    ROOT,
    TOKEN,
    Server,
    Slack,
    bench,
    cpu_seconds,
    load_average,
    postgres_cpu_seconds,
    postmaster_of,
    start_server,
    warm_up,
)
from benchmarks.stats import percentile
from slackapp.db.engine import make_engine, make_sessions, sqlalchemy_url
from slackapp.db.games import read as read_game
from slackapp.delivery.deliverer import CALL_THREADS, Deliverer
from slackapp.delivery.pacing import POST_BURST, POSTS_PER_SECOND, Buckets, Limit
from slackapp.delivery.slack import web_client
from slackapp.fakeslack import JSON, Button, Call, FakeSlack, Message
from slackapp.game import machine as m
from slackapp.services.game import GameService
from tests import faults

REVEAL = "The Varulv reveal"
STREAM = 1500
"""``/varulv help`` sent at idle and during the deadlines alike: each p99 then rests on as many
of its slowest."""
STREAM_EVERY = 0.05
"""During a storm the stream goes out at a fixed pace, 20 a second, as people type: a stream
that sent the next once one was answered loaded the server that answered sooner the more."""
STREAM_IN_FLIGHT = 64
LONE_COMMANDS = 30
"""``/varulv`` typed one at a time, for what a lone click waits."""
T = TypeVar("T")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


@contextmanager
def slack_at(fake: FakeSlack, seconds: float) -> Iterator[None]:
    faults.slow_down(fake, seconds)
    try:
        yield
    finally:
        faults.slow_down(fake, 0)


def wait(done: Callable[[], T | None], what: str, timeout: float = 120) -> T:
    deadline = time.monotonic() + timeout
    while not (found := done()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.01)
    return found


def button(fake: FakeSlack, channel: str, label: str) -> tuple[Message, Button] | None:
    try:
        return fake.find_button(channel, label)
    except LookupError:
        return None


def first_call(fake: FakeSlack, since: int, matches: Callable[[Call], bool]) -> Call:
    """The first Web API call (or response_url post) since call number ``since`` that
    ``matches``, once the stand-in has answered it."""
    return wait(
        lambda: next((call for call in fake.calls[since:] if matches(call)), None), "a call"
    )


_numbers = itertools.count(1)
"""Every table and channel of a run gets a number of its own, so no two ever meet."""


class Games:
    """Tables played by clicks at one server through the stand-in for Slack."""

    def __init__(self, fake: Slack, db: Engine, server: Server, prefix: str) -> None:
        self.fake, self.db, self.server, self.prefix = fake, db, server, prefix
        self.count = 0

    def phase(self, channel: str) -> str | None:
        with self.db.connect() as connection:
            found = connection.execute(
                text("SELECT phase FROM games WHERE channel_id = :c ORDER BY id DESC LIMIT 1"),
                {"c": channel},
            ).scalar()
            return None if found is None else str(found)

    def settled(self, channel: str) -> bool:
        with self.db.connect() as connection:
            left = connection.execute(
                text(
                    "SELECT count(*) FROM outbox JOIN games ON games.id = outbox.stream "
                    "WHERE games.channel_id = :c AND outbox.done_at IS NULL"
                ),
                {"c": channel},
            ).scalar_one()
            return int(left) == 0

    def table(self, people: int, to: str) -> tuple[str, list[str]]:
        """A new table of ``people`` people, played on to phase ``to`` ("day" or "vote")."""
        self.count = next(_numbers)
        channel = f"C{self.prefix}{self.count:04d}"
        users = [f"U{self.prefix}{self.count:04d}{n:02d}" for n in range(people)]
        fake = self.fake
        fake.app_url = self.server.events_url
        fake.add_channel(channel, channel.lower())
        for user in users:
            fake.add_user(user, user.lower())
        fake.slash_command(users[0], channel_id=channel)
        for user in users[1:]:
            lobby, join = wait(lambda: button(fake, channel, "Join"), "the lobby")
            fake.click(user, lobby, join.action_id)
        wait(lambda: self.settled(channel) and self.seated(channel) == people, "seats")
        wait(lambda: button(fake, channel, "Start"), "the lobby")
        fake.click_button(users[0], channel, "Start")
        wait(lambda: self.phase(channel) == "night" and self.settled(channel), "the night")
        for user in users:
            while (dm := self.night_dm(user)) is not None and dm.buttons():
                before = dm.blocks
                labels = [b for b in dm.buttons() if b.text not in ("Start over",)]
                fake.click(user, dm, labels[-1].action_id)  # skip, or "Got it"

                def redrawn(u: str = user, b: list[JSON] = before) -> bool:
                    now = self.night_dm(u)
                    assert now is not None
                    return now.blocks != b

                wait(redrawn, "a night DM")
        wait(lambda: self.phase(channel) == "day" and self.settled(channel), "the day")
        if to == "vote":
            for user in users[: people // 2 + 1]:
                if self.phase(channel) == "day":
                    wait(lambda: button(fake, channel, "Heard enough"), "the day board")
                    fake.click_button(user, channel, "Heard enough")
                    time.sleep(0.02)
            wait(lambda: self.phase(channel) == "vote" and self.settled(channel), "the vote")
        return channel, users

    def seated(self, channel: str) -> int:
        with self.db.connect() as connection:
            return int(
                connection.execute(
                    text(
                        "SELECT count(*) FROM seats JOIN games ON games.id = seats.game_id "
                        "WHERE games.channel_id = :c AND games.phase = 'lobby'"
                    ),
                    {"c": channel},
                ).scalar_one()
            )

    def night_dm(self, user: str) -> Message | None:
        return next(
            (m for m in reversed(self.fake.dm_messages(user)) if "Your card" in m.rendered_text),
            None,
        )

    def own_ballot(self, channel: str, user: str) -> Message:
        """*Vote* on the board, sent now: the person's own ballot it brings them."""
        board = self.fake.find_message(channel, "One sealed ballot each")
        assert board is not None

        def ballots() -> list[Message]:
            shown = self.fake.ephemerals(user, channel)
            return [m for m in shown if "Your sealed ballot" in m.rendered_text]

        before = len(ballots())
        self.fake.click_button(user, board, "Vote")
        return self.fake.wait_for(
            lambda: ballots()[before] if len(ballots()) > before else None,
            timeout=60,
            what=f"{user}'s own ballot",
        )

    def ballots(self, channel: str, voters: Sequence[str], rounds: int = 1) -> list[Prepared]:
        """Signed ballot clicks on each voter's own ballot (opened first), unsent: each voter
        names the next seat, ``rounds`` times."""
        own = {user: self.own_ballot(channel, user) for user in voters}
        with self.fake.preparing("ballot") as prepared:
            for round_number in range(rounds):
                for index, user in enumerate(voters):
                    targets = own[user].buttons()  # every other seat, and Nobody
                    chosen = targets[(index + round_number) % len(targets)]
                    self.fake.click(user, own[user], chosen.action_id)
        return prepared


# -- reveal ----------------------------------------------------------------------------------


def until_a_post_may_go(fake: Slack, channel: str) -> float:
    """Seconds until the app's pacing (about a post a second per channel, after a short burst)
    lets another post into ``channel``, replayed over the posts the stand-in took there."""
    posted = [
        call.at
        for call in fake.calls
        if call.method == "chat.postMessage" and call.params.get("channel") == channel
    ]
    moments = iter([*posted, time.time()])  # the bucket reads its clock once a reservation
    bucket = Buckets(Limit(POSTS_PER_SECOND, POST_BURST), clock=lambda: next(moments))
    for _ in posted:
        bucket.reserve(channel)
    return bucket.reserve(channel).wait


def ballot_to_reveal(
    fake: Slack, db: Engine, pool: ProcessPoolExecutor, app: Server, latency: float, games: int
) -> list[float]:
    played = Games(fake, db, app, f"R{int(latency * 1000):03d}")
    seconds = []
    for _ in range(games):
        channel, people = played.table(10, to="vote")
        ballots = played.ballots(channel, people)
        # The table was driven to its vote faster than people would: its channel's posts
        # would hold the reveal back, and the pacing, not the ballots, would be measured.
        time.sleep(until_a_post_may_go(fake, channel))
        with slack_at(fake, latency):
            before = len(fake.calls)
            timed = pool.submit(fire, app.events_url, ballots, IN_FLIGHT).result()

            def is_reveal(call: Call, c: str = channel) -> bool:
                return (
                    call.method == "chat.postMessage"
                    and call.ok
                    and call.params.get("channel") == c
                    and str(call.params.get("text")).startswith(REVEAL)
                )

            reveal = first_call(fake, before, is_reveal)
            seconds.append(reveal.at - min(each.sent_at for each in timed))
            wait(functools.partial(played.settled, channel), "the reveal's last messages")
    return seconds


# -- lock held -------------------------------------------------------------------------------


def lock_held(
    fake: Slack, database_url: str, pool: ProcessPoolExecutor, latency: float, games: int
) -> list[float]:
    """Whole ten-seat games played by the app's own steps in a process of their own, which
    delivers what they commit as a ``varulv serve`` does (each step takes its game's lease);
    this process sweeps for what it leaves, as another process of the app would. Each step's
    time holding the game row."""
    sessions = make_sessions(make_engine(database_url))
    client = web_client(TOKEN, fake.api_url, wait_out_rate_limits=False)
    deliverer = Deliverer(sessions, lambda team: client, lambda g, e: None)
    deliverer.start(sweep_seconds=0.2)
    label = f"{int(latency * 1000):03d}"
    for number in range(games):  # the channels and people the steps' process will play with
        fake.add_channel(f"CL{label}{number:03d}", f"cl{label}{number:03d}")
        for user in [f"UL{label}{number:03d}{n}" for n in range(10)]:
            fake.add_user(user, user.lower())
    try:
        with slack_at(fake, latency):
            return pool.submit(play_timed, database_url, fake.api_url, label, games).result()
    finally:
        deliverer.stop()


class NoAlarm:
    """Every phase ends by clicks here: no timer to arm."""

    def arm(self, game_id: int, at: datetime) -> None:
        pass

    def disarm(self, game_id: int) -> None:
        pass


def play_timed(database_url: str, api_url: str, label: str, games: int) -> list[float]:
    """In the steps' process: play ``games`` games, each event a step at the same time as the
    table's other clicks; how long each step held its game's row, from its ``SELECT ... FOR
    NO KEY UPDATE`` to the connection's return after the commit."""
    engine = make_engine(database_url)
    held: list[float] = []

    @event.listens_for(engine, "after_cursor_execute")
    def locked(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if "FOR NO KEY UPDATE" in statement and "FROM games" in statement:
            conn.info["locked_at"] = time.perf_counter()

    @event.listens_for(engine.pool, "checkin")
    def released(dbapi_connection: Any, record: Any) -> None:
        started = record.info.pop("locked_at", None)
        if started is not None:
            held.append(time.perf_counter() - started)

    sessions = make_sessions(engine)
    client = web_client(TOKEN, api_url, wait_out_rate_limits=False)
    deliverer = Deliverer(sessions, lambda team: client, lambda g, e: None)
    steps = GameService(sessions, m.Lengths(3600, 3600, 3600), deliverer, NoAlarm())
    clicks = ThreadPoolExecutor(10)
    try:
        for number in range(games):
            channel = f"CL{label}{number:03d}"
            people = [f"UL{label}{number:03d}{n}" for n in range(10)]
            steps.open_table("T0001", channel, people[0], "p0")
            with sessions() as session:
                game_id = int(
                    session.execute(
                        text("SELECT id FROM games WHERE channel_id = :c"), {"c": channel}
                    ).scalar_one()
                )
            play_at_once(steps, clicks, game_id, [m.Join(u, u.lower()) for u in people[1:]])
            steps.start(game_id, people[0], client)
            state = committed(sessions, game_id)
            moves: list[m.Event] = [
                m.NightConfirm(u) if state.choice_kind(u) is None else m.NightSkip(u)
                for u in people
            ]
            play_at_once(steps, clicks, game_id, moves)
            play_at_once(steps, clicks, game_id, [m.HeardEnough(u) for u in people[:6]])
            ballots = zip(people, [*people[1:], people[0]], strict=True)
            play_at_once(steps, clicks, game_id, [m.CastBallot(a, b) for a, b in ballots])
            state = committed(sessions, game_id)
            assert state.phase == m.Phase.OVER, state
    finally:
        clicks.shutdown()
        deliverer.stop()
        engine.dispose()
    return held


def committed(sessions: sessionmaker[Session], game_id: int) -> m.GameState:
    """The game's state as committed."""
    with sessions() as session:
        stored = read_game(session.connection(), game_id)
    assert stored is not None, game_id
    return stored.state


def play_at_once(
    steps: GameService, clicks: ThreadPoolExecutor, game_id: int, events: Sequence[m.Event]
) -> None:
    """Each event a step of its own, all at the same time, as a table clicks."""
    list(clicks.map(lambda each: steps.act(game_id, each), events))


# -- a quiet table during a burst ------------------------------------------------------------


def said_heard(call: Call) -> bool:
    return "heard enough" in str(call.params)


def quiet_during_burst(
    fake: Slack, db: Engine, pool: ProcessPoolExecutor, app: Server, rounds: int
) -> list[tuple[float, float]]:
    played = Games(fake, db, app, "Q")
    shown = []
    for _ in range(rounds):
        busy, people = played.table(10, to="vote")
        quiet, quiet_people = played.table(3, to="day")
        burst = played.ballots(busy, people[:9], rounds=5)  # 45 clicks; the tenth never votes
        with fake.preparing("heard") as click:
            fake.click_button(quiet_people[0], quiet, "Heard enough")
        mixed = [*burst[:20], *click, *burst[20:]]  # amid the burst
        with slack_at(fake, 0.3):
            before = len(fake.calls)
            timed = pool.submit(fire, app.events_url, mixed, IN_FLIGHT).result()
            sent = next(each.sent_at for each in timed if each.kind == "heard")

            def is_redraw(c: Call, q: str = quiet) -> bool:
                """The board redrawn: by ``chat.update``, or through the click's own answer,
                which replaces the message clicked."""
                if c.method == "response_url":
                    return c.params.get("replace_original") is True and said_heard(c)
                return c.method == "chat.update" and c.params.get("channel") == q

            def is_answer(c: Call) -> bool:
                return c.method == "response_url" and not is_redraw(c) and said_heard(c)

            redraw = first_call(fake, before, is_redraw)
            answer = first_call(fake, before, is_answer)
            shown.append((redraw.at - sent, answer.at - sent))

            def both_settled(b: str = busy, q: str = quiet) -> bool:
                return played.settled(b) and played.settled(q)

            wait(both_settled, "the burst's end")
    return shown


# -- 1,000 deadlines at once -----------------------------------------------------------------

_deadline_runs = itertools.count(1)
DEADLINES_LEAD = 30.0
"""Seconds from opening the storm's games to their deadline: the idle stream is measured
between."""


def help_commands(fake: Slack, count: int, kind: str) -> list[Prepared]:
    fake.add_channel("CHELP", "help")
    with fake.preparing(kind) as prepared:
        for _ in range(count):
            fake.slash_command("UHELP", text="help", channel_id="CHELP")
    return prepared


def stream_during(fake: Slack, pool: ProcessPoolExecutor, server: Server) -> Future[list[Timed]]:
    """``/varulv help`` at a steady pace, whatever the answers, while a storm goes on."""
    commands = help_commands(fake, STREAM, "during")
    return pool.submit(fire, server.events_url, commands, STREAM_IN_FLIGHT, STREAM_EVERY)


def delivery_reads(server: Server) -> dict[str, float]:
    """The server's reads of undelivered messages so far, ``held`` and ``claimed``."""
    scraped = requests.get(server.metrics_url, timeout=30).text
    return {
        sample.labels["how"]: sample.value
        for family in text_string_to_metric_families(scraped)
        if family.name == "varulv_delivery_reads"
        for sample in family.samples
        if sample.name.endswith("_total")
    }


def deadlines_together(
    fake: Slack,
    db: Engine,
    database_url: str,
    pool: ProcessPoolExecutor,
    games: int,
    scrape_every: float | None = None,
    workspaces: int = 1,
    timers_apart: bool = False,
) -> dict[str, float]:
    """``games`` nights due at once, spread over ``workspaces`` workspaces; with
    ``scrape_every``, ``/metrics`` is scraped that often from the deadline until every day board
    is posted, as Prometheus would; with ``timers_apart``, ``varulv serve`` answers with
    ``VARULV_TIMERS=off`` and ``varulv work`` beside it steps and posts the storm. Slack
    answers as fast as ``fake`` has been told to."""
    prefix = f"CD{next(_deadline_runs)}X"  # X: no run's prefix begins another's
    # Over many workspaces, Slack's own limits allow it: the app paces to them, as deployed.
    paced = {"VARULV_UPDATES_PER_MINUTE": "50", "VARULV_UPDATE_BURST": "50"}
    settings = paced if workspaces > 1 else {}
    apart = {"VARULV_TIMERS": "off"} if timers_apart else {}
    app = start_server("app", "slackapp.cli", fake, database_url, 1, settings={**settings, **apart})
    worker: Server | None = None
    try:
        if timers_apart:
            worker = start_server(
                "worker", "slackapp.cli", fake, database_url, 1, settings=settings, command="work"
            )
        warm_up(fake, pool, [app])
        # Opened once the servers run, as people open games: the process keeping the timers
        # learns of their deadlines from the database, as it does of other processes' games.
        due = datetime.now(UTC) + timedelta(seconds=DEADLINES_LEAD)
        open_games(fake, db, games, prefix, [due] * games, workspaces)
        before = len(fake.calls)
        idle = pool.submit(fire, app.events_url, help_commands(fake, STREAM, "idle"), 4).result()
        if time.time() > due.timestamp():
            raise RuntimeError("the games and the idle stream took longer than DEADLINES_LEAD")
        # The one process serves, steps, delivers; or the worker steps and delivers the storm.
        working = worker or app
        background = [app.process.pid] + ([worker.process.pid] if worker else [])
        time.sleep(max(0.0, due.timestamp() - time.time()))
        load_before = load_average()  # the machine's, and the idle stream's: before the burst
        reads_before = delivery_reads(working)
        background_cpu = sum(cpu_seconds(pid) for pid in background)
        during = stream_during(fake, pool, app)  # while the deadlines clear
        channels = {f"{prefix}{i:05d}" for i in range(games)}

        def boards() -> list[float]:
            return [
                c.at
                for c in fake.calls[before:]
                if c.method == "chat.postMessage" and c.ok and c.params.get("channel") in channels
            ]

        scrapes: list[float] = []
        cleared_event = threading.Event()

        def scrape() -> None:
            assert scrape_every is not None
            while not cleared_event.wait(scrape_every):
                began = time.monotonic()
                requests.get(app.metrics_url, timeout=30).raise_for_status()
                scrapes.append(time.monotonic() - began)

        scraper = threading.Thread(target=scrape, daemon=True)
        if scrape_every is not None:
            scraper.start()
        try:
            wait(lambda: len(boards()) >= games, "every day board", timeout=300)
        finally:
            cleared_event.set()
        if scraper.is_alive():
            scraper.join()
        cleared = max(boards()) - due.timestamp()
        background_cpu = sum(cpu_seconds(pid) for pid in background) - background_cpu
        reads = delivery_reads(working)
        calls = sum(
            1 for c in fake.calls[before:] if c.at >= due.timestamp() and c.method != "response_url"
        )
        with db.connect() as connection:
            committed = connection.execute(
                text(
                    "SELECT max(updated_at) FROM games WHERE channel_id LIKE :p AND phase = 'day'"
                ),
                {"p": prefix + "%"},
            ).scalar_one()
        shown = [
            (str(c.params.get("channel")), str(c.params.get("text") or ""), c.params.get("blocks"))
            for c in fake.calls[before:]
            if c.at >= due.timestamp() and c.method in ("chat.postMessage", "chat.update")
        ]
        timed = during.result()
        streamed_until = max(each.sent_at + each.seconds for each in timed)
        meanwhile = [each.seconds for each in timed if each.sent_at <= due.timestamp() + cleared]
        return {
            "games": games,
            "cleared_s": cleared,
            "committed_s": committed.timestamp() - due.timestamp(),
            "idle_p99_ms": percentile([each.seconds for each in idle], 0.99) * 1000,
            "load_before": load_before,
            "load_after": load_average(),
            "during_p99_ms": percentile(meanwhile, 0.99) * 1000,
            "during_n": len(meanwhile),
            "stream_s": streamed_until - due.timestamp(),
            "background_cpu_s": background_cpu,
            "held_reads": reads.get("held", 0) - reads_before.get("held", 0),
            "claimed_reads": reads.get("claimed", 0) - reads_before.get("claimed", 0),
            "calls": calls,
            "scrapes": len(scrapes),
            "scrape_p99_ms": percentile(scrapes, 0.99) * 1000 if scrapes else 0.0,
            "floor_s": pool.submit(post_all, database_url, fake.api_url, shown).result(),
            "floor_posts": len(shown),
        }
    finally:
        app.stop()
        if worker is not None:
            worker.stop()
        close_games(db, prefix)


def floor_storm(
    fake: Slack, pool: ProcessPoolExecutor, floor: Server, messages: int
) -> dict[str, float]:
    """The floor for acknowledgements in a storm: the bare Bolt floor, told to post
    ``messages`` board-sized messages from 64 threads of its own process (``/varulv storm``),
    answers the same steady stream of ``/varulv help`` meanwhile as the app did during its
    deadlines; its acknowledgement p99 then against just before."""
    prefix = f"CFS{next(_deadline_runs)}X"
    channels = {f"{prefix}{number:05d}" for number in range(messages)}
    for channel in channels:
        fake.add_channel(channel, channel.lower())
    idle = pool.submit(fire, floor.events_url, help_commands(fake, STREAM, "idle"), 4).result()
    with fake.preparing("storm") as prepared:
        fake.slash_command("USTORM", text=f"storm {messages} {prefix}", channel_id="CHELP")
    before = len(fake.calls)
    began = time.time()
    assert pool.submit(fire, floor.events_url, prepared, 1).result()[0].status == 200
    during = stream_during(fake, pool, floor)

    def posted() -> list[float]:
        return [
            c.at
            for c in fake.calls[before:]
            if c.method == "chat.postMessage" and c.params.get("channel") in channels
        ]

    wait(lambda: len(posted()) >= messages, "every message of the floor's storm", timeout=300)
    cleared = max(posted())
    meanwhile = [each.seconds for each in during.result() if each.sent_at <= cleared]
    return {
        "idle_p99_ms": percentile([each.seconds for each in idle], 0.99) * 1000,
        "during_p99_ms": percentile(meanwhile, 0.99) * 1000,
        "during_n": len(meanwhile),
        "storm_s": cleared - began,
    }


FLOOR_THREADS = CALL_THREADS
"""As many as the app's deliverer has call threads."""


def post_all(database_url: str, api_url: str, messages: list[tuple[str, str, Any]]) -> float:
    """The deadlines' floor, in a process of its own: each message the app posted or redrew,
    posted with ``chat.postMessage`` after one row INSERTed and COMMITted, from
    ``FLOOR_THREADS`` threads, as the bare Bolt floor posts a lobby; seconds until all are in."""
    engine = create_engine(sqlalchemy_url(database_url), pool_size=FLOOR_THREADS)
    with engine.begin() as connection:
        connection.execute(CREATE_ROWS)
    client = WebClient(token=TOKEN, base_url=api_url)

    def post(message: tuple[str, str, Any]) -> None:
        channel, words, blocks = message
        with engine.begin() as connection:
            connection.execute(INSERT_ROW, {"c": channel})
        client.chat_postMessage(channel=channel, text=words, blocks=blocks)

    began = time.monotonic()
    with ThreadPoolExecutor(FLOOR_THREADS) as threads:
        list(threads.map(post, messages))
    took = time.monotonic() - began
    engine.dispose()
    return took


# -- click to screen -------------------------------------------------------------------------


@dataclass
class Opened:
    """``/varulv`` typed in channels of their own, all at once, at one server."""

    acks: list[float]
    to_screen: list[float]
    """Each from its request to its lobby's post at the stand-in."""
    cpu: dict[str, float]
    """CPU seconds from the first request until the last lobby: the server's processes
    ("server"), this process ("stand-in": the stand-in for Slack, and the wait for the lobbies)
    and the benchmark's own PostgreSQL server ("postgres")."""


def new_commands(fake: Slack, count: int) -> tuple[list[str], list[Prepared]]:
    """``count`` people, each about to type ``/varulv`` in a channel of their own."""
    number = next(_numbers)
    channels = [f"CS{number:04d}{n:03d}" for n in range(count)]
    with fake.preparing("command") as commands:
        for n, channel in enumerate(channels):
            fake.add_channel(channel, channel.lower())
            user = f"US{number:04d}{n:03d}"
            fake.add_user(user, user.lower())
            fake.slash_command(user, channel_id=channel)
    return channels, commands


def opened_at(
    fake: Slack,
    pool: ProcessPoolExecutor,
    server: Server,
    postmaster: int,
    channels: list[str],
    commands: list[Prepared],
    settle: bool = False,
) -> Opened:
    """Send ``commands`` to ``server`` all at once (fresh connections, at most IN_FLIGHT in
    flight), and wait for a lobby in each of ``channels``; with ``settle``, the CPU is counted
    until the server is quiet again, the work after the lobbies included."""
    before = len(fake.calls)

    def cpu_so_far() -> dict[str, float]:
        return {
            "server": server.cpu_seconds(),
            "stand-in": time.process_time(),
            "postgres": postgres_cpu_seconds(postmaster),
        }

    cpu_before = cpu_so_far()
    timed = pool.submit(fire, server.events_url, commands, IN_FLIGHT).result()
    sent_at = dict(zip(channels, (each.sent_at for each in timed), strict=True))

    def lobbies() -> dict[str, float]:
        return {
            str(c.params.get("channel")): c.at
            for c in fake.calls[before:]
            if c.method == "chat.postMessage" and c.ok and c.params.get("channel") in sent_at
        }

    wait(lambda: len(lobbies()) == len(channels), f"every lobby from the {server.name}")
    if settle:
        quiet_again(server)
    cpu_after = cpu_so_far()
    return Opened(
        [each.seconds for each in timed],
        [at - sent_at[channel] for channel, at in lobbies().items()],
        {name: cpu_after[name] - cpu_before[name] for name in cpu_before},
    )


QUIET_SECONDS = 0.2
"""After a turn: what a server does after its lobbies begins before the next server's turn
does."""
QUIET_CPU_SECONDS = 0.01
"""A server is quiet again once it spends less than this in a tenth of a second."""


def quiet_again(server: Server, patience: float = 30) -> None:
    """Wait until the server's work after the lobbies (their deliveries' records) is over."""
    time.sleep(QUIET_SECONDS)
    deadline = time.monotonic() + patience
    before = server.cpu_seconds()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = server.cpu_seconds()
        if now - before < QUIET_CPU_SECONDS:
            return
        before = now
    print(f"the {server.name} was still busy {patience:g} s after its turn", flush=True)


def click_to_screen(
    fake: Slack,
    pool: ProcessPoolExecutor,
    servers: Sequence[Server],
    postmaster: int,
    rounds: int,
    at_once: int,
) -> dict[str, dict[str, float]]:
    """``rounds`` rounds, by turns: ``at_once`` people type ``/varulv`` at the same moment in
    channels of their own, at each server in turn (the same requests; another app on the same
    database, ``BESIDE``, gets requests of the same shape from people and channels of its own);
    each round's loads. A burst's CPU counts the servers' work until they are quiet again; no
    server's turn begins while another's look-ups run."""
    shown: dict[str, list[float]] = {server.name: [] for server in servers}
    acks: dict[str, list[float]] = {server.name: [] for server in servers}
    cpu: dict[str, dict[str, float]] = {
        server.name: {"server": 0.0, "stand-in": 0.0, "postgres": 0.0} for server in servers
    }
    loads: list[float] = []
    if at_once > 1:  # one unmeasured burst at each server: its first is a cold one
        for server in servers:
            channels, commands = new_commands(fake, at_once)
            opened_at(fake, pool, server, postmaster, channels, commands, settle=True)
    for _ in range(rounds):
        same = new_commands(fake, at_once)
        for server in servers:
            loads.append(load_average())
            channels, commands = new_commands(fake, at_once) if server.name == BESIDE else same
            burst = at_once > 1
            opened = opened_at(fake, pool, server, postmaster, channels, commands, settle=burst)
            acks[server.name] += opened.acks
            shown[server.name] += opened.to_screen
            for name, spent in opened.cpu.items():
                cpu[server.name][name] += spent
            if not burst:
                time.sleep(QUIET_SECONDS)
    return {
        server.name: {
            "n": len(shown[server.name]),
            "screen_p50_ms": percentile(shown[server.name], 0.50) * 1000,
            "screen_p99_ms": percentile(shown[server.name], 0.99) * 1000,
            "ack_p50_ms": percentile(acks[server.name], 0.50) * 1000,
            "ack_p99_ms": percentile(acks[server.name], 0.99) * 1000,
            "ack_max_ms": max(acks[server.name]) * 1000,
            **{
                f"{name}_cpu_ms_per_command": spent / len(shown[server.name]) * 1000
                for name, spent in cpu[server.name].items()
            },
            "load_min": min(loads),
            "load_max": max(loads),
        }
        for server in servers
    }


def say_screen(
    say: Callable[[str], None],
    label: str,
    what: str,
    found: dict[str, Any],
    floor_name: str = "floor",
) -> None:
    app, floor = found["app"], found[floor_name]

    def cpu(of: dict[str, float]) -> float:
        return float(sum(of[f"{name}_cpu_ms_per_command"] for name in CPU_PARTS))

    def parts(of: dict[str, float]) -> str:
        return " + ".join(f"{of[name + '_cpu_ms_per_command']:.1f}" for name in CPU_PARTS)

    say(
        f"{label} {what}: lobby on screen p50 {app['screen_p50_ms']:.0f} vs floor "
        f"{floor['screen_p50_ms']:.0f} ms = {app['screen_p50_ms'] / floor['screen_p50_ms']:.2f}x, "
        f"p99 {app['screen_p99_ms']:.0f} vs {floor['screen_p99_ms']:.0f} ms = "
        f"{app['screen_p99_ms'] / floor['screen_p99_ms']:.2f}x (n={app['n']:.0f} each); "
        f"ack p99 {app['ack_p99_ms']:.1f} vs {floor['ack_p99_ms']:.1f} ms = "
        f"{app['ack_p99_ms'] / floor['ack_p99_ms']:.2f}x, slowest ack {app['ack_max_ms']:.0f} "
        f"vs {floor['ack_max_ms']:.0f} ms; CPU a /varulv (server + stand-in + PostgreSQL) "
        f"{cpu(app):.1f} ({parts(app)}) vs {cpu(floor):.1f} ({parts(floor)}) ms = "
        f"{cpu(app) / cpu(floor):.2f}x; load {app['load_min']:.1f}-{app['load_max']:.1f}"
    )


CPU_PARTS = ("server", "stand-in", "postgres")
BESIDE = "app beside"
"""Another version's app (``--beside``), measured by turns with this one."""
DURABLE_LABEL = "[app vs durable floor]"
"""The floor that also commits the game, its outbox row and its lease, takes a shared
rate-limit turn and records the landing (``FLOOR=durable``, ``benchmarks/floor.py``)."""
LEAN_LABEL = "[app vs lean floor]"
"""The floor that keeps exactly the guarantee: one statement before the post, one after
(``FLOOR=lean``, ``benchmarks/floor.py``)."""
READ_FIRST_LABEL = "[app vs read-first floor]"
"""The lean floor with the read an app whose rules decide in its own code needs first: the
game's id, the host's kept name, the channel's settings (``FLOOR=read-first``)."""
FLOORS = ("lean floor", "read-first floor", "floor", "durable floor")
"""Side by side with the app, in this order: the guarantee, the guarantee with the read the
lobby needs, bare Bolt, Varulv's design."""


def side_by_side(
    latency_ms: float, burst: dict[str, dict[str, float]], lone: dict[str, dict[str, float]]
) -> list[str]:
    """The app against each floor, one row a figure, each floor's ratio beside it (Markdown)."""

    def cpu(of: dict[str, float]) -> float:
        return float(sum(of[f"{name}_cpu_ms_per_command"] for name in CPU_PARTS))

    figures: list[tuple[str, Callable[[str], float]]] = [
        ("CPU per /varulv of 50 at once, ms", lambda name: cpu(burst[name])),
        ("one on an idle server: lobby p50, ms", lambda name: lone[name]["screen_p50_ms"]),
        ("50 at once: lobby p99, ms", lambda name: burst[name]["screen_p99_ms"]),
        ("50 at once: ack p99, ms", lambda name: burst[name]["ack_p99_ms"]),
    ]
    loads = [
        each[key] for each in (*burst.values(), *lone.values()) for key in ("load_min", "load_max")
    ]
    names = [name for name in FLOORS if name in burst]
    lines = [
        f"Slack at {latency_ms:g} ms (load {min(loads):.1f}-{max(loads):.1f}; "
        f"n = {burst['app']['n']:.0f} in bursts, {lone['app']['n']:.0f} alone)",
        "",
        "| figure | app | " + " | ".join(f"{name} | ratio" for name in names) + " |",
        "|---|---|" + "---|---|" * len(names),
    ]
    for label, figure in figures:
        app = figure("app")
        cells = " | ".join(f"{figure(name):.1f} | {app / figure(name):.2f}x" for name in names)
        lines.append(f"| {label} | {app:.1f} | {cells} |")
    return lines


# -- the run -----------------------------------------------------------------------------------


def summary(values: Sequence[float]) -> str:
    return (
        f"p50 {ms(percentile(values, 0.5))}, p99 {ms(percentile(values, 0.99))}, "
        f"max {ms(max(values))} ms (n={len(values)})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", nargs="+", default=["reveal", "lock", "quiet", "deadlines", "screen"]
    )
    parser.add_argument("--games", type=int, default=5, help="ten-seat games per measurement")
    parser.add_argument("--deadlines", type=int, default=1000)
    parser.add_argument(
        "--workspaces", type=int, default=1, help="deadlines: the games spread over this many"
    )
    parser.add_argument(
        "--timers-apart",
        action="store_true",
        help="deadlines: varulv serve with VARULV_TIMERS=off, and varulv work beside it",
    )
    parser.add_argument("--rounds", type=int, default=4, help="bursts of 50 /varulv per server")
    parser.add_argument(
        "--slack-ms",
        type=float,
        nargs="+",
        default=[0.0],
        metavar="N",
        help="screen and deadlines: the stand-in answers every Web API call N ms late; given"
        " more than once, each is measured in turn (reveal, lock and quiet set their own)",
    )
    parser.add_argument(
        "--app-root", type=Path, default=ROOT, help="the app's source tree (another version's)"
    )
    parser.add_argument(
        "--beside",
        type=Path,
        help="screen: another version's source tree, its app measured by turns in the same run"
        " (on this tree's schema: an editable install migrates from this tree's migrations)",
    )
    args = parser.parse_args(argv)
    lines: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    with bench() as ran:
        url, db, fake, pool = ran.url, ran.db, ran.fake, ran.pool
        postmaster = postmaster_of(db)
        label = "[app vs floor]"
        if {"reveal", "quiet", "screen"} & set(args.only):
            app = start_server("app", "slackapp.cli", fake, url, 1, args.app_root)
            floor = start_server("floor", "benchmarks.floor", fake, url, 1)
            durable = start_server(
                "durable floor", "benchmarks.floor", fake, url, 1, settings={"FLOOR": "durable"}
            )
            lean = start_server(
                "lean floor", "benchmarks.floor", fake, url, 1, settings={"FLOOR": "lean"}
            )
            read_first = start_server(
                "read-first floor",
                "benchmarks.floor",
                fake,
                url,
                1,
                settings={"FLOOR": "read-first"},
            )
            beside = []
            if args.beside is not None and "screen" in args.only:
                beside.append(start_server(BESIDE, "slackapp.cli", fake, url, 1, args.beside))
            try:
                warm_up(fake, pool, [app, floor, durable, lean, read_first, *beside])
                if "reveal" in args.only:
                    fast = ballot_to_reveal(fake, db, pool, app, 0.0, args.games)
                    slow = ballot_to_reveal(fake, db, pool, app, 0.1, args.games)
                    ratio = statistics.median(slow) / statistics.median(fast)
                    say(f"{label} reveal, Slack at 0 ms: {summary(fast)}")
                    say(f"{label} reveal, Slack at 100 ms: {summary(slow)}")
                    say(f"{label} reveal: median 100 ms / median 0 ms = {ratio:.2f}x")
                if "quiet" in args.only:
                    shown = quiet_during_burst(fake, db, pool, app, args.games)
                    say(f"{label} quiet table, board: {summary([s for s, _ in shown])}")
                    say(f"{label} quiet table, answer: {summary([a for _, a in shown])}")
                if "screen" in args.only:
                    servers = [app, lean, read_first, floor, durable, *beside]
                    compared = [
                        ("lean floor", LEAN_LABEL),
                        ("read-first floor", READ_FIRST_LABEL),
                        ("floor", label),
                        ("durable floor", DURABLE_LABEL),
                    ]
                    if args.beside is not None:
                        compared.append((BESIDE, f"[app vs {args.beside}]"))
                    tables: list[str] = []
                    for latency_ms in args.slack_ms:
                        with slack_at(fake, latency_ms / 1000):
                            burst = click_to_screen(
                                fake, pool, servers, postmaster, args.rounds, 50
                            )
                            lone = click_to_screen(
                                fake, pool, servers, postmaster, LONE_COMMANDS, 1
                            )
                        at = f"Slack at {latency_ms:g} ms:"
                        for against, said in compared:
                            burst_what = f"{at} 50 /varulv at once in 50 channels"
                            say_screen(say, said, burst_what, burst, against)
                            lone_what = f"{at} one /varulv on an idle server"
                            say_screen(say, said, lone_what, lone, against)
                        tables += ["", *side_by_side(latency_ms, burst, lone)]
                    for line in tables:
                        say(line)
            finally:
                for server in (app, floor, durable, lean, read_first, *beside):
                    server.stop()
        if "deadlines" in args.only:
            for latency_ms in args.slack_ms:
                with slack_at(fake, latency_ms / 1000):
                    result = deadlines_together(
                        fake,
                        db,
                        url,
                        pool,
                        args.deadlines,
                        workspaces=args.workspaces,
                        timers_apart=args.timers_apart,
                    )
                    floor = start_server("floor", "benchmarks.floor", fake, url, 1)
                    try:
                        warm_up(fake, pool, [floor])
                        stormed = floor_storm(fake, pool, floor, int(result["floor_posts"]))
                    finally:
                        floor.stop()
                say(
                    f"[floor] Slack at {latency_ms:g} ms, the bare Bolt floor posting "
                    f"{result['floor_posts']:.0f} messages from 64 threads of its own: done after "
                    f"{stormed['storm_s']:.1f} s; ack p99 meanwhile {stormed['during_p99_ms']:.1f}"
                    f" ms (n={stormed['during_n']:.0f}) vs idle {stormed['idle_p99_ms']:.1f} ms = "
                    f"{stormed['during_p99_ms'] / stormed['idle_p99_ms']:.2f}x; the app's ack p99 "
                    f"meanwhile against the floor's: "
                    f"{result['during_p99_ms'] / stormed['during_p99_ms']:.2f}x"
                )
                say(
                    f"{label} Slack at {latency_ms:g} ms, {result['games']:.0f} deadlines at once"
                    f" over {args.workspaces} workspace(s): every day board posted "
                    f"{result['cleared_s']:.1f} s after the deadline (all committed after "
                    f"{result['committed_s']:.1f} s); ack p99 meanwhile "
                    f"{result['during_p99_ms']:.1f} ms (n={result['during_n']:.0f}) vs idle "
                    f"{result['idle_p99_ms']:.1f} ms = "
                    f"{result['during_p99_ms'] / result['idle_p99_ms']:.2f}x; the app's CPU, "
                    f"serving, stepping and delivering"
                    f"{' (varulv serve and varulv work)' if args.timers_apart else ''}, "
                    f"{result['background_cpu_s']:.1f} s "
                    f"= {result['background_cpu_s'] / result['calls'] * 1000:.2f} ms a Web API "
                    f"call (n={result['calls']:.0f}); reads of undelivered messages "
                    f"{result['held_reads']:.0f} held, {result['claimed_reads']:.0f} claimed; "
                    f"the floor, the same "
                    f"{result['floor_posts']:.0f} messages each posted after a committed row, "
                    f"{result['floor_s']:.1f} s = {result['cleared_s'] / result['floor_s']:.2f}x;"
                    f" load {result['load_before']:.1f} at the deadline, "
                    f"{result['load_after']:.1f} once every board was posted"
                )
        if "lock" in args.only:
            for latency in (0.0, 0.1):
                held = lock_held(fake, url, pool, latency, args.games)
                say(f"lock held, Slack at {ms(latency)} ms: {summary(held)}")
    print("\n".join(["", "## summary", *lines]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
