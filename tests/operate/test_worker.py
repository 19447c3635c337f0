"""``varulv work`` beside ``varulv serve`` told ``VARULV_TIMERS=off``: the web process serves
the clicks and delivers what they step, and the worker keeps the deadlines, so a storm of
them never holds up the web process's acknowledgements. A game played through the web
process, over HTTP or over Socket Mode, has its night, day and vote ended by the worker, whose
own log lines say so; and the deadlines of many games falling due together are each stepped
once by the worker, and each of their messages posted once."""

from __future__ import annotations

import json
import signal
from collections import Counter

import pytest
import requests
from sqlalchemy import Engine, create_engine, text

from slackapp.fakeslack import FakeSlack, RateLimits
from slackapp.fakeslack.socket_mode import APP_TOKEN, SocketMode
from slackapp.serving import app_environment
from tests import processes
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, AppProcess, start_app
from tests.e2e.driver import Table
from tests.operate.conftest import PEOPLE, Deployment, fresh_database
from tests.operate.test_socket_mode import PATIENT_ACK, OverSocket
from tests.operate.test_tables_within_limits import (
    outbox_facts,
    seated_tables,
    shown_against_newest,
    started_together,
)
from tests.operate.test_two_processes import journal_of
from tests.waiting import PATIENCE

pytestmark = pytest.mark.long(25)

ALVA, BENGT, CARIN, _ = PEOPLE


def played_to_the_reveal(
    deployment: Deployment, table: Table, web: AppProcess, worker: AppProcess
) -> None:
    """A game of three through ``web``, nobody acting after the Start: its clicks are the web
    process's steps, each deadline the worker's, and it reaches its reveal."""
    table.seat_people(ALVA, [BENGT, CARIN])
    table.start(ALVA)
    table.wait_for_phase("over")  # nobody acts after the Start: each phase times out
    assert ALVA in table.reveal().rendered_text
    table.stored_outcome_matches_referee()
    game_id = table.game_id()
    by_web = [e["phase"] for e in journal_of(deployment, [web], game_id)]
    by_worker = [e["phase"] for e in journal_of(deployment, [worker], game_id)]
    assert by_web == ["lobby", "night"], "the clicks were stepped where they came in"
    assert by_worker == ["day", "vote", "over"], "every deadline was the worker's"


def test_a_worker_keeps_the_deadlines_of_a_web_process_without_timers(postgres: str) -> None:
    url = fresh_database(postgres, "worker")
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as fake:
        web = start_app(fake, url, env={"VARULV_TIMERS": "off"}, night=2, day=2, vote=2)
        worker = start_app(fake, url, work=True)
        engine = create_engine(url)
        try:
            deployment = Deployment(fake, web, engine)
            played_to_the_reveal(deployment, deployment.table(), web, worker)
            assert requests.get(f"{web.url}/healthz", timeout=PATIENCE).status_code == 200

            processes.signal_group(worker.process, signal.SIGTERM)
            assert worker.process.wait(timeout=PATIENCE) == 0, worker.log_tail()
            logged = [json.loads(line) for line in worker.log.read_text().splitlines()]
            assert [line for line in logged if line["level"] == "ERROR"] == []
        finally:
            web.stop()
            worker.stop()
            engine.dispose()


def test_over_socket_mode_a_worker_keeps_the_deadlines_of_a_web_process_without_timers(
    postgres: str,
) -> None:
    """The web process served over Socket Mode, told ``VARULV_TIMERS=off``, beside a worker
    started with the very same settings (as a platform gives every process of an app): the
    clicks come over the web process's one connection and are its steps, the deadlines are the
    worker's, which connects to nothing, and the game reaches its reveal."""
    url = fresh_database(postgres, "worker_socket")
    with (
        FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as fake,
        SocketMode(fake, ack_timeout=PATIENT_ACK) as link,
    ):
        settings = {"SLACK_APP_TOKEN": APP_TOKEN, "SLACK_SIGNING_SECRET": ""}
        web = start_app(
            fake,
            url,
            env={**settings, "VARULV_TIMERS": "off"},
            ready=lambda _: link.hellos >= 1,
            night=2,
            day=2,
            vote=2,
        )
        worker = start_app(fake, url, env=settings, work=True)
        engine = create_engine(url)
        try:
            deployment = Deployment(fake, web, engine)
            for user_id, name in PEOPLE.items():
                fake.add_user(user_id, name)
            played_to_the_reveal(deployment, Table(fake, OverSocket(web), engine), web, worker)
            kinds = {
                (e["type"], e["payload"].get("type") or e["payload"].get("command"))
                for e in link.sent
            }
            assert kinds == {("slash_commands", "/varulv"), ("interactive", "block_actions")}
            assert len(link.ack_latencies) == len(link.sent), "each acknowledged once"
            # Socket Mode has no /healthz: the web process is alive while its connection is,
            # and the worker, told SLACK_APP_TOKEN too, opens none (it takes no envelope).
            assert link.open_connections == 1 and web.process.poll() is None

            processes.signal_group(worker.process, signal.SIGTERM)
            assert worker.process.wait(timeout=PATIENCE) == 0, worker.log_tail()
            assert errors_in(deployment, web, worker) == []
        finally:
            web.stop()
            worker.stop()
            engine.dispose()


