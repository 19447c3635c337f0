"""Load benchmark: Varulv under many concurrent games, against the bare Bolt floor, in one run.

    python -m benchmarks.load                 # the full run that BENCHMARKS.md reports
    python -m benchmarks.load --games 20 --open-games 200 --processes 1   # a quick look

It starts PostgreSQL (embedded, or ``DATABASE_URL``), a local stand-in for Slack's Web API, the
app (``varulv serve``: one process, then two on the same database) and the floor (a Bolt app
that only acknowledges, ``benchmarks/floor.py``, with the same workers and threads). For each G
it plays G games at once, each with three scripted people and two bots, phase by phase: every
phase is one storm of signed requests, at most 50 in flight, fired at the app and then, once the
app has done the work, the very same requests at the floor. It prints:

- acknowledgement latency p50/p95/p99 of slash commands and clicks, app and floor, and the ratio;
- Slack Web API calls per game, by G (they must not grow with G);
- SQL statements per interaction with 50, 200 and 1,000 other games open (must not grow);
- deadline lateness p50/p99 with 1,000 open games whose deadlines fall in one window;
- peak memory (VmHWM) of each app process.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import requests
from slack_sdk import WebClient
from sqlalchemy import Engine, create_engine, event, text

from benchmarks.fire import Prepared, Timed, fire
from slackapp.blocks.ids import ButtonValue
from slackapp.db.engine import make_engine, make_sessions, sqlalchemy_url, temporary_postgres
from slackapp.db.migrate import upgrade
from slackapp.db.models import Game, Phase, Seat, SlackMessage
from slackapp.fakeslack import FakeSlack, Message
from slackapp.game import deal
from slackapp.game import machine as m
from slackapp.game.machine import DAY_SECONDS_BOUNDS, NIGHT_SECONDS_BOUNDS, VOTE_SECONDS_BOUNDS
from slackapp.steps import Steps
from slackapp.timers import Deadlines

ROOT = Path(__file__).resolve().parents[1]
SECRET = "load-signing-secret"
TOKEN = "xoxb-load"
TEAM = "T0001"
IN_FLIGHT = 50
LONG = {
    "night": NIGHT_SECONDS_BOUNDS[1],
    "day": DAY_SECONDS_BOUNDS[1],
    "vote": VOTE_SECONDS_BOUNDS[1],
}
"""Phase lengths for the storms, the longest allowed: every phase ends by clicks, not a timer."""


# -- the stand-in for Slack ----------------------------------------------------------------


class Slack(FakeSlack):
    def __init__(self) -> None:
        super().__init__(SECRET, tokens=[TOKEN])

    @contextlib.contextmanager
    def preparing(self, kind: str) -> Iterator[list[Prepared]]:
        """Commands and clicks inside the block are signed and kept for a storm, not sent."""
        prepared: list[Prepared] = []
        with self.keeping_requests() as kept:
            yield prepared
        prepared += [Prepared(kind, r.body.encode(), tuple(r.headers.items())) for r in kept]


# -- processes -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    name: str
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    @property
    def events_url(self) -> str:
        return f"{self.url}/slack/events"

    def processes(self) -> list[int]:
        """The gunicorn master and its workers."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        found = children.read_text().split() if children.exists() else []
        return [self.process.pid, *(int(pid) for pid in found)]

    def peak_memory_mb(self) -> dict[int, float]:
        """VmHWM (peak resident set) of every process, in MB."""
        peaks = {}
        for pid in self.processes():
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peaks[pid] = int(line.split()[1]) / 1024
        return peaks

    def errors_logged(self) -> int:
        lines = self.log.read_text(errors="replace").splitlines()
        return sum(" ERROR " in line or line.startswith("Traceback") for line in lines)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.unlink(missing_ok=True)


