"""App processes forked from one that has imported Varulv already.

A fresh interpreter spends about 0.7 s of CPU importing SQLAlchemy, Bolt, slack_sdk and uvicorn
before ``varulv serve`` can start, and the tests start some seventy servers. Forked from
multiprocessing's fork server, which imported them once, a server runs the same code as
``python -m MODULE ARGS`` (the module's ``main(ARGS)``, as its ``__main__`` block calls it), in a
session of its own, with its own environment, working directory and log. What a fresh interpreter
does (the start-up refusals, the sandbox's app, CI's run command) is tested with real ones.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from multiprocessing.process import BaseProcess
from pathlib import Path

PRELOADED = [
    "slackapp.cli",
    "slackapp.server",
    "slackapp.db.migrate",
    "tests.e2e.short_phases",
    "tests.fork_server",
]

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(PRELOADED)


class Forked:
    """The part of ``subprocess.Popen`` the tests use, for a process the fork server started."""

    def __init__(self, process: BaseProcess, arguments: Sequence[str]) -> None:
        self._process = process
        self.args = ["python", *arguments]
        assert process.pid is not None
        self.pid: int = process.pid

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        code = self._process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code


def fork_python(
    arguments: Sequence[str], env: Mapping[str, str], log: Path, *, cwd: Path
) -> Forked:
    """``python -m MODULE ARGS`` (``arguments`` as for the interpreter), forked."""
    if len(arguments) < 2 or arguments[0] != "-m":
        raise ValueError(f"only python -m MODULE can be forked, not {arguments!r}")
    log.touch()
    process = _context.Process(
        target=_run_module,
        args=(list(arguments[1:]), dict(env), str(log), str(cwd)),
        name=f"varulv {' '.join(arguments[1:])}",
    )
    process.start()
    return Forked(process, arguments)


def _run_module(arguments: list[str], env: dict[str, str], log: str, cwd: str) -> None:
    """In the forked process: become what ``python -m`` would have started."""
    os.setsid()  # stopping or killing its group takes the workers it forks down with it
    # Standard input on descriptor 0, as for a real process (multiprocessing gave this one a
    # devnull elsewhere, which uvicorn's worker processes could not reopen).
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own, for its lifetime
    out = os.open(log, os.O_WRONLY | os.O_APPEND)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    module, *rest = arguments
    sys.argv = [module, *rest]
    sys.exit(importlib.import_module(module).main(rest))  # as its ``__main__`` block does
