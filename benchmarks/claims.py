"""The deliverer's claim on games, and its letting go, timed in process.

    python -m benchmarks.claims

Each drain claims its games (a lease each) and reads their outbox in one transaction, and lets
them go in another (with what landed meanwhile, here nothing). This times that pair alone,
against the database only (embedded, or ``DATABASE_URL``), for one, ten and fifty games claimed
together: CPU of this process and wall time per pair.
"""

from __future__ import annotations

import time

from slack_sdk import WebClient
from sqlalchemy import create_engine

from benchmarks.processes import database
from slackapp.db.engine import make_engine, make_sessions, sqlalchemy_url
from slackapp.db.migrate import upgrade
from slackapp.db.models import Game
from slackapp.delivery.deliverer import Deliverer
from slackapp.delivery.landings import record
from slackapp.delivery.slack import WorkspaceId

SIZES = (1, 10, 50)
PAIRS = 200
WARM_UP = 20


def main() -> int:
    with database() as url:
        upgrade(create_engine(sqlalchemy_url(url)))
        engine = make_engine(url)  # the app's own pool settings
        sessions = make_sessions(engine)
        with sessions() as session, session.begin():
            games = [
                Game(
                    team_id="T0CLAIMS",
                    channel_id=f"CCLAIM{n:03d}",
                    host_user_id="U0HOST",
                    phase="lobby",
                    seed=n,
                    night_seconds=60,
                    day_seconds=60,
                    vote_seconds=60,
                )
                for n in range(max(SIZES))
            ]
            session.add_all(games)
            session.flush()
            game_ids = [game.id for game in games]

        def never(workspace: WorkspaceId) -> WebClient:
            raise AssertionError("nothing is delivered: no game has an outbox entry")

        deliverer = Deliverer(sessions, never, lambda game_id, event: None)

        def release(game_ids: list[int]) -> None:
            record(sessions, [], deliverer.holder, game_ids)

        try:
            for size in SIZES:
                claimed = game_ids[:size]
                for _ in range(WARM_UP):
                    deliverer._claim_and_read(claimed)
                    release(claimed)
                cpu, wall = time.process_time(), time.perf_counter()
                for _ in range(PAIRS):
                    deliverer._claim_and_read(claimed)
                    release(claimed)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                print(
                    f"{size} games claimed together: {cpu / PAIRS * 1000:.2f} ms of CPU, "
                    f"{wall / PAIRS * 1000:.2f} ms wall per claim and release (n={PAIRS})"
                )
        finally:
            deliverer.stop()
            engine.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