def start_server(
    name: str, module: str, fake: FakeSlack, database_url: str, workers: int, root: Path = ROOT
) -> Server:
    port = free_port()
    descriptor, log_name = tempfile.mkstemp(prefix=f"varulv-{name}-", suffix=".log")
    os.close(descriptor)
    log = Path(log_name)
    env = {
        **os.environ,
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.api_url,
        "DATABASE_URL": database_url,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "WEB_CONCURRENCY": str(workers),
        "VARULV_NIGHT_SECONDS": str(LONG["night"]),
        "VARULV_DAY_SECONDS": str(LONG["day"]),
        "VARULV_VOTE_SECONDS": str(LONG["vote"]),
    }
    env.pop("SLACK_APP_TOKEN", None)
    argv = [sys.executable, "-m", module, *(["serve"] if module == "slackapp.cli" else [])]
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Server(name, process, f"http://127.0.0.1:{port}", log)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text()[-3000:]
            server.stop()
            raise RuntimeError(f"{name} exited at start:\n{tail}")
        # Refused, or held in the socket's backlog by a worker still starting.
        with contextlib.suppress(requests.RequestException):
            healthy = requests.get(f"{server.url}/healthz", timeout=1).status_code == 200
            # The master answers once a worker is up; wait until every worker has forked.
            if healthy and len(server.processes()) > workers:
                return server
        time.sleep(0.1)
    tail = log.read_text()[-3000:]
    server.stop()
    raise RuntimeError(f"{name} did not become healthy:\n{tail}")


# -- statistics ------------------------------------------------------------------------------


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (p99 of 50 samples is the largest)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), round(share * len(ordered) + 0.5)))
    return ordered[rank - 1]


@dataclass
class Latencies:
    samples: dict[str, list[float]] = field(default_factory=dict)
    failures: Counter[str] = field(default_factory=Counter)

    def add(self, timed: Sequence[Timed]) -> None:
        for each in timed:
            if each.status != 200:
                self.failures[f"{each.kind} HTTP {each.status}"] += 1
            self.samples.setdefault(each.kind, []).append(each.seconds)

    def summary(self, kind: str) -> tuple[float, float, float, int]:
        """Percentiles in ms of every storm whose kind is ``kind`` or ``kind:…``."""
        values = [
            seconds
            for each, samples in self.samples.items()
            if each == kind or each.startswith(kind + ":")
            for seconds in samples
        ]
        return (
            percentile(values, 0.50) * 1000,
            percentile(values, 0.95) * 1000,
            percentile(values, 0.99) * 1000,
            len(values),
        )


# -- G games at once -------------------------------------------------------------------------


@dataclass
class Scripted:
    channel: str
    people: list[str]


