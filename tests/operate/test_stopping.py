"""SIGTERM in the middle of a burst: ``varulv serve`` stops taking requests, and every step it
had acknowledged still finishes, with its private answer, before the process exits (status 0,
no ERROR line)."""

from __future__ import annotations

import json
import signal

from sqlalchemy import Connection, create_engine, text

from slackapp.fakeslack import UNLIMITED, FakeSlack
from tests import processes
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, start_app
from tests.e2e.driver import Table
from tests.operate.conftest import fresh_database
from tests.reliability.support import new_people, send_together, signed_click, signed_command
from tests.waiting import until

JOINING, ASKING = 5, 6


def waiting_on_locks(connection: Connection) -> int:
    """The app's statements that wait for a lock the test holds."""
    return int(connection.scalar(text("SELECT count(*) FROM pg_locks WHERE NOT granted")) or 0)


def test_sigterm_in_a_burst_finishes_every_acknowledged_step_and_its_answer(
    postgres: str,
) -> None:
    url = fresh_database(postgres, "stopping")
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN], limits=UNLIMITED) as fake:
        app = start_app(fake, url)
        db = create_engine(url)
        try:
            host, *people = new_people(fake, 1 + JOINING + ASKING)
            joining, asking = people[:JOINING], people[JOINING:]
            table = Table(fake, app, db)
            table.command(host)
            lobby = table.lobby()
            join = lobby.button("Join").action_id
            joins = [signed_click(fake, person, lobby, join) for person in joining]
            asks = [signed_command(fake, p, table.channel, "stop") for p in asking]

            with db.connect() as holder:
                # Every step reads the games table: they all wait, acknowledged, mid-step.
                holder.execute(text("LOCK TABLE games IN ACCESS EXCLUSIVE MODE"))
                statuses = send_together(fake, [(r, app.events_url) for r in joins + asks])
                assert statuses == [200] * (JOINING + ASKING)
                with db.connect() as watcher:
                    until(lambda: waiting_on_locks(watcher) > 0, "steps waiting mid-step")
                processes.signal_group(app.process, signal.SIGTERM)
                until(lambda: shutting_down(app.log.read_text()), "the app to begin stopping")
                holder.rollback()  # the lock goes: the steps in hand go on

            assert app.process.wait(timeout=60) == 0, app.log_tail()
            seated = {seat["user_id"] for seat in table.seats()}
            assert seated == {host, *joining}, "every acknowledged Join was stepped"
            for person in asking:
                assert fake.ephemerals(person), f"{person}'s answer was sent before the exit"
            errors = [line for line in app.log.read_text().splitlines() if '"ERROR"' in line]
            assert errors == [], errors
        finally:
            app.stop()
            db.dispose()


def shutting_down(log: str) -> bool:
    """uvicorn has stopped serving and runs the app's lifespan shutdown."""
    for line in log.splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("message") == "Waiting for application shutdown.":
            return True
    return False
