"""Games created directly in the database, at night, with their messages in the stand-in."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import Engine, text

from benchmarks.processes import (
    LONG,
    TEAM,
)
from slackapp.db.engine import make_sessions
from slackapp.db.models import (
    Game,
    OutboxEntry,
    Phase,
    Seat,
    SlackMessage,
)
from slackapp.fakeslack import FakeSlack
from slackapp.game import deal


def open_games(
    fake: FakeSlack,
    db: Engine,
    count: int,
    prefix: str,
    deadlines: Sequence[datetime],
    workspaces: int = 1,
) -> list[int]:
    """``count`` games at night with three people and two bots, their messages in the fake;
    dealt in turn to ``workspaces`` workspaces (``T0001``, ``T0002``...), whose Slack limits
    and pacing are each their own."""
    sessions = make_sessions(db)
    with sessions() as session, session.begin():
        created: list[tuple[Game, list[tuple[str, str, str]]]] = []
        for index in range(count):
            channel = f"{prefix}{index:05d}"
            fake.add_channel(channel, channel.lower())
            people = [f"U{prefix[1:]}{index:05d}{seat}" for seat in "ABC"]
            shown: list[tuple[str, str, str]] = []
            game = Game(
                team_id=TEAM if workspaces == 1 else f"T{1 + index % workspaces:04d}",
                channel_id=channel,
                host_user_id=people[0],
                phase=Phase.NIGHT,
                seed=random.getrandbits(62),
                night_seconds=LONG["night"],
                day_seconds=LONG["day"],
                vote_seconds=LONG["vote"],
                bots_allowed=True,
                deadline=deadlines[index],
            )
            for position, user in enumerate(people):
                fake.add_user(user, user.lower())
                dm = fake.add_message(
                    fake.api.bot_message(fake.dm_channel(user), "Your card for tonight", [])
                )
                game.seats.append(
                    Seat(
                        position=position,
                        user_id=user,
                        display_name=user.lower(),
                        dm_channel=dm.channel,
                    )
                )
                shown.append((f"dm:{user}", dm.channel, dm.ts))
            for position in (3, 4):
                bot = f"bot{position - 2}"
                game.seats.append(
                    Seat(position=position, bot_name=bot, display_name=bot, confirmed=True)
                )
            dealt = deal([seat.key for seat in game.seats], game.seed)
            for seat in game.seats:
                seat.dealt = dealt.dealt[seat.key].value
            game.center = [card.value for card in dealt.center]
            board = fake.add_message(fake.api.bot_message(channel, "Night falls", []))
            shown.append(("lobby", channel, board.ts))
            session.add(game)
            created.append((game, shown))
        session.flush()
        for game, shown in created:
            for surface, where, ts in shown:
                session.add(
                    SlackMessage(stream=game.id, surface=surface, channel=where, ts=ts, version=1)
                )
                # What they show, delivered, as a step would have written it: the night's end
                # then redraws them as version 2 (else the deliverer takes the redraw for one
                # already on screen and makes no call).
                session.add(
                    OutboxEntry(
                        stream=game.id,
                        team_id=game.team_id,
                        enterprise_id=game.enterprise_id,
                        surface=surface,
                        version=1,
                        channel=where,
                        text="",
                        attempts=1,
                        done_at=datetime.now(UTC),
                    )
                )
        return [game.id for game, _ in created]


def close_games(db: Engine, prefix: str) -> None:
    with db.begin() as connection:
        connection.execute(
            text(
                "UPDATE games SET phase = 'stopped', deadline = NULL "
                "WHERE channel_id LIKE :p AND phase IN ('lobby', 'night', 'day', 'vote')"
            ),
            {"p": prefix + "%"},
        )
