"""Many tables playing at once in one workspace, the stand-in for Slack enforcing Slack's limits.

    python -m benchmarks.tables                       # 20 ten-seat tables; 1, then 2 processes
    python -m benchmarks.tables --tables 4 --think 1  # smaller, quicker

Each is run twice, by turns: first the floor (the same tables and clicks, no limit at the
stand-in and none in the app), then against Slack's limits.

Every seat is a person, each on a thread of their own, who waits ``--think`` seconds (on
average) before each click, as people at a fika table do: *Join*, then the night's choices in
their DM, *Heard enough* (a majority), and their own ballot. The app runs as ``varulv serve``
with Slack's own pace (50 ``chat.update`` a minute per workspace, all its processes together)
and the stand-in refuses beyond Slack's limits (``slackapp.fakeslack.limits``). Printed:

- a person's own screen after their click (the night DM redrawn after a choice; their ballot
  redrawn after casting it): p50/p99/max;
- each public board (lobby, day, vote, reveal): from its last change (the newest version's
  commit) to the stand-in showing that version, p50/p99/max;
- the most times one message was refused (429) before it went, the stand-in's 429s, and
  whether every game reached its reveal with nothing left to show;
- Web API calls per game by method, and ``chat.update`` per game against the budget.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from sqlalchemy import Engine, create_engine, text

from benchmarks.processes import Server, Slack, add_slack_ms, database, start_server
from benchmarks.stats import percentile
from slackapp.db.engine import make_engine
from slackapp.db.migrate import upgrade
from slackapp.delivery.pacing import Limit, Pacer
from slackapp.fakeslack import JSON, SLACK, UNLIMITED, Message
from tests.databases import fresh_database

T = TypeVar("T")
PATIENCE = 1800.0
"""Only how long a stuck run takes to say so."""
BOARDS = ("lobby", "day", "vote", "reveal")


def wait(done: Callable[[], T | None], what: str, timeout: float = PATIENCE) -> T:
    deadline = time.monotonic() + timeout
    while not (found := done()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return found


@dataclass
class Run:
    fake: Slack
    db: Engine
    server: Server
    think: float
    prefix: str
    own: dict[str, list[float]] = field(default_factory=lambda: {"night": [], "ballot": []})
    lock: threading.Lock = field(default_factory=threading.Lock)
    errors: list[str] = field(default_factory=list)

    def pause(self) -> None:
        time.sleep(random.uniform(0.2, 2 * self.think))  # a person thinking, not a wait for it

    def noted(self, kind: str, seconds: float) -> None:
        with self.lock:
            self.own[kind].append(seconds)

    def scalar(self, sql: str, **params: object) -> object:
        with self.db.connect() as connection:
            return connection.execute(text(sql), params).scalar()

    def phase(self, channel: str) -> str | None:
        found = self.scalar(
            "SELECT phase FROM games WHERE channel_id = :c ORDER BY id DESC LIMIT 1", c=channel
        )
        return None if found is None else str(found)

    def button(self, channel: str, label: str) -> Message | None:
        for message in reversed(self.fake.messages(channel)):
            if any(b.text == label for b in message.buttons()):
                return message
        return None

    def night_dm(self, user: str) -> Message | None:
        return next(
            (m for m in reversed(self.fake.dm_messages(user)) if "Your card" in m.rendered_text),
            None,
        )

    def person(self, channel: str, user: str, host: bool, seats: int) -> None:
        fake = self.fake
        lobby = wait(lambda: self.button(channel, "Join"), "the lobby")
        if not host:
            self.pause()
            fake.click_button(user, lobby, "Join")
        else:
            wait(
                lambda: (
                    self.scalar(
                        "SELECT count(*) FROM seats JOIN games ON games.id = seats.game_id "
                        "WHERE games.channel_id = :c",
                        c=channel,
                    )
                    == seats
                ),
                "every seat taken",
            )
            fake.click_button(user, lobby, "Start")
        dm = wait(lambda: self.night_dm(user), "the night DM")
        while dm.buttons():
            self.pause()
            before = dm.blocks
            clicked = time.monotonic()
            fake.click(user, dm, dm.buttons()[0].action_id)
            dm = fake.wait_for(
                functools.partial(self.redrawn, user, before), PATIENCE, "the DM redrawn"
            )
            self.noted("night", time.monotonic() - clicked)
        wait(lambda: self.phase(channel) in ("day", "vote", "over") or None, "the day")
        if int(user[-2:]) <= seats // 2:  # a majority has heard enough
            self.pause()
            if self.phase(channel) == "day":
                board = wait(lambda: self.button(channel, "Heard enough"), "the day board")
                fake.click_button(user, board, "Heard enough")
        wait(lambda: self.phase(channel) in ("vote", "over") or None, "the vote")
        self.pause()
        ballot = self.own_ballot(channel, user)
        before = ballot.blocks
        clicked = time.monotonic()
        fake.click(user, ballot, ballot.buttons()[-1].action_id)  # Nobody
        fake.wait_for(
            lambda: fake.message(ballot.channel, ballot.ts).blocks != before,
            PATIENCE,
            "the ballot redrawn",
        )
        self.noted("ballot", time.monotonic() - clicked)

    def redrawn(self, user: str, before: list[JSON]) -> Message | None:
        dm = self.night_dm(user)
        return dm if dm is not None and dm.blocks != before else None

    def own_ballot(self, channel: str, user: str) -> Message:
        def ballots() -> list[Message]:
            shown = self.fake.ephemerals(user, channel)
            return [m for m in shown if "Your sealed ballot" in m.rendered_text]

        board = wait(lambda: self.button(channel, "Vote"), "the vote board")
        before = len(ballots())
        self.fake.click_button(user, board, "Vote")
        return self.fake.wait_for(
            lambda: ballots()[before] if len(ballots()) > before else None, PATIENCE, "a ballot"
        )

    def table(self, number: int, seats: int) -> list[threading.Thread]:
        channel = f"C{self.prefix}{number:03d}"
        users = [f"U{self.prefix}{number:03d}{n:02d}" for n in range(seats)]
        self.fake.add_channel(channel, channel.lower())
        for user in users:
            self.fake.add_user(user, user.lower())
        self.fake.slash_command(users[0], channel_id=channel)
        return [
            threading.Thread(target=self.safely, args=(channel, user, n == 0, seats))
            for n, user in enumerate(users)
        ]

    def safely(self, channel: str, user: str, host: bool, seats: int) -> None:
        try:
            self.person(channel, user, host, seats)
        except Exception as error:
            with self.lock:
                self.errors.append(f"{user}: {error}")


def board_lags(fake: Slack, db: Engine) -> dict[str, list[float]]:
    """Per public board, by board: seconds from its newest version's commit to the stand-in
    showing it (posted, updated, or redrawn through a click's response_url)."""
    answered: dict[tuple[str, str], float] = {}
    for call in fake.calls:  # a click's response_url redraws in place: its answer names where
        redrawn = call.method == "response_url" and call.params.get("replace_original")
        if call.ok and (redrawn or call.method in ("chat.update", "chat.postMessage")):
            answered[(str(call.response.get("channel")), str(call.response.get("ts")))] = call.at
    with db.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT m.surface, m.channel, m.ts, m.version, o.version, "
                "extract(epoch FROM o.created_at)::float8 FROM messages m "
                "JOIN LATERAL (SELECT version, created_at FROM outbox WHERE stream = m.stream "
                "AND surface = m.surface ORDER BY version DESC LIMIT 1) o ON true "
                "WHERE m.surface = ANY(:boards)"
            ),
            {"boards": list(BOARDS)},
        ).all()
    lags: dict[str, list[float]] = {board: [] for board in BOARDS}
    for surface, channel, ts, shown, newest, changed in rows:
        at = answered.get((channel, ts))
        lag = float("inf") if at is None or shown != newest else max(0.0, at - changed)
        lags[surface].append(lag)
    return lags


