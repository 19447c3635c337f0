"""``varulv work`` beside ``varulv serve`` told ``VARULV_TIMERS=off``: the web process serves
the clicks and delivers what they step, and the worker keeps the deadlines, so a storm of
them never holds up the web process's acknowledgements. A game played through the web
process has its night, day and vote ended by the worker, whose own log lines say so."""

from __future__ import annotations

import json
import signal

import pytest
import requests
from sqlalchemy import create_engine

from slackapp.fakeslack import FakeSlack
from slackapp.serving import app_environment
from tests import processes
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, start_app
from tests.operate.conftest import PEOPLE, Deployment, fresh_database
from tests.operate.test_two_processes import journal_of
from tests.waiting import PATIENCE

ALVA, BENGT, CARIN, _ = PEOPLE


def test_a_worker_keeps_the_deadlines_of_a_web_process_without_timers(postgres: str) -> None:
    url = fresh_database(postgres, "worker")
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as fake:
        web = start_app(fake, url, env={"VARULV_TIMERS": "off"}, night=2, day=2, vote=2)
        worker = start_app(fake, url, work=True)
        engine = create_engine(url)
        try:
            deployment = Deployment(fake, web, engine)
            table = deployment.table()
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
            assert requests.get(f"{web.url}/healthz", timeout=PATIENCE).status_code == 200

            processes.signal_group(worker.process, signal.SIGTERM)
            assert worker.process.wait(timeout=PATIENCE) == 0, worker.log_tail()
            logged = [json.loads(line) for line in worker.log.read_text().splitlines()]
            assert [line for line in logged if line["level"] == "ERROR"] == []
        finally:
            web.stop()
            worker.stop()
            engine.dispose()


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
