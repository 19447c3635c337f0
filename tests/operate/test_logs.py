"""Structured logs: one JSON object a line, with the ids an operator needs and no secrets."""

from __future__ import annotations

import io
import json
import logging
import re
import subprocess
import sys

from slackapp.game import Card
from slackapp.logs import ID_FIELDS, DatabaseOutage, JsonFormatter, log_context, quiet_libraries
from tests.operate.conftest import PEOPLE, Deployment

ALVA, BENGT, CARIN, _ = PEOPLE
CARD_NAME = re.compile(r"\b(" + "|".join(card.value for card in Card) + r")\b", re.IGNORECASE)


def test_a_game_is_logged_with_its_ids_and_without_its_secrets(
    single_workspace: Deployment,
) -> None:
    table = single_workspace.table()
    table.seat_people(ALVA, [BENGT, CARIN], bots=True)
    table.start(ALVA)
    table.play_night([ALVA, BENGT, CARIN])
    table.heard_enough([ALVA, BENGT])
    table.wait_for_phase("vote")
    table.vote({ALVA: "bengt", BENGT: "carin", CARIN: "Nobody"})
    table.wait_for_phase("over")
    table.reveal()
    game_id = table.game_id()
    seat_keys = table.seat_keys()

    lines = single_workspace.log_lines()  # fails on any line that is not a JSON object
    for entry in lines:
        assert {"time", "level", "logger", "message"} <= set(entry)

    about_game = [entry for entry in lines if entry.get("game_id") == game_id]
    journal = [entry for entry in about_game if entry["logger"] == "slackapp.games"]
    assert [entry["phase"] for entry in journal] == ["lobby", "night", "day", "vote", "over"]
    for entry in journal:
        assert entry["team_id"] == "T0001"
        assert entry["channel_id"] == table.channel
    clicks = [entry for entry in about_game if entry.get("user_id") in PEOPLE]
    assert clicks, "the steps people take are logged with their game"
    commands = [
        e for e in lines if e.get("word") == "start" and e.get("channel_id") == table.channel
    ]
    assert [(e["team_id"], e["user_id"]) for e in commands] == [("T0001", ALVA)]

    # No card and no ballot, ever: ids only sit in their own fields, never in the text.
    for entry in lines:
        assert not CARD_NAME.search(json.dumps(entry)), entry
        rest = json.dumps({k: v for k, v in entry.items() if k not in ID_FIELDS})
        for key in seat_keys:
            assert key not in rest, f"{key} outside an id field: {entry}"


def test_the_formatter_keeps_context_ids_and_drops_other_extras() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("tests.operate.formatter")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with log_context(team_id="T0X", channel_id="C0X"), log_context(game_id=7, user_id=None):
            logger.warning("a line", extra={"phase": "day", "dealt": "Werewolf"})
        logger.warning("outside")
        try:
            raise ValueError("broken")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    inside, outside, failed = (json.loads(line) for line in stream.getvalue().splitlines())
    assert inside["team_id"] == "T0X" and inside["channel_id"] == "C0X"
    assert inside["game_id"] == 7 and inside["phase"] == "day"
    assert "user_id" not in inside and "dealt" not in inside
    assert "team_id" not in outside, "the context ends with its block"
    assert "ValueError: broken" in failed["error"]


def test_library_errors_about_input_varulv_handles_are_warnings_and_a_bug_stays_an_error() -> None:
    """A revoked workspace's request, a forged response_url and a retried timeout are not the
    app's errors; any other ERROR line of the same libraries still is one."""
    quiet_libraries()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        logging.getLogger("slack_bolt.MultiTeamsAuthorization").error(
            "Although the app should be installed into this workspace, "
            "the AuthorizeResult (returned value from authorize) for it was not found."
        )
        webhook = logging.getLogger("slack_sdk.webhook.client")
        webhook.error("Failed to send a request to Slack API server: Invalid URL detected: 0:")
        logging.getLogger("slack_sdk.web.base_client").error(
            "Failed to send a request to Slack API server: The read operation timed out"
        )
        single = logging.getLogger("slack_bolt.SingleTeamAuthorization")
        single.error("Failed to authorize with the given token (... 'error': 'internal_error')")
        single.error("Failed to authorize with the given token (... 'error': 'token_revoked')")
        logging.getLogger("slack_bolt.App").error("Failed to run listener function")
    finally:
        root.removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(line["logger"], line["level"]) for line in lines] == [
        ("slack_bolt.MultiTeamsAuthorization", "WARNING"),
        ("slack_sdk.web.base_client", "WARNING"),
        ("slack_bolt.SingleTeamAuthorization", "WARNING"),
        ("slack_bolt.SingleTeamAuthorization", "ERROR"),
        ("slack_bolt.App", "ERROR"),
    ], "the invalid URL is the app's own line to say (could not answer privately)"
    assert "not installed" in lines[0]["message"]
    assert "retried" in lines[1]["message"] and "timed out" in lines[1]["message"]
    assert "checked again" in lines[2]["message"] and "token_revoked" in lines[3]["message"]


def test_a_database_outage_is_one_error_then_quiet_until_one_line_says_it_is_over() -> None:
    from psycopg import OperationalError

    clock = iter([10.0, 13.5])
    outage = DatabaseOutage(clock=lambda: next(clock))
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(outage)
    logger = logging.getLogger("tests.operate.outage")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for _ in range(3):
            try:
                raise OperationalError("connection refused")
            except OperationalError:
                logger.exception("a game step failed in the database")
        try:
            raise KeyError("a bug")
        except KeyError:
            logger.exception("a game step failed")
        outage.reachable()
        outage.reachable()  # only once
    finally:
        logger.removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["level"] for line in lines] == ["ERROR", "INFO", "INFO", "ERROR"]
    assert lines[0]["message"].startswith("the database is unreachable (connection refused)")
    assert all("error" not in line for line in lines[:3]), "no traceback per failure"
    assert "KeyError" in lines[3]["error"], "a bug keeps its traceback"


def test_a_deadlock_keeps_its_traceback_and_is_no_outage() -> None:
    """PostgreSQL's deadlock and serialization failures are OperationalErrors too, from a
    database that is there: logged as what they are, never as "unreachable"."""
    from psycopg import errors
    from sqlalchemy.exc import OperationalError

    outage = DatabaseOutage(clock=lambda: 0.0)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(outage)
    logger = logging.getLogger("tests.operate.deadlock")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for cause in (errors.DeadlockDetected("deadlock detected"), errors.SerializationFailure()):
            try:
                raise OperationalError("UPDATE games ...", {}, cause)
            except OperationalError:
                logger.exception("a game step failed")
    finally:
        logger.removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["message"] for line in lines] == ["a game step failed"] * 2
    assert all("OperationalError" in line["error"] for line in lines)


RETRIED_ANSWER = r"""
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from slackapp.delivery.slack import answer_client
from slackapp.logs import configure_logging

answers = iter([500, 200])


class Slack(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(next(answers))
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


configure_logging()
server = ThreadingHTTPServer(("127.0.0.1", 0), Slack)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_port}/actions/T0001/1/SECRETPART"
print(answer_client(url).send(text="Your ballot: Nobody.").status_code)
"""


def test_a_retried_private_answer_logs_no_response_url() -> None:
    """A response_url lets whoever holds it post as Varulv in the channel for half an hour:
    slack_sdk's retry of a private answer names it at INFO, which the logs leave out."""
    done = subprocess.run(
        [sys.executable, "-c", RETRIED_ANSWER], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "200", "sent again after the 500, and taken"
    assert "SECRETPART" not in done.stderr, done.stderr
