"""Latency samples and their percentiles."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchmarks.fire import Timed


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (p99 of 50 samples is the largest)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), round(share * len(ordered) + 0.5)))
    return ordered[rank - 1]


@dataclass
class Latencies:
    samples: dict[str, list[float]] = field(default_factory=dict)
    failures: Counter[str] = field(default_factory=Counter)

    def add(self, timed: Sequence[Timed]) -> None:
        for each in timed:
            if each.status != 200:
                self.failures[f"{each.kind} HTTP {each.status}"] += 1
            self.samples.setdefault(each.kind, []).append(each.seconds)

    def summary(self, kind: str) -> tuple[float, float, float, int]:
        """Percentiles in ms of every storm whose kind is ``kind`` or ``kind:…``."""
        values = [
            seconds
            for each, samples in self.samples.items()
            if each == kind or each.startswith(kind + ":")
            for seconds in samples
        ]
        return (
            percentile(values, 0.50) * 1000,
            percentile(values, 0.95) * 1000,
            percentile(values, 0.99) * 1000,
            len(values),
        )
