"""``varulv serve`` with phases shorter than a channel may choose, for tests that wait for the
deadlines: ``python -m tests.e2e.short_phases NIGHT DAY VOTE [LATE]`` (seconds). Everything else
comes from the environment, as for ``varulv serve``, which refuses such lengths there.

``LATE``: how long a redraw whose outcome is unknown, or that a dead process may have left on
its way, keeps its message unsure (``slackapp.delivery.slack.LATE_LANDING_SECONDS``, Slack's own
bound). A test whose stand-in lets no call land after the process that made it was killed gives
a shorter one, so that every takeover does not wait out Slack's half minute."""

from __future__ import annotations

import dataclasses
import sys

from slackapp.cli import serve
from slackapp.config import Settings
from slackapp.delivery import slack
from slackapp.logs import configure_logging


def main(argv: list[str]) -> int:
    night, day, vote = (int(seconds) for seconds in argv[:3])
    if len(argv) > 3:
        slack.LATE_LANDING_SECONDS = float(argv[3])
    configure_logging()
    settings = Settings.from_env()
    return serve(
        dataclasses.replace(settings, night_seconds=night, day_seconds=day, vote_seconds=vote)
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
