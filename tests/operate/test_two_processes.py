"""Several ``web`` processes on one database: every deadline moves its game exactly once.

Each process arms a timer for the deadlines it sets and sweeps for any deadline that is due, so
a phase may be ended by either process; the game row's lock and the phase re-check let only one
of them do it, and a process that goes away leaves its games to the others.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine

from slackapp.fakeslack import JSON, FakeSlack
from slackapp.serving import free_port
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET, AppProcess, start_app
from tests.operate.conftest import PEOPLE, Deployment, fresh_database
from tests.waiting import until

pytestmark = pytest.mark.long(16)

ALVA, BENGT, CARIN, _ = PEOPLE


@pytest.fixture(scope="module")
def two_processes(postgres: str) -> Iterator[tuple[Deployment, AppProcess]]:
    url = fresh_database(postgres, "two")
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as fake:
        first = start_app(fake, url, night=2, day=2, vote=2)
        second = start_app(fake, url, night=2, day=2, vote=2)
        engine = create_engine(url)
        try:
            yield Deployment(fake, first, engine), second
        finally:
            first.stop()
            second.stop()
            engine.dispose()


def journal_of(deployment: Deployment, apps: list[AppProcess], game_id: int) -> list[JSON]:
    """The phase changes of one game, as logged by all the processes."""
    return [
        entry
        for app in apps
        for entry in deployment.log_lines(app)
        if entry["logger"] == "slackapp.games" and entry.get("game_id") == game_id
    ]


def test_each_phase_changes_once(two_processes: tuple[Deployment, AppProcess]) -> None:
    deployment, second = two_processes
    fake, first = deployment.fake, deployment.app
    table = deployment.table()
    table.seat_people(ALVA, [BENGT, CARIN])  # the table opens in the first process
    table.app = second
    table.start(ALVA)  # the night begins in the second, which arms its deadline
    table.wait_for_phase("over")  # night, day and vote each end on a deadline
    table.reveal()
    table.stored_outcome_matches_referee()

    dm_channels = {fake.dm_channel(user) for user in (ALVA, BENGT, CARIN)}
    posts = [call.params for call in fake.calls_to("chat.postMessage") if call.response.get("ok")]
    channel_texts = [str(post["text"]) for post in posts if post["channel"] == table.channel]

    def posted(prefix: str) -> int:
        return sum(text.startswith(prefix) for text in channel_texts)

    assert posted("Day breaks at the Varulv table") == 1
    assert posted("The Varulv vote is open") == 1
    assert posted("The Varulv reveal") == 1
    assert posted("The deal is sealed") == 1 and posted("The night is sealed") == 1
    assert len(channel_texts) == 6, f"the lobby and those five: {channel_texts}"
    private = [post["text"] for post in posts if post["channel"] in dm_channels]
    assert private.count("Varulv: your card for tonight is here.") == 3, private
    assert len(private) == 6, "each person gets one night message and one result"

    journal = journal_of(deployment, [first, second], table.game_id())
    assert sorted(Counter(entry["phase"] for entry in journal).items()) == sorted(
        {"lobby": 1, "night": 1, "day": 1, "vote": 1, "over": 1}.items()
    )
    by_process = {entry["phase"]: entry["pid"] for entry in journal}
    assert by_process["lobby"] != by_process["night"], "the game moved between the processes"


def test_the_other_process_finishes_a_game(two_processes: tuple[Deployment, AppProcess]) -> None:
    """A process that stops (a restart, a scale-down) leaves its deadlines to the sweep of the
    others, though it armed them: the database keeps the deadlines, not the timers."""
    deployment, second = two_processes
    first = deployment.app
    table = deployment.table()
    table.app = second
    table.seat_people(ALVA, [BENGT, CARIN])
    table.click(ALVA, table.lobby(), "Start")
    # Killed once the night is committed and logged, not after its cards (a slow machine could
    # let the two-second night end first), as a crashed host would be: its armed timer dies
    # with it.
    game_id = table.game_id()
    table.wait(
        lambda: "night" in [e["phase"] for e in journal_of(deployment, [second], game_id)] or None,
        "the night begun by the second process",
    )
    second.kill()
    table.app = first
    table.wait_for_phase("over")
    table.stored_outcome_matches_referee()

    by_first = [e["phase"] for e in journal_of(deployment, [first], game_id)]
    by_second = [e["phase"] for e in journal_of(deployment, [second], game_id)]
    assert sorted(by_first + by_second) == sorted(["lobby", "night", "day", "vote", "over"])
    assert by_second[:2] == ["lobby", "night"]
    assert by_first[-2:] == ["vote", "over"], "the survivor finished the game on its own"


def test_uvicorns_workers_each_serve_deliver_and_keep_the_timers(postgres: str) -> None:
    """``WEB_CONCURRENCY=2``: uvicorn's own supervisor runs two worker processes (started
    afresh, with the usual phase lengths), and a game played through them is delivered to the
    reveal. ``/metrics``, served by their supervisor on a port of its own, counts every
    worker's steps (prometheus_client's multiprocess mode)."""
    url = fresh_database(postgres, "workers")
    metrics_port = free_port()
    with FakeSlack(SIGNING_SECRET, tokens=[BOT_TOKEN]) as fake:
        app = start_app(
            fake, url, env={"WEB_CONCURRENCY": "2", "VARULV_METRICS_PORT": str(metrics_port)}
        )
        engine = create_engine(url)
        try:

            def serving() -> set[int]:
                return {
                    entry["pid"]
                    for entry in Deployment(fake, app, engine).log_lines(app)
                    if entry.get("message") == "Application startup complete."
                }

            until(lambda: len(serving()) >= 2, "both of uvicorn's workers to serve")
            assert len(serving()) == 2 and app.process.pid not in serving(), app.log_tail()
            table = Deployment(fake, app, engine).table()
            table.seat_people(ALVA, [BENGT, CARIN])
            table.start(ALVA)
            table.play_night([ALVA, BENGT, CARIN])
            table.nobody_dies_tonight([ALVA, BENGT, CARIN])
            table.reveal()
            # Each worker counts the Joins it stepped; the supervisor adds both workers' up.
            answer = requests.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10)
            assert joins_counted(answer.text) == 2.0, answer.text
            assert requests.get(f"{app.url}/metrics", timeout=10).status_code == 404
        finally:
            app.stop()
            engine.dispose()


def joins_counted(exposition: str) -> float:
    return sum(
        sample.value
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
        if sample.name == "varulv_step_seconds_count" and sample.labels.get("kind") == "Join"
    )
