"""The referee's command: one whole deal in (a file, or standard input), the outcome out.

Standard library and :mod:`slackapp.game` only, so that the very same code runs as
``varulv referee`` and from the one file anyone can run with Python alone
(:mod:`slackapp.referee_file`).
"""

from __future__ import annotations

import json
import sys

from slackapp.game.referee import RefereeError, referee


def run(path: str = "-") -> int:
    """Print the outcome of the deal in ``path`` (``-``: standard input) as JSON, or one line
    naming the problem on standard error; the exit status (2 for a problem)."""
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
    # Names as written (Måns, not M\u00e5ns), in UTF-8 whatever the terminal's locale.
    written = json.dumps(outcome, indent=1, ensure_ascii=False) + "\n"
    sys.stdout.flush()
    sys.stdout.buffer.write(written.encode("utf-8"))
    sys.stdout.buffer.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python3 varulv_referee.pyz [FILE]``: FILE, or standard input without one."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        print("usage: python3 varulv_referee.pyz [FILE] < game.json", file=sys.stderr)
        return 2
    return run(args[0] if args else "-")