class Storms:
    """G games played phase by phase; each phase's requests go out as one storm."""

    def __init__(
        self,
        fake: Slack,
        db: Engine,
        pool: ProcessPoolExecutor,
        app: Server,
        floor: Server,
        games: int,
        run: str,
    ) -> None:
        self.fake, self.db, self.pool, self.app, self.floor = fake, db, pool, app, floor
        self.prefix = f"C{run}"
        self.games = [
            Scripted(f"{self.prefix}{g:04d}", [f"U{run}{g:04d}{seat}" for seat in "ABC"])
            for g in range(games)
        ]
        for game in self.games:
            fake.add_channel(game.channel, game.channel.lower())
            for user in game.people:
                fake.add_user(user, user.lower())
        self.app_latency = Latencies()
        self.floor_latency = Latencies()

    def play(self) -> None:
        count = len(self.games)
        self.storm("command:open", self._commands, lambda: self._lobbies() == count)
        self.storm("click:join", self._joins, lambda: self._seated() == 3 * count)
        self.storm("click:fill", self._fill, lambda: self._seated() == 5 * count)
        self.storm("click:start", self._start, lambda: self._phases().get("night") == count)
        for _round in range(4):  # a Troublemaker needs two clicks, everyone else one
            if self._phases().get("day") == count:
                break
            self.storm("click:night", self._night_round, lambda: self._dms_settled())
        self.wait(lambda: self._phases().get("day") == count, "every game at day")
        self.storm("click:heard", self._heard, lambda: self._phases().get("vote") == count)
        self.storm("click:vote", self._vote, lambda: self._phases().get("over") == count)

    def storm(self, kind: str, prepare: Callable[[], None], done: Callable[[], bool]) -> None:
        with self.fake.preparing(kind) as prepared:
            prepare()
        if not prepared:
            return
        app = self.pool.submit(fire, self.app.events_url, prepared, IN_FLIGHT).result()
        self.app_latency.add(app)
        self.wait(done, f"the app to finish a storm of {len(prepared)} {kind}s")
        self.settle()
        # The same signed requests at the floor, now that the app has gone quiet.
        floor = self.pool.submit(fire, self.floor.events_url, prepared, IN_FLIGHT).result()
        self.floor_latency.add(floor)

    def settle(self, quiet: float = 0.25, timeout: float = 30) -> None:
        """Wait until the app has made no Web API call for ``quiet`` seconds: its last replies
        and redraws are out, so the next storm meets an idle app, as the floor does."""
        deadline = time.monotonic() + timeout
        seen = len(self.fake.calls)
        while time.monotonic() < deadline:
            time.sleep(quiet)
            now = len(self.fake.calls)
            if now == seen:
                return
            seen = now

    def wait(self, done: Callable[[], bool], what: str, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                log = self.app.log.read_text()[-3000:]
                raise TimeoutError(f"timed out waiting for {what}\n{log}")
            time.sleep(0.05)

    # what each phase sends

    def _commands(self) -> None:
        for game in self.games:
            self.fake.slash_command(game.people[0], channel_id=game.channel)

    def _joins(self) -> None:
        for game in self.games:
            message, button = self.fake.find_button(game.channel, "Join")
            for user in game.people[1:]:
                self.fake.click(user, message, button.action_id)

    def _fill(self) -> None:
        for game in self.games:
            self.fake.click_button(game.people[0], game.channel, "Fill with bots")

    def _start(self) -> None:
        for game in self.games:
            self.fake.click_button(game.people[0], game.channel, "Start")

    def _night_dm(self, user: str) -> Message | None:
        return next(
            (m for m in reversed(self.fake.dm_messages(user)) if "Your card" in m.rendered_text),
            None,
        )

    def _night_round(self) -> None:
        self._pending: dict[str, Any] = {}
        for game in self.games:
            for user in game.people:
                dm = self._night_dm(user)
                if dm is None or not dm.buttons():
                    continue
                self._pending[user] = dm.blocks
                self.fake.click(user, dm, dm.buttons()[0].action_id)  # each card's first move

    def _dms_settled(self) -> bool:
        return all(
            (dm := self._night_dm(user)) is not None and dm.blocks != before
            for user, before in self._pending.items()
        )

    def _heard(self) -> None:
        for game in self.games:
            for user in game.people[:2]:  # two of three is more than half
                self.fake.click_button(user, game.channel, "Heard enough")

    def _vote(self) -> None:
        for game in self.games:
            message, _ = self.fake.find_button(game.channel, "Nobody")
            buttons = message.buttons()
            for index, user in enumerate(game.people):
                target = game.people[(index + 1) % len(game.people)]
                chosen = next(b for b in buttons if ButtonValue.unpack(b.value).target == target)
                self.fake.click(user, message, chosen.action_id)

    # progress, from the database

    def _phases(self) -> dict[str, int]:
        with self.db.connect() as connection:
            rows = connection.execute(
                text(
                    "SELECT phase, count(*) FROM games WHERE channel_id LIKE :p "
                    "AND (phase <> 'lobby' OR EXISTS (SELECT 1 FROM messages "
                    "WHERE messages.game_id = games.id AND surface = 'lobby')) GROUP BY phase"
                ),
                {"p": self.prefix + "%"},
            )
            return {phase: int(count) for phase, count in rows}

    def _lobbies(self) -> int:
        return self._phases().get("lobby", 0)

    def _seated(self) -> int:
        with self.db.connect() as connection:
            return int(
                connection.execute(
                    text(
                        "SELECT count(*) FROM seats JOIN games ON games.id = seats.game_id "
                        "WHERE games.channel_id LIKE :p"
                    ),
                    {"p": self.prefix + "%"},
                ).scalar_one()
            )


@dataclass
class RunResult:
    games: int
    processes: int
    rounds: int
    app: Latencies
    floor: Latencies
    calls_per_game: float
    calls_by_method: dict[str, float]
    peak_mb: list[float]
    errors_logged: int
    seconds: float


def warm_up(fake: Slack, pool: ProcessPoolExecutor, servers: list[Server]) -> None:
    """A few ``/varulv help`` first, one at a time: each server's first request makes Bolt
    check the token with Slack (the floor did at start-up) and fills Python's caches."""
    fake.add_channel("CWARMUP", "warm-up")
    with fake.preparing("warm-up") as prepared:
        for _ in range(10):
            fake.slash_command("UWARMUP", text="help", channel_id="CWARMUP")
    for server in servers:
        pool.submit(fire, server.events_url, prepared, 1).result()


def run_games(
    fake: Slack,
    db: Engine,
    database_url: str,
    pool: ProcessPoolExecutor,
    games: int,
    workers: int,
    repeat: int = 1,
    app_root: Path = ROOT,
) -> RunResult:
    """G games at once, ``repeat`` times over (fresh games each time, samples pooled)."""
    app = start_server("app", "slackapp.cli", fake, database_url, workers, app_root)
    floor = start_server("floor", "benchmarks.floor", fake, database_url, workers)
    try:
        warm_up(fake, pool, [app, floor])
        before = len(fake.calls)
        started = time.monotonic()
        app_latency, floor_latency = Latencies(), Latencies()
        for round_number in range(repeat):
            run = f"{workers}{games:03d}{round_number}"[-5:]
            storms = Storms(fake, db, pool, app, floor, games, run=run)
            storms.app_latency, storms.floor_latency = app_latency, floor_latency
            storms.play()
        seconds = time.monotonic() - started
        calls = [c for c in fake.calls[before:] if c.method not in ("response_url", "auth.test")]
        by_method = Counter(c.method for c in calls)
        workers_peak = [mb for pid, mb in app.peak_memory_mb().items() if pid != app.process.pid]
        played = games * repeat
        return RunResult(
            games=games,
            processes=workers,
            rounds=repeat,
            app=app_latency,
            floor=floor_latency,
            calls_per_game=len(calls) / played,
            calls_by_method={m: n / played for m, n in sorted(by_method.items())},
            peak_mb=workers_peak,
            errors_logged=app.errors_logged(),
            seconds=seconds,
        )
    finally:
        app.stop()
        floor.stop()


# -- games created directly in the database ---------------------------------------------------


def open_games(
    fake: FakeSlack, db: Engine, count: int, prefix: str, deadlines: Sequence[datetime]
) -> list[int]:
    """``count`` games at night with three people and two bots, their messages in the fake."""
    sessions = make_sessions(db)
    with sessions() as session, session.begin():
        created: list[tuple[Game, list[tuple[str, str, str]]]] = []
        for index in range(count):
            channel = f"{prefix}{index:05d}"
            fake.add_channel(channel, channel.lower())
            people = [f"U{prefix[1:]}{index:05d}{seat}" for seat in "ABC"]
            shown: list[tuple[str, str, str]] = []
            game = Game(
                team_id=TEAM,
                channel_id=channel,
                host_user_id=people[0],
                phase=Phase.NIGHT,
                seed=random.getrandbits(62),
                night_seconds=LONG["night"],
                day_seconds=LONG["day"],
                vote_seconds=LONG["vote"],
                bots_allowed=True,
                deadline=deadlines[index],
            )
            for position, user in enumerate(people):
                fake.add_user(user, user.lower())
                dm = fake.add_message(
                    fake.api.bot_message(fake.dm_channel(user), "Your card for tonight", [])
                )
                game.seats.append(
                    Seat(
                        position=position,
                        user_id=user,
                        display_name=user.lower(),
                        dm_channel=dm.channel,
                    )
                )
                shown.append((f"dm:{user}", dm.channel, dm.ts))
            for position in (3, 4):
                bot = f"bot{position - 2}"
                game.seats.append(
                    Seat(position=position, bot_name=bot, display_name=bot, confirmed=True)
                )
            dealt = deal([seat.key for seat in game.seats], game.seed)
            for seat in game.seats:
                seat.dealt = dealt.dealt[seat.key].value
            game.center = [card.value for card in dealt.center]
            board = fake.add_message(fake.api.bot_message(channel, "Night falls", []))
            shown.append(("lobby", channel, board.ts))
            session.add(game)
            created.append((game, shown))
        session.flush()
        for game, shown in created:
            for surface, where, ts in shown:
                session.add(
                    SlackMessage(game_id=game.id, surface=surface, channel=where, ts=ts, version=1)
                )
        return [game.id for game, _ in created]


def close_games(db: Engine, prefix: str) -> None:
    with db.begin() as connection:
        connection.execute(
            text(
                "UPDATE games SET phase = 'stopped', deadline = NULL "
                "WHERE channel_id LIKE :p AND phase IN ('lobby', 'night', 'day', 'vote')"
            ),
            {"p": prefix + "%"},
        )


# -- SQL statements per interaction ------------------------------------------------------------


def statements_per_interaction(fake: Slack, database_url: str, game_number: int) -> dict[str, str]:
    """Play one game in this process, counting the SQL each step sends: "statements (round
    trips)", where round trips add BEGIN, COMMIT and the pool's liveness ping."""
    engine = make_engine(database_url)  # the app's own pool settings, pre-ping included
    sent: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *args: sent.append("statement"))
    for round_trip in ("begin", "commit", "rollback"):
        event.listen(engine, round_trip, lambda *args, kind=round_trip: sent.append(kind))
    event.listen(engine.pool, "checkout", lambda *args: sent.append("ping"))
    client = WebClient(token=TOKEN, base_url=fake.api_url)
    sessions = make_sessions(engine)

    class NoDelivery:
        """Steps only: the deliverer's own statements come after the commit, not in a step."""

        def kick(self, game_id: int) -> None:
            pass

    steps = Steps(sessions, m.Lengths(3600, 3600, 3600), NoDelivery(), Deadlines(sessions))
    channel = f"CSQL{game_number:04d}"
    people = [f"USQL{game_number:04d}{seat}" for seat in "ABC"]
    fake.add_channel(channel, channel.lower())
    for user in people:
        fake.add_user(user, user.lower())
    counts: dict[str, str] = {}

    def tally() -> str:
        return f"{sent.count('statement')} ({len(sent)})"

    def count(name: str, step: Callable[[], object]) -> None:
        sent.clear()
        step()
        counts.setdefault(name, tally())

    def state() -> m.GameState:
        found = steps._read(game_id)
        assert found is not None
        return found

    count("/varulv (open a table)", lambda: steps.open_table(TEAM, channel, people[0], "a"))
    with engine.connect() as connection:
        game_id = int(
            connection.execute(
                text("SELECT id FROM games WHERE channel_id = :c"), {"c": channel}
            ).scalar_one()
        )
    with engine.begin() as connection:  # the same deal every time: bots' moves change the SQL
        connection.execute(text("UPDATE games SET seed = 7 WHERE id = :id"), {"id": game_id})
    count("join", lambda: steps.act(game_id, m.Join(people[1], "b")))
    steps.act(game_id, m.Join(people[2], "c"))
    count("fill with bots", lambda: steps.act(game_id, m.FillWithBots(people[0])))
    count("start (deal; DMs opened before it)", lambda: steps.start(game_id, people[0], client))
    for user in people:
        while (current := state()).phase == m.Phase.NIGHT and user in current.awaiting():
            kind = current.choice_kind(user)
            others = [seat.key for seat in current.seats if seat.key != user]
            move: m.Event = {
                None: m.NightConfirm(user),
                "peek": m.NightPeek(user, 0),
                "look": m.NightLook(user, None),
                "rob": m.NightRob(user, others[0]),
                "swap": m.NightPick(
                    user,
                    others[0]
                    if current.seat(user).pending is None  # type: ignore[union-attr]
                    else others[1],
                ),
            }[kind]
            sent.clear()
            steps.act(game_id, move)
            name = "night choice, the last (dawn)" if state().phase == "day" else "night choice"
            counts.setdefault(name, tally())
    count("heard enough", lambda: steps.act(game_id, m.HeardEnough(people[0])))
    count("heard enough, the vote opens", lambda: steps.act(game_id, m.HeardEnough(people[1])))
    count("ballot", lambda: steps.act(game_id, m.CastBallot(people[0], people[1])))
    steps.act(game_id, m.CastBallot(people[1], people[2]))
    count("ballot, the last (reveal)", lambda: steps.act(game_id, m.CastBallot(people[2], None)))
    count("deadline sweep (nothing due)", lambda: steps.alarm.due_games())  # type: ignore[attr-defined]
    engine.dispose()
    return counts


