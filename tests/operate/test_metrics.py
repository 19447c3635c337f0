"""``/metrics``: what a running app counts while a game is played, in Prometheus's format, on a
port of its own; and what it says while the database is away."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import requests
import yaml
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine

from slackapp.metrics import exposition
from slackapp.serving import free_port
from tests.operate.conftest import PEOPLE, Deployment

OPERATING = Path(__file__).resolve().parents[2] / "docs" / "operating.md"

ALVA, BENGT, CARIN, _ = PEOPLE


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(deployment: Deployment) -> Samples:
    assert deployment.metrics_url is not None
    answer = requests.get(deployment.metrics_url, timeout=10)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("text/plain")
    return samples_of(answer.text)


def samples_of(text: str) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
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


def test_metrics_have_a_port_of_their_own_and_never_sit_beside_slacks_endpoints(
    single_workspace: Deployment,
) -> None:
    assert requests.get(f"{single_workspace.app.url}/metrics", timeout=10).status_code == 404
    assert single_workspace.metrics_url is not None
    elsewhere = single_workspace.metrics_url.replace("/metrics", "/slack/events")
    assert requests.post(elsewhere, timeout=10).status_code == 404, "only /metrics there"
    assert scrape(single_workspace)[("varulv_database_up", ())] == 1


def test_the_counters_of_faults_start_at_zero_so_the_first_one_is_an_increase(
    single_workspace: Deployment,
) -> None:
    """Prometheus's ``increase()`` sees nothing of a series whose first sample is already 1: a
    counter of rare faults must be there at 0 before the first, or the rule that watches it
    (docs/operating.md) misses the first game given up, and the first refused refresh, of
    every process."""
    samples = scrape(single_workspace)
    for phase in ("night", "day", "vote"):
        assert ("varulv_games_given_up_total", (("phase", phase),)) in samples, phase
    refused = ("varulv_token_refreshes_refused_total", (("error", "invalid_refresh_token"),))
    assert refused in samples
    assert "increase(varulv_games_given_up_total[1h]) > 0" in OPERATING.read_text()


def alert_rules() -> list[dict[str, str]]:
    """The alert rules docs/operating.md offers, as Prometheus would load them."""
    found = re.search(r"```yaml\n(.*?)```", OPERATING.read_text(), re.DOTALL)
    assert found, "docs/operating.md shows its alert rules as YAML"
    groups = yaml.safe_load(found.group(1))["groups"]
    return [rule for group in groups for rule in group["rules"]]


def test_an_alert_rule_still_has_a_series_to_fire_on_while_the_database_is_away(
    single_workspace: Deployment,
) -> None:
    """A read that fails leaves the database's figures out, so the rules on them go quiet;
    ``varulv_database_up`` is there either way, and one rule fires on it."""
    unreachable = create_engine(f"postgresql+psycopg://varulv@127.0.0.1:{free_port()}/varulv")
    try:
        body, _ = exposition(unreachable)()
    finally:
        unreachable.dispose()
    assert single_workspace.metrics_url is not None
    reachable = requests.get(single_workspace.metrics_url, timeout=10).text
    away, there = families_in(body.decode()), families_in(reachable)
    assert samples_of(body.decode())[("varulv_database_up", ())] == 0
    assert "varulv_outbox_oldest_undelivered_seconds" not in away
    named = {
        rule["alert"]: {SUFFIX.sub("", name) for name in re.findall(r"varulv_\w+", rule["expr"])}
        for rule in alert_rules()
    }
    for alert, metrics in named.items():
        assert metrics and metrics <= there, f"{alert}: {metrics - there} is not exposed"
    with_a_series = {alert for alert, metrics in named.items() if metrics <= away}
    assert "VarulvDeliveriesStuck" not in with_a_series, "the outbox cannot be read then"
    assert "VarulvDatabaseUnreachable" in with_a_series


SUFFIX = re.compile(r"_(bucket|count|sum|total)$")


def families_in(exposition_text: str) -> set[str]:
    """The metric families an exposition declares, samples or none."""
    return {family.name for family in text_string_to_metric_families(exposition_text)}


COUNT_JOINS = """
import sys
from sqlalchemy import create_engine
from slackapp import metrics
for _ in range(int(sys.argv[1])):
    with metrics.stepping("Join"):
        pass
unreachable = create_engine(sys.argv[2])
body, _ = metrics.exposition(unreachable)()
unreachable.dispose()
sys.stdout.write(body.decode())
"""


def test_a_process_serving_alone_shows_its_own_samples_not_a_run_before_its(
    tmp_path: Path,
) -> None:
    """With ``PROMETHEUS_MULTIPROC_DIR`` set and one process, the samples an earlier run
    left in that folder are not added to this run's."""
    folder = tmp_path / "samples"
    folder.mkdir()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(folder)}
    nowhere = f"postgresql+psycopg://varulv@127.0.0.1:{free_port()}/varulv"

    def run(joins: int) -> float:
        done = subprocess.run(
            [sys.executable, "-c", COUNT_JOINS, str(joins), nowhere],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        return moved({}, samples_of(done.stdout), "varulv_step_seconds_count", kind="Join")

    assert run(5) == 5
    assert any(folder.iterdir()), "the earlier run left its samples in the folder"
    assert run(1) == 1
