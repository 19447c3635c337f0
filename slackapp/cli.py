"""The ``varulv`` command: ``referee`` resolves a deal; ``serve`` runs the Slack app."""

from __future__ import annotations

import argparse
import json
import sys


def _referee(path: str) -> int:
    from slackapp.game.referee import RefereeError, referee

    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        outcome = referee(text)
    except OSError as error:
        print(f"cannot read {path}: {error.strerror}", file=sys.stderr)
        return 2
    except RefereeError as error:
        print(str(error), file=sys.stderr)
        return 2
    print(json.dumps(outcome, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="varulv", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    referee = commands.add_parser("referee", help="resolve one whole deal (REFEREE.md)")
    referee.add_argument("file", help="the deal as JSON, or - for standard input")
    args = parser.parse_args(argv)
    if args.command == "referee":
        return _referee(args.file)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