STORM = 16
"""Games whose deadlines fall due together, three people at each: their *Start*s open 48
private messages at once, within the burst of Slack's Tier 3 that ``conversations.open`` is
paced by (50 a minute, less the app's headroom of two), so no *Start* waits its turn."""
WORKER_TOKEN = "xoxb-worker"
"""The worker's own bot token, which the stand-in takes as it takes the web process's: each
call to Slack says by its token which process made it."""
CHANNEL_POSTS = 6
"""A game nobody plays after its *Start* posts to its channel: the lobby, the deal sealed, the
night sealed, the day, the vote and the reveal."""
DM_POSTS = 2
"""And to each person: their card for the night, and their result."""


def test_a_worker_steps_and_delivers_a_storm_of_deadlines_each_once(postgres: str) -> None:
    """Sixteen tables in as many channels *Start* together through the web process, which keeps
    no timers, and nobody acts: their nights, days and votes end together, each stepped by the
    worker once, and every message of every game is posted once and shows its newest version,
    with both processes delivering beside each other."""
    url = fresh_database(postgres, "worker_storm")
    # Slack's limits on posts (per channel) and on the other methods; the apps pace chat.update
    # far faster than Slack would (tests/conftest.py), so the stand-in leaves it unlimited.
    limits = RateLimits(updates=None)
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN, WORKER_TOKEN], limits=limits) as fake:
        web = start_app(fake, url, env={"VARULV_TIMERS": "off"}, night=2, day=2, vote=2)
        worker = start_app(fake, url, env={"SLACK_BOT_TOKEN": WORKER_TOKEN}, work=True)
        engine = create_engine(url)
        try:
            deployment = Deployment(fake, web, engine)
            tables = seated_tables(fake, web, engine, STORM, 3, "U0W")
            assert started_together(fake, web, tables) == [200] * STORM

            for table, _ in tables:
                table.wait_for_phase("over")  # each phase of each game ends on its deadline
                table.reveal()
                table.stored_outcome_matches_referee()
            posts = [call for call in fake.calls_to("chat.postMessage") if call.ok]
            by_worker = {call.response["channel"] for call in posts if call.token == WORKER_TOKEN}
            for table, people in tables:
                game_id = table.game_id()
                stepped = [e["phase"] for e in journal_of(deployment, [web], game_id)]
                timed_out = [e["phase"] for e in journal_of(deployment, [worker], game_id)]
                assert stepped == ["lobby", "night"], "the web process stepped no deadline"
                assert timed_out == ["day", "vote", "over"], "the worker stepped each one once"

                dms = [fake.dm_channel(person) for person in people]
                # Every post Slack took is a message the game recorded (a second copy of one
                # would not be), and shows that message's newest version.
                here = sorted(
                    (call.response["channel"], call.response["ts"])
                    for call in posts
                    if call.response["channel"] in {table.channel, *dms}
                )
                assert here == sorted(messages_of(engine, game_id)), "each message posted once"
                per_channel = Counter(channel for channel, _ in here)
                assert per_channel == {table.channel: CHANNEL_POSTS, **dict.fromkeys(dms, DM_POSTS)}
                assert shown_against_newest(fake, engine, game_id) == []
                # The worker posts what it steps (its step takes the game's lease), unless
                # the web process still held that lease, draining, at all three deadlines.
                assert table.channel in by_worker, "the worker delivered what it stepped"
            facts = outbox_facts(engine, [table.game_id() for table, _ in tables])
            assert facts["undelivered"] == 0 and facts["failed"] == 0, facts
            assert errors_in(deployment, web, worker) == []
        finally:
            web.stop()
            worker.stop()
            engine.dispose()


def messages_of(db: Engine, game_id: int) -> list[tuple[str, str]]:
    """Where each of the game's messages is in Slack, as the app recorded it: one per surface."""
    with db.connect() as connection:
        rows = connection.execute(
            text("SELECT channel, ts FROM messages WHERE stream = :g"), {"g": game_id}
        )
        return [(channel, ts) for channel, ts in rows]


def errors_in(deployment: Deployment, *apps: AppProcess) -> list[dict[str, object]]:
    """The lines the processes logged as ERRORs."""
    return [line for app in apps for line in deployment.log_lines(app) if line["level"] == "ERROR"]


def test_the_sandbox_and_the_tests_apps_keep_their_timers_whatever_the_shell_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A shell with production's ``VARULV_TIMERS=off`` in it would start a sandbox whose phases
    never end: nothing beside it keeps the timers."""
    monkeypatch.setenv("VARULV_TIMERS", "off")

    def environment(extra: dict[str, str | None] | None = None) -> dict[str, str]:
        return app_environment(
            bot_token=BOT_TOKEN,
            signing_secret=SIGNING_SECRET,
            api_url="http://127.0.0.1:9/api/",
            database_url="postgresql://nobody@127.0.0.1:9/nothing",
            port=9,
            extra=extra,
        )

    assert "VARULV_TIMERS" not in environment()
    told = environment({"VARULV_TIMERS": "off"})
    assert told["VARULV_TIMERS"] == "off", "unless the caller says so itself"
