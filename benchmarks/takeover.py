"""Two processes, one killed: how soon the other shows what the killed one still had to send.

    python -m benchmarks.takeover                      # what BENCHMARKS.md reports
    python -m benchmarks.takeover --rounds 1 --games 20   # a quick look
    python -m benchmarks.takeover --stop TERM    # stopped as a platform stops it to deploy

Two ``varulv serve`` on one database (PostgreSQL embedded, or ``DATABASE_URL``) and the
stand-in for Slack answering every Web API call ``--slack-ms`` late. ``--games``
``/varulv`` at once go to the first process; once ``--posted`` of their lobbies are on screen
and the rest still wait in its outbox, it is killed with ``kill -9``, and the clock runs from the
kill until every table opened has its lobby posted (nothing of those games is left
undelivered, and nothing acknowledged is left in the inbox: what the killed process had
acknowledged but not yet stepped, the survivor carries out); a ``/varulv`` never stepped is
lost, and counted. The floor is the same run without the kill: from the same moment until the
first process, still alive, has posted them all. By turns, ``--rounds`` times.

Here both processes share one pid space, so the survivor sees the holder's pid gone and takes
its leases at once; on another host they lapse ``LEASE_SECONDS`` after their last renewal.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import time
from dataclasses import dataclass

from sqlalchemy import Engine, text

from benchmarks.fire import fire
from benchmarks.processes import (
    IN_FLIGHT,
    Bench,
    add_slack_ms,
    bench,
    load_average,
    start_server,
    warm_up,
)
from slackapp.delivery.leases import LEASE_SECONDS

UNDELIVERED = text(
    "SELECT count(*) FROM outbox JOIN games ON games.id = outbox.stream "
    "WHERE games.channel_id LIKE :p AND outbox.done_at IS NULL"
)
OPENED = text("SELECT count(*) FROM games WHERE channel_id LIKE :p")
PENDING = text("SELECT count(*) FROM inbox WHERE done_at IS NULL")


def lobbies_posted(ran: Bench, channels: list[str]) -> int:
    return sum(bool(ran.fake.messages(channel)) for channel in channels)  # a lobby is all it has


def undelivered(db: Engine, prefix: str) -> int:
    with db.connect() as connection:
        return int(connection.execute(UNDELIVERED, {"p": prefix + "%"}).scalar_one())


def pending(db: Engine) -> int:
    """Requests acknowledged and not yet carried out, by any process."""
    with db.connect() as connection:
        return int(connection.execute(PENDING).scalar_one())


def opened(db: Engine, prefix: str) -> int:
    with db.connect() as connection:
        return int(connection.execute(OPENED, {"p": prefix + "%"}).scalar_one())


@dataclass(frozen=True)
class Round:
    seconds: float
    """From the moment ``posted`` lobbies were on screen (and the signal, if any) until every
    table opened had its lobby on screen."""
    shown: int
    """Lobbies shown in that time."""
    undelivered: int
    """The games' effects undelivered at that moment."""
    lost: int
    """``/varulv`` acknowledged but never stepped: the killed process had them in hand,
    uncommitted; Slack does not send an acknowledged command again, and the person sees no
    lobby."""
    in_hand: int = 0
    """Requests acknowledged and not yet carried out at that moment (the inbox's)."""


def one_round(ran: Bench, run: str, games: int, posted: int, kill: signal.Signals | None) -> Round:
    first = start_server(f"first-{run}", "slackapp.cli", ran.fake, ran.url, 1)
    second = start_server(f"second-{run}", "slackapp.cli", ran.fake, ran.url, 1)
    try:
        warm_up(ran.fake, ran.pool, [first, second])
        prefix = f"C{run}"
        channels = [f"{prefix}{game:04d}" for game in range(games)]
        for index, channel in enumerate(channels):
            ran.fake.add_channel(channel, channel.lower())
            ran.fake.add_user(f"U{run}{index:04d}", f"host-{run}-{index}")
        with ran.fake.preparing("command:open") as prepared:
            for index, channel in enumerate(channels):
                ran.fake.slash_command(f"U{run}{index:04d}", channel_id=channel)
        ran.pool.submit(fire, first.events_url, prepared, IN_FLIGHT).result()
        while lobbies_posted(ran, channels) < posted:
            time.sleep(0.005)
        began = time.monotonic()
        on_screen = lobbies_posted(ran, channels)
        if kill is not None:
            os.killpg(first.process.pid, kill)
        left = undelivered(ran.db, prefix)
        in_hand = pending(ran.db)

        def tables() -> int:
            """All of them, while the first process lives; once it has exited, those it
            opened (no more can come)."""
            return games if first.process.poll() is None else opened(ran.db, prefix)

        while (
            lobbies_posted(ran, channels) < tables()
            or undelivered(ran.db, prefix)
            or pending(ran.db)
        ):
            if time.monotonic() - began > 120:
                raise TimeoutError(f"{undelivered(ran.db, prefix)} effects never delivered")
            time.sleep(0.02)
        seconds, shown = time.monotonic() - began, lobbies_posted(ran, channels) - on_screen
        return Round(seconds, shown, left, games - opened(ran.db, prefix), in_hand)
    finally:
        first.stop()
        second.stop()


def median(rounds: list[Round], field: str) -> float:
    return float(statistics.median(getattr(each, field) for each in rounds))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--posted", type=int, default=10, help="lobbies on screen at the kill")
    add_slack_ms(parser, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--stop",
        choices=("KILL", "TERM"),
        default="KILL",
        help="how the first process is stopped: kill -9, or as a platform stops it to deploy",
    )
    args = parser.parse_args(argv)
    stop = signal.Signals[f"SIG{args.stop}"]
    killed: list[Round] = []
    alive: list[Round] = []
    with bench(args.slack_ms) as ran:
        for round_number in range(args.rounds):
            for kill, figures in ((stop, killed), (None, alive)):
                run = f"{'K' if kill else 'A'}{round_number}"
                said = f"stopped with SIG{args.stop}" if kill else "not stopped"
                ran_round = one_round(ran, run, args.games, args.posted, kill)
                figures.append(ran_round)
                print(
                    f"round {round_number + 1}, {said}: {ran_round.shown} more lobbies on screen "
                    f"{ran_round.seconds:.2f} s later ({ran_round.undelivered} effects "
                    f"undelivered then, {ran_round.in_hand} requests acknowledged and not yet "
                    f"stepped, {ran_round.lost} never stepped; load {load_average():.1f})",
                    flush=True,
                )
    print(
        f"{args.games} /varulv, {args.posted} lobbies on screen at the signal, Slack at "
        f"{args.slack_ms:.0f} ms: the other process showed the rest "
        f"({median(killed, 'shown'):.0f} lobbies) {median(killed, 'seconds'):.2f} s after it, "
        f"{median(killed, 'lost'):.0f} /varulv lost; the first left alive showed its "
        f"{median(alive, 'shown'):.0f} in {median(alive, 'seconds'):.2f} s (medians of "
        f"{args.rounds}); a lease on another host lapses after {LEASE_SECONDS:g} s",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