# -- deadline lateness -----------------------------------------------------------------------


@dataclass
class Lateness:
    games: int
    processes: int
    window: float
    late: list[float]
    peak_mb: list[float]
    missed: int


def deadline_lateness(
    fake: Slack, db: Engine, database_url: str, games: int, workers: int, window: float
) -> Lateness:
    """``games`` open games whose nights end within ``window`` seconds, starting soon after the
    app starts: how late does each day board appear after its deadline?"""
    prefix = f"CL{workers}"
    lead = 10.0
    first = datetime.now(UTC) + timedelta(seconds=lead)
    spread = [first + timedelta(seconds=window * i / games) for i in range(games)]
    random.shuffle(spread)
    open_games(fake, db, games, prefix, spread)
    deadline_of = {f"{prefix}{i:05d}": spread[i].timestamp() for i in range(games)}
    before = len(fake.calls)
    app = start_server("app", "slackapp.cli", fake, database_url, workers)
    try:
        end = time.monotonic() + lead + window + 60
        while time.monotonic() < end:
            with db.connect() as connection:
                left = connection.execute(
                    text("SELECT count(*) FROM games WHERE channel_id LIKE :p AND phase = 'night'"),
                    {"p": prefix + "%"},
                ).scalar_one()
            if left == 0:
                break
            time.sleep(0.5)
        day_posted: dict[str, float] = {}
        for call in fake.calls[before:]:
            channel = str(call.params.get("channel", ""))
            if call.method == "chat.postMessage" and channel in deadline_of and call.ok:
                day_posted.setdefault(channel, call.at)
        late = [day_posted[c] - deadline_of[c] for c in day_posted]
        peaks = [mb for pid, mb in app.peak_memory_mb().items() if pid != app.process.pid]
        return Lateness(games, workers, window, late, peaks, games - len(day_posted))
    finally:
        app.stop()
        close_games(db, prefix)