def summary(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"p50 {percentile(values, 0.5):.2f} s, p99 {percentile(values, 0.99):.2f} s, "
        f"max {max(values):.2f} s ({len(values)})"
    )


@contextmanager
def app_for(fake: Slack, url: str, workers: int, limited: bool) -> Iterator[Server]:
    # Slack's pace, as deployed; unpaced for the floor, whose stand-in has no limit.
    os.environ["VARULV_UPDATES_PER_MINUTE"] = "50" if limited else "1000000"
    os.environ["VARULV_UPDATE_BURST"] = "50" if limited else "1000000"
    server = start_server(f"tables-{workers}", "slackapp.cli", fake, url, workers)
    try:
        yield server
    finally:
        server.stop()


def one_run(
    server_url: str,
    tables: int,
    seats: int,
    workers: int,
    think: float,
    limited: bool = True,
    slack_ms: float = 0.0,
) -> None:
    """``limited``: the stand-in enforces Slack's limits and the app keeps Slack's pace; else
    the floor: the same tables and clicks with no limit anywhere."""
    url = fresh_database(server_url, f"tables{workers}")
    db = create_engine(url)
    limits = SLACK if limited else UNLIMITED
    with (
        Slack(limits=limits, slack_ms=slack_ms) as fake,
        app_for(fake, url, workers, limited) as server,
    ):
        fake.app_url = server.events_url
        run = Run(fake, db, server, think, prefix=f"T{workers}")
        started = time.monotonic()
        people = [thread for n in range(tables) for thread in run.table(n, seats)]
        for thread in people:
            thread.start()
        for thread in people:
            thread.join()

        def over() -> bool:
            games = run.scalar("SELECT count(*) FROM games WHERE phase = 'over'")
            left = run.scalar("SELECT count(*) FROM outbox WHERE done_at IS NULL")
            return games == tables and left == 0

        stuck = ""
        try:
            wait(lambda: over() or None, "every game over and shown", timeout=600)
        except TimeoutError as error:
            stuck = f" STUCK: {error}"
        took = time.monotonic() - started
        attempts = run.scalar("SELECT coalesce(max(attempts), 0) FROM outbox")
        failed = run.scalar(
            "SELECT count(*) FROM outbox WHERE failure IS NOT NULL AND failure <> 'superseded'"
        )
        calls = Counter(c.method for c in fake.calls if c.ok)
        dm_updates = sum(
            1
            for c in fake.calls
            if c.method == "chat.update" and c.ok and str(c.params.get("channel")).startswith("D")
        )
        load = os.getloadavg()[0]
        kind = "Slack's limits" if limited else "the floor: no limits"
        print(f"\n{tables} tables of {seats}, {workers} web process(es), think {think:g} s, {kind}")
        print(f"  took {took:.0f} s; every game over and shown: {not stuck}{stuck}")
        print(f"  own night DM after a click: {summary(run.own['night'])}")
        print(f"  own ballot after casting it: {summary(run.own['ballot'])}")
        lags = board_lags(fake, db)
        every = [lag for each in lags.values() for lag in each]
        print(f"  board right after its last change: {summary(every)}")
        print(
            "    by board, max: "
            + ", ".join(f"{b} {max(v, default=0):.2f} s" for b, v in lags.items())
        )
        print(f"  most 429s before one message went: {attempts}; failed messages: {failed}")
        print(f"  the stand-in's 429s: {dict(fake.api.limiter.refused) or 'none'}")
        per_game = {method: round(n / tables, 1) for method, n in sorted(calls.items())}
        print(f"  calls per game: {per_game}")
        updates = calls["chat.update"] / tables
        print(
            f"  chat.update per game {updates:.1f} ({dm_updates / tables:.1f} of them DMs): "
            f"{tables} games need {updates * tables / 50:.1f} minutes of a 50-a-minute budget"
        )
        print(f"  load average {load:.2f}; errors: {run.errors[:3] or 'none'}")
    db.dispose()


