"""``/metrics``: what a running app counts while a game is played, in Prometheus's format."""

from __future__ import annotations

import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.operate.conftest import PEOPLE, Deployment

ALVA, BENGT, CARIN, _ = PEOPLE


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(deployment: Deployment) -> Samples:
    answer = requests.get(f"{deployment.app.url}/metrics", timeout=10)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    assert key in after, f"{name}{labels} is not exposed"
    return after[key] - before.get(key, 0.0)


def test_a_game_moves_the_steps_deliveries_and_the_database_figures(
    single_workspace: Deployment,
) -> None:
    before = scrape(single_workspace)
    table = single_workspace.table()
    table.seat_people(ALVA, [BENGT, CARIN], bots=True)
    table.start(ALVA)
    table.play_night([ALVA, BENGT, CARIN])
    table.heard_enough([ALVA, BENGT])
    table.wait_for_phase("vote")
    after_day = scrape(single_workspace)
    assert after_day[("varulv_games", (("phase", "vote"),))] >= 1
    table.vote({ALVA: "bengt", BENGT: "carin", CARIN: "Nobody"})
    table.wait_for_phase("over")
    table.reveal()
    table.wait(lambda: table.undelivered() == 0 or None, "everything delivered")
    after = scrape(single_workspace)

    assert moved(before, after, "varulv_step_seconds_count", kind="Join") >= 2
    assert moved(before, after, "varulv_step_seconds_count", kind="CastBallot") >= 3
    assert moved(before, after, "varulv_step_seconds_sum", kind="CastBallot") > 0
    # The unlabelled histograms count every kind of step and every method.
    assert moved(before, after, "varulv_step_latency_seconds_count") >= 5
    assert moved(before, after, "varulv_step_latency_seconds_bucket", le="+Inf") >= 5
    assert moved(before, after, "varulv_delivery_seconds_count", method="chat.postMessage") >= 4
    assert moved(before, after, "varulv_delivery_latency_seconds_count") >= 4
    assert after[("varulv_outbox_undelivered", ())] == 0
    assert after[("varulv_outbox_oldest_undelivered_seconds", ())] == 0
    assert ("varulv_deadline_lateness_seconds_count", ()) in after