# -- the report ------------------------------------------------------------------------------


def _lateness_table(lateness: list[Lateness]) -> list[str]:
    lines = ["", "## Deadline lateness with open games", ""]
    lines.append("Lateness: the day board's post at the fake Slack, minus the night's deadline.")
    lines.append("")
    lines.append("| open games | window | processes | p50 ms | p99 ms | max ms | missed |")
    lines.append("|---|---|---|---|---|---|---|")
    for each in lateness:
        late = each.late or [float("nan")]
        lines.append(
            f"| {each.games} | {each.window:.0f} s | {each.processes} | "
            f"{percentile(late, 0.5) * 1000:.0f} | {percentile(late, 0.99) * 1000:.0f} | "
            f"{max(late) * 1000:.0f} | {each.missed} |"
        )
    return lines


def _statements_table(statements: dict[int, dict[str, str]]) -> list[str]:
    opened = sorted(statements)
    lines = ["", "## SQL statements per interaction, by the number of other open games", ""]
    lines.append("Statements (round trips: with BEGIN, COMMIT and the pool's liveness ping).")
    lines.append("")
    lines.append("| interaction | " + " | ".join(f"{n} open" for n in opened) + " |")
    lines.append("|---|" + "---|" * len(opened))
    for step in statements[opened[0]]:
        lines.append(
            f"| {step} | " + " | ".join(str(statements[n].get(step, "-")) for n in opened) + " |"
        )
    return lines


