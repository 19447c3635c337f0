"""The CPU seconds of one command's own processes, by kind, for a machine that others share.

    python -m benchmarks.tree_cpu -- pytest -q -p no:cacheprovider
    python -m benchmarks.tree_cpu -- pytest -q -n 0 -p no:cacheprovider tests/inprocess

``/proc/stat`` counts the whole machine: with other work running, a file measured alone read
two to three times its own CPU. This samples every process's ``/proc/<pid>/stat`` ten times a
second and counts those started by the command (by parent, as seen while they lived) and those
whose command line names the command's temporary folder (the test run's PostgreSQL, which
leaves its starter). A process that lives less than a tenth of a second may be missed, and the
last tenth of each one's life is.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass

TICKS = os.sysconf("SC_CLK_TCK")
KINDS = (
    ("postgres", "PostgreSQL"),
    ("chrom", "Chromium"),
    ("forkserver", "app servers forked by the tests (and the fork servers)"),
    ("node", "Playwright's driver"),
    ("exec(eval(sys.stdin", "xdist's workers (tests, in-process apps, stand-ins for Slack)"),
    ("slackapp.cli", "varulv started as a fresh interpreter"),
    ("mypy", "mypy"),
    ("pytest", "pytest's controller"),
)


@dataclass
class Seen:
    command: str
    ticks: int
    before: int


def kind(command: str) -> str:
    return next((name for part, name in KINDS if part in command), "other")


def read(pid: str) -> tuple[int, int, str]:
    """The parent, the CPU ticks (user and system) and the start time of a process."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return int(fields[1]), int(fields[11]) + int(fields[12]), fields[19]


def command_line(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as line:
            return line.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="+")
    arguments = parser.parse_args(argv)
    before: dict[tuple[int, str], int] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            _, ticks, started = read(pid)
        except OSError:
            continue
        before[int(pid), started] = ticks
    folder = tempfile.mkdtemp(prefix="cpu-")  # short: Chromium refuses long socket paths
    environment = {**os.environ, "TMPDIR": folder}
    began = time.monotonic()
    process = subprocess.Popen(arguments.command, env=environment)
    ours = {process.pid}
    seen: dict[tuple[int, str], Seen] = {}
    while process.poll() is None:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                parent, ticks, started = read(pid)
            except OSError:
                continue
            key = (int(pid), started)
            if key in seen:
                seen[key].ticks = ticks
            elif parent in ours or int(pid) in ours or folder in command_line(pid):
                ours.add(int(pid))
                seen[key] = Seen(command_line(pid), ticks, before.get(key, 0))
        time.sleep(0.1)
    wall = time.monotonic() - began
    shutil.rmtree(folder, ignore_errors=True)
    seconds: dict[str, float] = {}
    counts: Counter[str] = Counter()
    for process_seen in seen.values():
        name = kind(process_seen.command)
        seconds[name] = seconds.get(name, 0.0) + (process_seen.ticks - process_seen.before) / TICKS
        counts[name] += 1
    for name, cpu in sorted(seconds.items(), key=lambda item: -item[1]):
        print(f"{cpu:8.1f} CPU-s  {counts[name]:5d} processes  {name}", file=sys.stderr)
    print(f"{sum(seconds.values()):8.1f} CPU-s in all, {wall:.1f} s wall", file=sys.stderr)
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
