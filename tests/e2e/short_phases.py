"""``varulv serve`` with phases shorter than a channel may choose, for tests that wait for the
deadlines: ``python -m tests.e2e.short_phases NIGHT DAY VOTE`` (seconds). Everything else comes
from the environment, as for ``varulv serve``, which refuses such lengths there."""

from __future__ import annotations

import dataclasses
import sys

from slackapp.cli import serve
from slackapp.config import Settings
from slackapp.logs import configure_logging


def main(argv: list[str]) -> int:
    night, day, vote = (int(seconds) for seconds in argv)
    configure_logging()
    settings = Settings.from_env()
    return serve(
        dataclasses.replace(settings, night_seconds=night, day_seconds=day, vote_seconds=vote)
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
