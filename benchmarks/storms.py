"""G games at once, played phase by phase: every phase one storm of signed requests, fired at
the app and then, once the app has done the work, the very same requests at the floor."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text

from benchmarks.fire import fire
from benchmarks.processes import (
    IN_FLIGHT,
    ROOT,
    Server,
    Slack,
    start_server,
    warm_up,
)
from benchmarks.stats import Latencies
from slackapp.blocks.ids import ButtonValue
from slackapp.fakeslack import Message


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
        floor: Server | None,
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
        self.storm("click:ballot", self._open_ballots, lambda: self._ballots_open())
        self.storm("click:vote", self._vote, lambda: self._phases().get("over") == count)

    def storm(self, kind: str, prepare: Callable[[], None], done: Callable[[], bool]) -> None:
        with self.fake.preparing(kind) as prepared:
            prepare()
        if not prepared:
            return
        app = self.pool.submit(fire, self.app.events_url, prepared, IN_FLIGHT).result()
        self.app_latency.add(app)
        self.wait(done, f"the app to finish a storm of {len(prepared)} {kind}s")
        self.wait(self._delivered, "the storm's messages (paced per channel) to be delivered")
        self.settle()
        if self.floor is None:
            return
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

    def _open_ballots(self) -> None:
        for game in self.games:
            for user in game.people:
                self.fake.click_button(user, game.channel, "Vote")

    def _own_ballot(self, user: str, channel: str) -> Message | None:
        shown = self.fake.ephemerals(user, channel)
        return next((m for m in shown if "Your sealed ballot" in m.rendered_text), None)

    def _ballots_open(self) -> bool:
        return all(
            self._own_ballot(user, game.channel) is not None
            for game in self.games
            for user in game.people
        )

    def _vote(self) -> None:
        """On the ballot *Vote* brought them, everyone votes for the next person."""
        for game in self.games:
            for index, user in enumerate(game.people):
                target = game.people[(index + 1) % len(game.people)]
                own = self._own_ballot(user, game.channel)
                assert own is not None
                chosen = next(
                    b for b in own.buttons() if ButtonValue.unpack(b.value).target == target
                )
                self.fake.click(user, own, chosen.action_id)

    # progress, from the database

    def _phases(self) -> dict[str, int]:
        with self.db.connect() as connection:
            rows = connection.execute(
                text(
                    "SELECT phase, count(*) FROM games WHERE channel_id LIKE :p "
                    "AND (phase <> 'lobby' OR EXISTS (SELECT 1 FROM messages "
                    "WHERE messages.stream = games.id AND surface = 'lobby')) GROUP BY phase"
                ),
                {"p": self.prefix + "%"},
            )
            return {phase: int(count) for phase, count in rows}

    def _delivered(self) -> bool:
        with self.db.connect() as connection:
            left = connection.execute(
                text(
                    "SELECT count(*) FROM outbox JOIN games ON games.id = outbox.stream "
                    "WHERE games.channel_id LIKE :p AND outbox.done_at IS NULL"
                ),
                {"p": self.prefix + "%"},
            ).scalar_one()
            return int(left) == 0

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
