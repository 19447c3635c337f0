"""The load benchmark's report, as Markdown tables."""

from __future__ import annotations

from benchmarks.lateness import Lateness
from benchmarks.stats import percentile
from benchmarks.storms import RunResult


def _lateness_table(lateness: list[Lateness]) -> list[str]:
    lines = ["", "## Deadline lateness with open games", ""]
    lines.append("Lateness: the day board's post at the fake Slack, minus the night's deadline.")
    lines.append("")
    lines.append("| open games | window | processes | p50 ms | p99 ms | max ms | missed |")
    lines.append("|---|---|---|---|---|---|---|")
    for each in lateness:
        late = each.late or [float("nan")]
        lines.append(
            f"| {each.games} | {each.window:.0f} s | {each.processes} | "
            f"{percentile(late, 0.5) * 1000:.0f} | {percentile(late, 0.99) * 1000:.0f} | "
            f"{max(late) * 1000:.0f} | {each.missed} |"
        )
    return lines


def _statements_table(statements: dict[int, dict[str, str]]) -> list[str]:
    opened = sorted(statements)
    lines = ["", "## SQL statements per interaction, by the number of other open games", ""]
    lines.append("Statements (round trips: with BEGIN and COMMIT).")
    lines.append("")
    lines.append("| interaction | " + " | ".join(f"{n} open" for n in opened) + " |")
    lines.append("|---|" + "---|" * len(opened))
    for step in statements[opened[0]]:
        lines.append(
            f"| {step} | " + " | ".join(str(statements[n].get(step, "-")) for n in opened) + " |"
        )
    return lines


def report(
    runs: list[RunResult],
    statements: dict[int, dict[str, str]],
    lateness: list[Lateness],
    detail: bool = False,
) -> str:
    lines = ["## Acknowledgement latency (ms), app vs. bare Bolt floor, same run", ""]
    lines.append(
        "| G | processes | kind | n | app p50 | app p95 | app p99 | floor p50 | floor p95 "
        "| floor p99 | p99 ratio |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        for kind in ("command", "click"):
            a50, a95, a99, n = run.app.summary(kind)
            f50, f95, f99, _ = run.floor.summary(kind)
            lines.append(
                f"| {run.games} (x{run.rounds}) | {run.processes} | {kind} | {n} | {a50:.1f} | "
                f"{a95:.1f} | {a99:.1f} | {f50:.1f} | {f95:.1f} | {f99:.1f} | {a99 / f99:.2f}x |"
            )
    if detail:
        lines += ["", "Per storm (p50 / p99 ms, app then floor):", ""]
        for run in runs:
            for kind in run.app.samples:
                a50, _, a99, n = run.app.summary(kind)
                f50, _, f99, _ = run.floor.summary(kind)
                lines.append(
                    f"- G={run.games} x{run.processes} {kind} ({n}): "
                    f"{a50:.0f} / {a99:.0f} vs {f50:.0f} / {f99:.0f}"
                )
    failures = [(run, run.app.failures + run.floor.failures) for run in runs]
    if any(f for _, f in failures):
        lines.append("")
        for run, failed in failures:
            if failed:
                where = f"G={run.games}, {run.processes} process(es)"
                lines.append(f"- {where}: non-200 answers {dict(failed)}")
    lines += ["", "## Slack Web API calls per game", ""]
    methods = sorted({m for run in runs for m in run.calls_by_method})
    lines.append("| G | processes | all | " + " | ".join(methods) + " | app errors logged | run |")
    lines.append("|---|---|---|" + "---|" * len(methods) + "---|---|")
    for run in runs:
        cells = " | ".join(f"{run.calls_by_method.get(m, 0):.2f}" for m in methods)
        lines.append(
            f"| {run.games} | {run.processes} | {run.calls_per_game:.2f} | {cells} | "
            f"{run.errors_logged} | {run.seconds:.0f} s |"
        )
    if statements:
        lines += _statements_table(statements)
    if lateness:
        lines += _lateness_table(lateness)
    lines += ["", "## Peak memory per app worker process (VmHWM, MB)", ""]
    for run in runs:
        peaks = ", ".join(f"{mb:.0f}" for mb in run.peak_mb)
        lines.append(f"- G={run.games}, {run.processes} process(es): {peaks}")
    for each in lateness:
        peaks = ", ".join(f"{mb:.0f}" for mb in each.peak_mb)
        lines.append(f"- {each.games} open games, {each.processes} process(es): {peaks}")
    return "\n".join(lines)
