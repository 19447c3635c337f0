"""The floor: a bare Bolt app that does the visible work of a ``/varulv`` and nothing else.

Bolt's documented default (``process_before_response=False``: the ack goes as soon as the
listener calls it) on plain gunicorn, the ``gthread`` worker, one worker with the app's eight
threads. ``/varulv`` is acknowledged, one row is INSERTed and COMMITted into PostgreSQL, then a
lobby-sized message (a header, the seats, the deck line, four buttons) is posted with
``chat.postMessage``. Every Varulv button is only acknowledged. Whatever the real app takes
beyond this is the game's cost.

With ``FLOOR=durable`` it also does the durable work Varulv's design asks of every message,
written as plainly as Core SQL allows: the game row, its outbox row (the lobby's blocks) and its
delivery lease committed in one transaction; a turn from a shared rate-limit bucket (one
autocommit statement on an unlogged table); the post; then the message's ``ts`` recorded, the
outbox row marked done and the lease let go in one transaction. No phase machine, no ORM, no
Block Kit models, no names: what the app takes beyond this floor is its own code's.

With ``FLOOR=lean`` it keeps exactly the guarantee (a message is committed with its state
before it is posted, and its ``ts`` kept after) in two autocommit statements and the post: one
statement before (a CTE that inserts the game row and its outbox row, claimed by two columns of
that row, and takes the channel's turn from the shared rate-limit bucket), the post, and one
statement after (the ``ts`` kept on the outbox row, the row marked sent, the claim let go).
What the durable floor takes beyond this one is its design's, not the guarantee's.

With ``FLOOR=read-first`` it is the lean floor for an app that decides in its own code what its
message shows: one autocommit read first (the game's id from its sequence, the host's kept name,
the channel's settings, as Varulv's lobby needs them), the lobby drawn from it, then the lean
floor's two statements and the post. What the app takes beyond this one is neither the
guarantee's nor the read's its rules need.

    SLACK_BOT_TOKEN=… SLACK_SIGNING_SECRET=… SLACK_API_URL=… DATABASE_URL=… PORT=… \\
        [FLOOR=durable|lean|read-first] python -m benchmarks.floor
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from slack_bolt import Ack, App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient
from sqlalchemy import create_engine, text

from slackapp.blocks import ids
from slackapp.db.engine import sqlalchemy_url

ACTIONS = ids.ALL_ACTIONS
THREADS = 8
STORM_THREADS = 64
"""As many as the app's deliverer has call threads."""

Wsgi = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def mention(body: dict[str, Any]) -> str:
    return f"<@{body['user_id']}>"


def lobby(host: str, game: int = 0, bots: bool = True) -> list[dict[str, Any]]:
    """As many blocks and about as many bytes as Varulv's lobby."""
    seats = "\n".join([f"1. {host} (host)", "2. _open_", "3. _open_", "4. _open_", "5. _open_"])
    filled = " · bots fill empty seats" if bots else ""

    def button(label: str, action: str, style: str | None = None) -> dict[str, Any]:
        made: dict[str, Any] = {
            "type": "button",
            "text": {"type": "plain_text", "text": label},
            "action_id": action,
            "value": str(game),
        }
        if style:
            made["style"] = style
        return made

    return [
        {
            "type": "header",
            "text": {"type": "plain_text", "text": "Varulv: a night in the village"},
        },
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*Seats* (3 to 10)\n{seats}"}},
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": "Deck: Werewolf, Werewolf, Seer, Robber, Troublemaker, Villager, "
                    f"Villager, Minion{filled}",
                }
            ],
        },
        {
            "type": "actions",
            "elements": [
                button("Join", "floor_join", "primary"),
                button("Leave", "floor_leave"),
                button("Start", "floor_start"),
                button("Settings", "floor_settings"),
            ],
        },
    ]


CREATE_ROWS = text(
    "CREATE TABLE IF NOT EXISTS floor_commands (id bigserial PRIMARY KEY, channel text)"
)
INSERT_ROW = text("INSERT INTO floor_commands (channel) VALUES (:c)")
"""The one row the floor commits before each message it posts."""

