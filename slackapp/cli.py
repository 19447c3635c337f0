"""varulv: one night of werewolf in a Slack channel. ``serve`` runs the app; ``sandbox`` runs
it with a local stand-in for Slack and a web page; ``referee`` resolves one whole deal by the
rules. Plain ``varulv`` serves Slack when SLACK_BOT_TOKEN or SLACK_CLIENT_ID is set, else starts
the sandbox."""

from __future__ import annotations

import argparse
import json
import os
import sys


def _referee(path: str) -> int:
    from slackapp.game.referee import RefereeError, referee

    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as file:
                raw = file.read()
        outcome = referee(raw.decode("utf-8"))
    except OSError as error:
        print(f"cannot read {path}: {error.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as error:
        source = "standard input" if path == "-" else path
        print(f"malformed JSON: {source} is not UTF-8 (byte {error.start})", file=sys.stderr)
        return 2
    except RefereeError as error:
        print(str(error), file=sys.stderr)
        return 2
    print(json.dumps(outcome, indent=1))
    return 0


def _serve() -> int:
    from slackapp.config import Settings
    from slackapp.db.engine import database_url, make_engine
    from slackapp.db.migrate import upgrade
    from slackapp.logs import configure_logging
    from slackapp.server import serve_http, serve_socket_mode

    configure_logging()  # one JSON object a line, from here on
    settings = Settings.from_env()
    problems = settings.problems()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    url = database_url(settings.database_url, settings.data_dir)
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()  # workers fork after this; each opens its own connections
    if settings.app_token:
        serve_socket_mode(settings, url)
    else:
        serve_http(settings, url)
    return 0


def _sandbox(port: int, open_browser: bool) -> int:
    from slackapp.sandbox.run import main as run_sandbox

    return run_sandbox(port, open_browser)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="varulv", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    referee = commands.add_parser("referee", help="resolve one whole deal (REFEREE.md)")
    referee.add_argument("file", help="the deal as JSON, or - for standard input")
    commands.add_parser("serve", help="serve Slack (HTTP on PORT, or Socket Mode)")
    sandbox = commands.add_parser(
        "sandbox", help="play without Slack: the app, a local Slack and a web page"
    )
    sandbox.add_argument(
        "--port", type=int, default=3000, help="the page's port on 127.0.0.1 (default 3000)"
    )
    sandbox.add_argument("--open", action="store_true", help="open the page in a web browser")
    args = parser.parse_args(argv)
    if args.command == "referee":
        return _referee(args.file)
    if args.command == "serve":
        return _serve()
    if args.command == "sandbox":
        return _sandbox(args.port, args.open)
    # No subcommand: with Slack credentials serve Slack, without them show the sandbox.
    if os.environ.get("SLACK_BOT_TOKEN") or os.environ.get("SLACK_CLIENT_ID"):
        return _serve()
    return _sandbox(3000, open_browser=False)


if __name__ == "__main__":
    sys.exit(main())
