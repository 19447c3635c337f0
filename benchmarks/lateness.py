"""Deadline lateness: open games whose nights end within a window, and how late each day board
is posted after its deadline."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, text

from benchmarks.opened import close_games, open_games
from benchmarks.processes import (
    Slack,
    start_server,
)


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