def pacing_cost(server_url: str, calls: int = 2000) -> None:
    """What a turn from the shared bucket costs a call: one statement on the database, against
    the same from a bucket in the process's memory, by turns."""
    url = fresh_database(server_url, "pacing")
    engine = make_engine(url)
    upgrade(engine)
    roomy = Limit(1e9, 1_000_000)  # never a wait: only the cost of asking is measured
    shared, alone = Pacer(updates=roomy, engine=engine), Pacer(updates=roomy)
    spent = {"database": 0.0, "memory": 0.0}
    for n in range(calls):
        for name, pacer in (("database", shared), ("memory", alone)):
            started = time.perf_counter()
            pacer.update(f"T{n % 20}")
            spent[name] += time.perf_counter() - started
    engine.dispose()
    print(
        f"a turn from the shared bucket: {spent['database'] / calls * 1000:.3f} ms a call, "
        f"from memory {spent['memory'] / calls * 1e6:.1f} µs ({calls} calls each, by turns; "
        f"load {os.getloadavg()[0]:.2f})"
    )


def sizes(options: argparse.Namespace) -> tuple[int, int]:
    return int(options.tables), int(options.seats)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--seats", type=int, default=10)
    parser.add_argument("--think", type=float, default=3.0, help="seconds before a click")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-floor", action="store_true", help="skip the runs with no limits")
    add_slack_ms(parser)
    options = parser.parse_args(argv)
    with database() as server_url:
        pacing_cost(server_url)
        for workers in options.processes:  # by turns: the floor, then Slack's limits
            for limited in (False, True) if not options.no_floor else (True,):
                one_run(
                    server_url,
                    *sizes(options),
                    workers,
                    options.think,
                    limited,
                    options.slack_ms,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