def report(
    runs: list[RunResult],
    statements: dict[int, dict[str, str]],
    lateness: list[Lateness],
    detail: bool = False,
) -> str:
    lines = ["## Acknowledgement latency (ms), app vs. bare Bolt floor, same run", ""]
    lines.append(
        "| G | processes | kind | n | app p50 | app p95 | app p99 | floor p50 | floor p95 "
        "| floor p99 | p99 ratio |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        for kind in ("command", "click"):
            a50, a95, a99, n = run.app.summary(kind)
            f50, f95, f99, _ = run.floor.summary(kind)
            lines.append(
                f"| {run.games} (x{run.rounds}) | {run.processes} | {kind} | {n} | {a50:.1f} | "
                f"{a95:.1f} | {a99:.1f} | {f50:.1f} | {f95:.1f} | {f99:.1f} | {a99 / f99:.2f}x |"
            )
    if detail:
        lines += ["", "Per storm (p50 / p99 ms, app then floor):", ""]
        for run in runs:
            for kind in run.app.samples:
                a50, _, a99, n = run.app.summary(kind)
                f50, _, f99, _ = run.floor.summary(kind)
                lines.append(
                    f"- G={run.games} x{run.processes} {kind} ({n}): "
                    f"{a50:.0f} / {a99:.0f} vs {f50:.0f} / {f99:.0f}"
                )
    failures = [(run, run.app.failures + run.floor.failures) for run in runs]
    if any(f for _, f in failures):
        lines.append("")
        for run, failed in failures:
            if failed:
                where = f"G={run.games}, {run.processes} process(es)"
                lines.append(f"- {where}: non-200 answers {dict(failed)}")
    lines += ["", "## Slack Web API calls per game", ""]
    methods = sorted({m for run in runs for m in run.calls_by_method})
    lines.append("| G | processes | all | " + " | ".join(methods) + " | app errors logged | run |")
    lines.append("|---|---|---|" + "---|" * len(methods) + "---|---|")
    for run in runs:
        cells = " | ".join(f"{run.calls_by_method.get(m, 0):.2f}" for m in methods)
        lines.append(
            f"| {run.games} | {run.processes} | {run.calls_per_game:.2f} | {cells} | "
            f"{run.errors_logged} | {run.seconds:.0f} s |"
        )
    if statements:
        lines += _statements_table(statements)
    if lateness:
        lines += _lateness_table(lateness)
    lines += ["", "## Peak memory per app worker process (VmHWM, MB)", ""]
    for run in runs:
        peaks = ", ".join(f"{mb:.0f}" for mb in run.peak_mb)
        lines.append(f"- G={run.games}, {run.processes} process(es): {peaks}")
    for each in lateness:
        peaks = ", ".join(f"{mb:.0f}" for mb in each.peak_mb)
        lines.append(f"- {each.games} open games, {each.processes} process(es): {peaks}")
    return "\n".join(lines)


@contextlib.contextmanager
def database() -> Iterator[str]:
    given = os.environ.get("DATABASE_URL")
    if given:
        yield given
        return
    with temporary_postgres("varulv-load-pg-") as server:
        yield str(server.get_uri())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--open-games", type=int, default=1000)
    parser.add_argument("--window", type=float, default=60.0, help="seconds the deadlines span")
    parser.add_argument(
        "--samples",
        type=int,
        default=3600,
        help="play G games again until about this many requests are timed (p99 needs many)",
    )
    parser.add_argument("--json", help="also write the raw numbers here")
    parser.add_argument("--detail", action="store_true", help="percentiles of every storm")
    parser.add_argument("--skip-deadlines", action="store_true", help="no lateness run")
    parser.add_argument(
        "--app-root",
        help="serve the app from another checkout (an earlier commit, for a before/after); "
        "only the storms are measured then, since the rest runs this checkout's code",
    )
    args = parser.parse_args(argv)

    random.seed(7)
    with (
        database() as url,
        Slack() as fake,
        ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool,
    ):
        db = create_engine(sqlalchemy_url(url))
        if args.app_root is None:
            upgrade(db)  # else the other checkout's app brings the schema to its own version
        pool.submit(fire, "http://127.0.0.1:9/", [], 1).result()  # start the client process
        runs = []
        for workers in args.processes:
            for games in args.games:
                print(f"… {games} games, {workers} process(es)", file=sys.stderr, flush=True)
                repeat = max(1, args.samples // (games * 12))  # about 12 requests per game
                root = Path(args.app_root) if args.app_root else ROOT
                runs.append(run_games(fake, db, url, pool, games, workers, repeat, root))
        statements: dict[int, dict[str, str]] = {}
        opened = 0
        for target in [] if args.app_root else sorted({50, 200, args.open_games}):
            far = [datetime.now(UTC) + timedelta(hours=1)] * (target - opened)
            open_games(fake, db, target - opened, f"CS{target}", far)
            opened = target
            statements[target] = statements_per_interaction(fake, url, target)
        for target in statements:
            close_games(db, f"CS{target}")
        lateness = []
        for workers in [] if args.skip_deadlines or args.app_root else args.processes:
            print(f"… deadlines of {args.open_games} games, {workers} process(es)", file=sys.stderr)
            lateness.append(deadline_lateness(fake, db, url, args.open_games, workers, args.window))
        db.dispose()
    print(report(runs, statements, lateness, args.detail))
    if args.json:
        raw = {
            "runs": [
                {
                    "games": r.games,
                    "processes": r.processes,
                    "app": r.app.samples,
                    "floor": r.floor.samples,
                    "calls_by_method": r.calls_by_method,
                    "peak_mb": r.peak_mb,
                }
                for r in runs
            ],
            "statements": statements,
            "lateness": [{"processes": x.processes, "late": x.late} for x in lateness],
        }
        Path(args.json).write_text(json.dumps(raw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
