"""SQL statements per interaction, counted in process."""

from __future__ import annotations

from collections.abc import Callable

from slack_sdk import WebClient
from sqlalchemy import event, text

from benchmarks.processes import (
    TEAM,
    TOKEN,
    Slack,
)
from slackapp.db.engine import make_engine, make_sessions
from slackapp.db.games import read as read_game
from slackapp.game import machine as m
from slackapp.names import lookup_client
from slackapp.services.game import GameService
from slackapp.timers import Deadlines


def statements_per_interaction(fake: Slack, database_url: str, game_number: int) -> dict[str, str]:
    """Play one game in this process, counting the SQL each step sends: "statements (round
    trips)", where round trips add BEGIN and COMMIT (the pool pings a connection only after a
    second idle, which a game played straight through never leaves it)."""
    engine = make_engine(database_url)  # the app's own pool settings
    sent: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *args: sent.append("statement"))
    for round_trip in ("begin", "commit", "rollback"):
        event.listen(engine, round_trip, lambda *args, kind=round_trip: sent.append(kind))
    client = WebClient(token=TOKEN, base_url=fake.api_url)
    sessions = make_sessions(engine)

    class NoDelivery:
        """Steps only: the deliverer's own statements come after the commit, not in a step."""

        def kick(self, game_id: int) -> None:
            pass

    deadlines = Deadlines(sessions)
    steps = GameService(sessions, m.Lengths(3600, 3600, 3600), NoDelivery(), deadlines)
    channel = f"CSQL{game_number:04d}"
    people = [f"USQL{game_number:04d}{seat}" for seat in "ABC"]
    fake.add_channel(channel, channel.lower())
    for user in people:
        fake.add_user(user, user.lower())
    counts: dict[str, str] = {}

    def tally() -> str:
        return f"{sent.count('statement')} ({len(sent)})"

    def count(name: str, step: Callable[[], object]) -> None:
        sent.clear()
        step()
        counts.setdefault(name, tally())

    def state() -> m.GameState:
        with engine.connect() as connection:
            found = read_game(connection, game_id)
        assert found is not None, game_id
        return found.state

    count("/varulv (open a table)", lambda: steps.open_table(TEAM, channel, people[0], "a"))
    with engine.connect() as connection:
        game_id = int(
            connection.execute(
                text("SELECT id FROM games WHERE channel_id = :c"), {"c": channel}
            ).scalar_one()
        )
    with engine.begin() as connection:  # the same deal every time: bots' moves change the SQL
        connection.execute(text("UPDATE games SET seed = 7 WHERE id = :id"), {"id": game_id})
    count("join", lambda: steps.act(game_id, m.Join(people[1], "b")))
    steps.act(game_id, m.Join(people[2], "c"))
    count("fill with bots", lambda: steps.act(game_id, m.FillWithBots(people[0])))
    count(
        "start (names asked, DMs opened, then the deal)",
        lambda: steps.start(game_id, people[0], client, slack_names=lookup_client(client)),
    )
    for user in people:
        while (current := state()).phase == m.Phase.NIGHT and user in current.awaiting():
            kind = current.choice_kind(user)
            mine = current.seat(user)
            assert mine is not None
            others = [seat.key for seat in current.seats if seat.key != user]
            moves: dict[str | None, m.Event] = {
                None: m.NightConfirm(user),
                "peek": m.NightPeek(user, 0),
                "look": m.NightLook(user, None),
                "rob": m.NightRob(user, others[0]),
                "swap": m.NightPick(user, others[0] if mine.pending is None else others[1]),
            }
            sent.clear()
            steps.act(game_id, moves[kind])
            counted = tally()  # before the read below, which is no part of the step
            name = "night choice, the last (dawn)" if state().phase == "day" else "night choice"
            counts.setdefault(name, counted)
    count("heard enough", lambda: steps.act(game_id, m.HeardEnough(people[0])))
    count("heard enough, the vote opens", lambda: steps.act(game_id, m.HeardEnough(people[1])))
    count("ballot", lambda: steps.act(game_id, m.CastBallot(people[0], people[1])))
    steps.act(game_id, m.CastBallot(people[1], people[2]))
    count("ballot, the last (reveal)", lambda: steps.act(game_id, m.CastBallot(people[2], None)))
    count("deadline sweep (nothing due)", deadlines.due_games)
    engine.dispose()
    return counts
