"""Two ``varulv serve`` processes on one database, one killed with ``kill -9`` while Slack is
still taking its game's redraws: the other shows them, the newest version, soon after.

The killed process held the game's delivery lease (its deliverer took it just after the step
and was sending); nobody renews it any more, so it goes (at once on this host,
where the holder's pid is seen to be gone; within seconds on another, where it lapses), and the
survivor's sweep takes the game over.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import text

from tests.e2e.conftest import NO_LATE_LANDINGS, AppProcess
from tests.operate.conftest import PEOPLE, Deployment, two_processes_on_one_database
from tests.reliability.support import Held

pytestmark = pytest.mark.long(12)

ALVA, BENGT, CARIN, DORIS = PEOPLE


@pytest.fixture
def two_processes(postgres: str) -> Iterator[tuple[Deployment, AppProcess]]:
    # What the killed process had sent is refused: nothing of it lands after its death.
    with two_processes_on_one_database(postgres, "takeover", NO_LATE_LANDINGS) as both:
        yield both


def test_the_survivor_shows_what_a_killed_process_was_sending(
    two_processes: tuple[Deployment, AppProcess],
) -> None:
    deployment, second = two_processes
    fake, first = deployment.fake, deployment.app
    table = deployment.table()
    lobby = table.seat_people(ALVA, [BENGT])  # in the first process
    # Slack takes its time over the lobby's redraw; the first process is then killed, and
    # what it had sent is refused (Slack never saw it).
    # The lobby is redrawn through the Join click's response URL (a private answer is not).
    redraw = Held(fake, "response_url", lambda p: p.get("replace_original") is True, applied=False)
    with redraw:
        table.click(CARIN, lobby, "Join")
        redraw.wait(30)  # the first process is sending the lobby's redraw
        table.click(DORIS, lobby, "Join")  # a newer version, waiting behind it
        table.wait(lambda: len(table.seats()) == 4 or None, "four seated")
        with deployment.db.connect() as connection:
            holders = connection.execute(
                text("SELECT holder FROM delivery_leases WHERE stream = :g"),
                {"g": table.game_id()},
            ).scalars()
            assert list(holders), "the first process holds the game's lease while it sends"
        first.kill()
        redraw.release()
        table.app = second
        table.lobby_shows(lobby, "Seated (4)")  # the newest version, by the survivor
        table.wait(lambda: table.undelivered() == 0 or None, "nothing left to show")
        table.start(ALVA)  # and the game goes on there
