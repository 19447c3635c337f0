"""Behind PgBouncer in transaction mode (Debian's ``pgbouncer``): with
``VARULV_PREPARED_STATEMENTS=off`` a game is played through it to the reveal, the schema
migrated through it too, and PostgreSQL sees the pooler's few connections, not the app's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, make_url, text

from slackapp.db.engine import sqlalchemy_url
from slackapp.fakeslack import UNLIMITED, FakeSlack
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, start_app
from tests.e2e.driver import Table
from tests.operate.conftest import PEOPLE, fresh_database
from tests.pgbouncer import pgbouncer, pgbouncer_program, pooled_url

ALVA, BENGT, CARIN, _ = PEOPLE
POOL = 4
"""Server connections PgBouncer keeps for the app's database."""
TEST = "the test's own"
"""The application name of this test's own connections, which go to PostgreSQL directly."""


@pytest.fixture
def pooler(postgres: str) -> Iterator[int]:
    """PgBouncer's port, in front of the run's PostgreSQL."""
    program = pgbouncer_program()
    if program is None:
        pytest.skip("no pgbouncer found: install Debian's pgbouncer package")
    with pgbouncer(program, postgres, POOL) as port:
        yield port


def test_a_game_through_pgbouncer_in_transaction_mode(postgres: str, pooler: int) -> None:
    direct = fresh_database(postgres, "pgbouncer")
    name = make_url(sqlalchemy_url(direct)).database
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN], limits=UNLIMITED) as fake:
        env = {"VARULV_PREPARED_STATEMENTS": "off", "VARULV_DATABASE_CONNECTIONS": "30"}
        app = start_app(fake, pooled_url(direct, pooler), env=env)
        db = create_engine(sqlalchemy_url(direct), connect_args={"application_name": TEST})
        try:
            for user_id, person in PEOPLE.items():
                fake.add_user(user_id, person)
            table = Table(fake, app, db)
            table.seat_people(ALVA, [BENGT, CARIN], bots=True)
            table.start(ALVA)
            table.play_night([ALVA, BENGT, CARIN])
            table.heard_enough([ALVA, BENGT])
            table.wait_for_phase("vote")
            table.vote({ALVA: "bengt", BENGT: "carin", CARIN: "Nobody"})
            table.wait_for_phase("over")
            table.reveal()
            table.stored_outcome_matches_referee()
            with db.connect() as connection:
                backends = connection.scalar(
                    text(
                        "SELECT count(*) FROM pg_stat_activity"
                        " WHERE datname = :name AND application_name <> :test"
                    ),
                    {"name": name, "test": TEST},
                )
            assert backends is not None and backends <= POOL, "the pooler's, not the app's 30"
            errors = [line for line in app.log.read_text().splitlines() if '"ERROR"' in line]
            assert errors == [], errors
        finally:
            app.stop()
            db.dispose()