DURABLE_TABLES = [
    text("CREATE TABLE IF NOT EXISTS floor_games (id bigserial PRIMARY KEY, channel text)"),
    text(
        "CREATE TABLE IF NOT EXISTS floor_outbox (id bigserial PRIMARY KEY, game_id bigint, "
        "blocks jsonb, done_at timestamptz)"
    ),
    text(
        "CREATE TABLE IF NOT EXISTS floor_leases (game_id bigint PRIMARY KEY, holder text, "
        "until timestamptz)"
    ),
    text("CREATE TABLE IF NOT EXISTS floor_messages (game_id bigint PRIMARY KEY, ts text)"),
    text("CREATE UNLOGGED TABLE IF NOT EXISTS floor_buckets (key text PRIMARY KEY, free float8)"),
]
NEW_GAME = text("INSERT INTO floor_games (channel) VALUES (:c) RETURNING id")
NEW_ENTRY = text(
    "INSERT INTO floor_outbox (game_id, blocks) VALUES (:g, CAST(:b AS jsonb)) RETURNING id"
)
TAKE_LEASE = text(
    "INSERT INTO floor_leases (game_id, holder, until) VALUES (:g, 'floor', now() + interval '3s')"
)
TURN = text(
    "INSERT INTO floor_buckets AS b (key, free) VALUES (:k, extract(epoch FROM now()))"
    " ON CONFLICT (key) DO UPDATE SET free = greatest(b.free, excluded.free) + 1 RETURNING free"
)
LEAN_TABLES = [
    text("CREATE TABLE IF NOT EXISTS floor_lean_games (id bigserial PRIMARY KEY, channel text)"),
    text(
        "CREATE TABLE IF NOT EXISTS floor_lean_outbox (id bigserial PRIMARY KEY, game_id bigint,"
        " channel text, blocks jsonb, claimed_by text, claimed_until timestamptz, ts text,"
        " sent_at timestamptz)"
    ),
    DURABLE_TABLES[-1],  # floor_buckets, the shared rate-limit bucket
]
_LEAN_BEFORE = (
    "WITH game AS (INSERT INTO floor_lean_games {game} RETURNING id),"
    " entry AS (INSERT INTO floor_lean_outbox (game_id, channel, blocks, claimed_by,"
    " claimed_until) SELECT id, :c, CAST(:b AS jsonb), 'floor', now() + interval '10s'"
    " FROM game RETURNING id),"
    " turn AS (INSERT INTO floor_buckets AS b (key, free) VALUES (:c, extract(epoch FROM now()))"
    " ON CONFLICT (key) DO UPDATE SET free = greatest(b.free, excluded.free) + 1 RETURNING free)"
    " SELECT entry.id, turn.free FROM entry, turn"
)
LEAN_BEFORE = text(_LEAN_BEFORE.format(game="(channel) VALUES (:c)"))
"""The lean floor's one statement before the post: the game, its message claimed, the turn."""
READ_FIRST_TABLES = [
    *LEAN_TABLES,
    text("CREATE TABLE IF NOT EXISTS floor_people (user_id text PRIMARY KEY, name text)"),
    text(
        "CREATE TABLE IF NOT EXISTS floor_channel_settings (channel text PRIMARY KEY,"
        " bots boolean NOT NULL)"
    ),
]
READ_FIRST = text(
    "SELECT nextval('floor_lean_games_id_seq'),"
    " (SELECT name FROM floor_people WHERE user_id = :u),"
    " (SELECT bots FROM floor_channel_settings WHERE channel = :c)"
)
"""The read-first floor's read: the game's id, the host's kept name, the channel's setting."""
READ_FIRST_BEFORE = text(_LEAN_BEFORE.format(game="(id, channel) VALUES (:g, :c)"))
"""The lean floor's statement before the post, for a game whose id was read first."""
LEAN_AFTER = text(
    "UPDATE floor_lean_outbox SET ts = :ts, sent_at = now(), claimed_by = NULL,"
    " claimed_until = NULL WHERE id = :e"
)
"""The lean floor's one statement after the post: the ``ts`` kept, sent, the claim let go."""

LANDED = [
    text("INSERT INTO floor_messages (game_id, ts) VALUES (:g, :ts)"),
    text("UPDATE floor_outbox SET done_at = now() WHERE id = :e"),
    text("DELETE FROM floor_leases WHERE game_id = :g"),
]


