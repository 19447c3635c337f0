"""A few tables in one workspace on a tiny budget of Slack's, played through one ``varulv serve``
and through two: the pacing all the processes share keeps their calls within the stand-in's
limits, every board ends showing its newest version, and no game is stuck. And a lunchtime:
more full tables than Slack's Tier 3 lets open their private messages at once all *Start*
together, and all deal, each ``conversations.open`` waiting its turn rather than refused."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text

from slackapp.fakeslack import SLACK, FakeSlack, Limit, RateLimits
from tests.databases import fresh_database
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, AppProcess, start_app
from tests.e2e.driver import Table
from tests.reliability.support import send_together, signed_click

pytestmark = pytest.mark.long(30)

TABLES = 3
TINY = RateLimits(updates=Limit(1.0, 3), posts=Limit(1.0, 3))
"""A workspace's chat.update budget of 60 a minute after a burst of three, and a post a second
per channel: three tables of three spend it faster than it comes."""
PACED = {"VARULV_UPDATES_PER_MINUTE": "60", "VARULV_UPDATE_BURST": "3"}


def shown_against_newest(fake: FakeSlack, db: Engine, game_id: int) -> list[str]:
    """Each of the game's messages whose Slack copy is not its newest version's text."""
    with db.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT m.surface, m.channel, m.ts, m.version, o.version AS newest, o.text "
                "FROM messages m JOIN LATERAL (SELECT version, text FROM outbox "
                "  WHERE stream = m.stream AND surface = m.surface "
                "  ORDER BY version DESC LIMIT 1) o ON true WHERE m.stream = :g"
            ),
            {"g": game_id},
        ).all()
    wrong = []
    for surface, channel, ts, version, newest, words in rows:
        in_slack = fake.get_message(channel, ts)
        if version != newest or in_slack is None or in_slack.text != words:
            wrong.append(f"{surface}: shows v{version} of v{newest}")
    return wrong


def outbox_facts(db: Engine, game_ids: list[int]) -> dict[str, Any]:
    with db.connect() as connection:
        row = connection.execute(
            text(
                "SELECT count(*) FILTER (WHERE done_at IS NULL) AS undelivered, "
                "count(*) FILTER (WHERE failure IS NOT NULL AND failure <> 'superseded') "
                "AS failed, coalesce(max(attempts), 0) AS attempts "
                "FROM outbox WHERE stream = ANY(:g)"
            ),
            {"g": game_ids},
        ).one()
    return dict(row._mapping)


def seated_tables(
    fake: FakeSlack, app: AppProcess, db: Engine, count: int, seats: int, prefix: str
) -> list[tuple[Table, list[str]]]:
    """``count`` tables of ``seats`` new people each (their ids begin with ``prefix``), each
    seated in a lobby of its own through ``app``; with their people, the host first."""
    tables = []
    for number in range(count):
        people = [f"{prefix}{number:02d}P{seat}" for seat in range(seats)]
        for user in people:
            fake.add_user(user, user.lower())
        table = Table(fake, app, db)
        table.seat_people(people[0], people[1:])
        tables.append((table, people))
    return tables


def started_together(
    fake: FakeSlack, app: AppProcess, tables: list[tuple[Table, list[str]]]
) -> list[int]:
    """Every host's *Start* sent at the same moment to ``app``: the statuses answered."""
    starts = []
    for table, (host, *_) in tables:
        lobby = table.lobby()
        starts.append((signed_click(fake, host, lobby, lobby.button("Start").action_id), app))
    return send_together(fake, [(click, to.events_url) for click, to in starts])


def in_phase(table: Table, phase: str) -> None:
    """Until the game is in ``phase`` (committed; what it shows may follow later)."""
    table.wait(lambda: table.game()["phase"] == phase or None, f"phase {phase}")


@pytest.mark.parametrize("processes", [1, 2])
def test_a_few_tables_on_a_tiny_budget_end_right(postgres: str, processes: int) -> None:
    url = fresh_database(postgres, f"limits{processes}")
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN], limits=TINY) as fake:
        apps: list[AppProcess] = []
        engine = create_engine(url)
        try:
            apps = [start_app(fake, url, env=PACED) for _ in range(processes)]
            tables: list[tuple[Table, list[str]]] = []
            for number in range(TABLES):
                people = [f"U0T{number}P{seat}" for seat in range(3)]
                for user in people:
                    fake.add_user(user, user.lower())
                tables.append((Table(fake, apps[number % processes], engine), people))
            # The tables play side by side: each step at every table before the next step.
            for table, (host, *others) in tables:
                table.seat_people(host, others)
            for table, people in tables:
                table.start(people[0])
            for table, people in tables:
                table.play_night(people)
            for table, people in tables:
                in_phase(table, "day")
                table.heard_enough(people[:2])
            for table, people in tables:
                in_phase(table, "vote")
                table.vote(dict.fromkeys(people, "Nobody"))
            for table, _ in tables:
                table.wait_for_phase("over", timeout=60)
                table.reveal()
                table.stored_outcome_matches_referee()
            game_ids = [table.game_id() for table, _ in tables]
            for game_id in game_ids:
                assert shown_against_newest(fake, engine, game_id) == []
            facts = outbox_facts(engine, game_ids)
            refused = fake.api.limiter.refused
            assert facts["undelivered"] == 0 and facts["failed"] == 0, facts
            assert facts["attempts"] <= 1, f"a call was refused more than once: {refused}"
            updates = [c for c in fake.calls if c.method == "chat.update" and c.ok]
            assert TINY.updates is not None
            assert len(updates) > TINY.updates.burst, "more redraws than a burst: paced"
            # A night choice redraws the chooser's DM through the click's own response_url, and
            # dawn through their newest click's: chat.update reaches a DM only when a URL fails.
            dm_updates = [u for u in updates if str(u.params["channel"]).startswith("D")]
            assert len(dm_updates) <= 3 * TABLES, [u.params["text"] for u in dm_updates]
        finally:
            for app in apps:
                app.stop()
            engine.dispose()


LUNCH_TABLES, SEATS = 6, 10
SLACKS_PACE = {"VARULV_UPDATES_PER_MINUTE": "50", "VARULV_UPDATE_BURST": "50"}


def test_a_lunchtime_of_full_tables_starting_together_all_deal_within_slacks_tiers(
    postgres: str,
) -> None:
    """Sixty private messages to open at once, against Tier 3's fifty a minute: the last
    tables deal a little later, and Slack refuses none of the calls."""
    url = fresh_database(postgres, "lunchtime")
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN], limits=SLACK) as fake:
        app = start_app(fake, url, env=SLACKS_PACE)
        engine = create_engine(url)
        try:
            tables = seated_tables(fake, app, engine, LUNCH_TABLES, SEATS, "U0L")
            assert started_together(fake, app, tables) == [200] * LUNCH_TABLES
            for table, _ in tables:
                in_phase(table, "night")
            opened = fake.calls_to("conversations.open")
            tier = SLACK.methods["conversations.open"]
            assert len(opened) >= LUNCH_TABLES * SEATS > tier.burst, "more than a burst"
            refused = fake.api.limiter.refused
            assert refused.get("conversations.open", 0) == 0, refused
            assert refused.get("users.info", 0) == 0, refused
            facts = outbox_facts(engine, [table.game_id() for table, _ in tables])
            assert facts["failed"] == 0 and facts["attempts"] <= 1, (facts, refused)
        finally:
            app.stop()
            engine.dispose()