def wsgi() -> Wsgi:
    """The app, as gunicorn's worker loads it (``benchmarks.floor:wsgi()``)."""
    env = os.environ
    engine = create_engine(
        sqlalchemy_url(env["DATABASE_URL"]), pool_size=THREADS, max_overflow=STORM_THREADS
    )
    with engine.begin() as connection:
        connection.execute(CREATE_ROWS)
    client = WebClient(token=env["SLACK_BOT_TOKEN"], base_url=env["SLACK_API_URL"])
    app = App(
        token=env["SLACK_BOT_TOKEN"], signing_secret=env["SLACK_SIGNING_SECRET"], client=client
    )

    def command(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        channel = body["channel_id"]
        if str(body.get("text", "")).startswith("storm "):
            _, count, prefix = str(body["text"]).split()
            storm(int(count), prefix, body["user_id"], engine, client)
            return
        with engine.begin() as connection:
            connection.execute(INSERT_ROW, {"c": channel})
        client.chat_postMessage(channel=channel, text="Varulv", blocks=lobby(mention(body)))

    turns = engine.execution_options(isolation_level="AUTOCOMMIT")

    def durably(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        channel, blocks = body["channel_id"], lobby(mention(body))
        with engine.begin() as connection:
            game = connection.execute(NEW_GAME, {"c": channel}).scalar_one()
            entry = connection.execute(NEW_ENTRY, {"g": game, "b": json.dumps(blocks)}).scalar_one()
            connection.execute(TAKE_LEASE, {"g": game})
        with turns.connect() as connection:
            connection.execute(TURN, {"k": channel}).scalar_one()
        posted = client.chat_postMessage(channel=channel, text="Varulv", blocks=blocks)
        with engine.begin() as connection:
            for statement in LANDED:
                connection.execute(statement, {"g": game, "e": entry, "ts": posted["ts"]})

    if env.get("FLOOR") in ("lean", "read-first"):
        # No BEGIN, no COMMIT: each statement is its own transaction.
        statements = create_engine(
            sqlalchemy_url(env["DATABASE_URL"]), pool_size=THREADS, isolation_level="AUTOCOMMIT"
        )
        reads_first = env["FLOOR"] == "read-first"

        def leanly(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
            ack()
            channel, host = body["channel_id"], mention(body)
            with statements.connect() as connection:
                if reads_first:  # what the lobby shows, read before it is drawn
                    read = connection.execute(READ_FIRST, {"u": body["user_id"], "c": channel})
                    game, kept_name, bots = read.one()
                    blocks = lobby(kept_name or host, game, bots is not False)
                    before = {"g": game, "c": channel, "b": json.dumps(blocks)}
                    claimed = connection.execute(READ_FIRST_BEFORE, before)
                else:
                    blocks = lobby(host)
                    before = {"c": channel, "b": json.dumps(blocks)}
                    claimed = connection.execute(LEAN_BEFORE, before)
                entry = claimed.one()[0]
            posted = client.chat_postMessage(channel=channel, text="Varulv", blocks=blocks)
            with statements.connect() as connection:
                connection.execute(LEAN_AFTER, {"e": entry, "ts": posted["ts"]})

        with engine.begin() as connection:
            for table in READ_FIRST_TABLES if reads_first else LEAN_TABLES:
                connection.execute(table)
        app.command("/varulv")(leanly)
    elif env.get("FLOOR") == "durable":
        with engine.begin() as connection:
            for table in DURABLE_TABLES:
                connection.execute(table)
        app.command("/varulv")(durably)
    else:
        app.command("/varulv")(command)

    def acknowledge(ack: Ack) -> None:
        ack()

    for action in ACTIONS:
        app.action(ids.pattern(action))(acknowledge)
    slack = SlackRequestHandler(app)

    def route(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == "/healthz":
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok\n"]
        return slack(environ, start_response)

    return route


def storm(count: int, prefix: str, user: str, engine: Any, client: WebClient) -> None:
    """``/varulv storm N PREFIX``: in the background, ``N`` board-sized messages posted to the
    channels ``PREFIX00000``…, each after one row INSERTed and COMMITted, from
    ``STORM_THREADS`` threads of this process: the visible work of a thousand phases ending
    at once, done by the floor while it goes on answering."""

    def post(number: int) -> None:
        channel = f"{prefix}{number:05d}"
        with engine.begin() as connection:
            connection.execute(INSERT_ROW, {"c": channel})
        client.chat_postMessage(channel=channel, text="Varulv", blocks=lobby(f"<@{user}>"))

    def run() -> None:
        with ThreadPoolExecutor(STORM_THREADS, thread_name_prefix="floor-storm") as threads:
            list(threads.map(post, range(count)))

    threading.Thread(target=run, name="floor-storm", daemon=True).start()


def main() -> None:
    """gunicorn's own command line: one ``gthread`` worker, eight threads."""
    env = os.environ
    arguments = [
        sys.executable,
        "-m",
        "gunicorn",
        "--worker-class",
        "gthread",
        "--workers",
        env.get("WEB_CONCURRENCY", "1"),
        "--threads",
        str(THREADS),
        "--bind",
        f"127.0.0.1:{env['PORT']}",
        "benchmarks.floor:wsgi()",
    ]
    os.execv(sys.executable, arguments)


if __name__ == "__main__":
    main()
