"""varulv: one night of werewolf in a Slack channel.

varulv            serve Slack when SLACK_BOT_TOKEN or SLACK_CLIENT_ID is set,
                  otherwise start the sandbox
varulv serve      serve Slack (HTTP on PORT, or Socket Mode with SLACK_APP_TOKEN)
varulv work       keep the timers and deliver, serving no requests (beside
                  varulv serve with VARULV_TIMERS=off)
varulv sandbox    play without Slack: the app, a local Slack and a web page
varulv referee    resolve one whole deal by the rules and print the outcome
varulv erase-workspace TEAM_ID
                  delete everything Varulv keeps about a workspace that removed it
varulv rotate-token-key
                  encrypt every stored Slack token with the first key of VARULV_TOKEN_KEY
varulv prune      delete the details of games ended longer ago than VARULV_RETENTION_DAYS
varulv end-game GAME_ID
                  end an open game that cannot be stopped otherwise, as a fault ends it
"""

from __future__ import annotations

import argparse
import errno
import logging
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from slackapp.config import Settings


class Parser(argparse.ArgumentParser):
    """A mistake on the command line is one line on standard error, and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _refuse(command: str, reason: object) -> int:
    print(f"varulv {command}: {reason}", file=sys.stderr)
    return 2


def _referee(path: str) -> int:
    from slackapp.referee_main import run

    return run(path)


def _serve(command: str = "serve") -> int:
    from slackapp.config import Settings, SettingsError
    from slackapp.logs import configure_logging

    try:
        configure_logging()  # one JSON object a line, from here on
        settings = Settings.from_env()
    except SettingsError as error:
        return _refuse(command, error)
    problems = settings.problems(command)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    return serve(settings, command)


def serve(settings: Settings, command: str = "serve") -> int:
    """Reach the database, bring its schema up to date, then serve Slack until stopped; or,
    as ``varulv work``, keep the timers and deliver until stopped."""
    from slackapp.db.deployment import claim
    from slackapp.db.engine import (
        DatabaseUnavailable,
        check_connections,
        connections_needed,
        database_url,
        make_engine,
        wait_for_database,
    )
    from slackapp.db.migrate import SchemaAhead, upgrade
    from slackapp.db.tokens import unreadable_tokens
    from slackapp.server import keep_time, serve_http, serve_socket_mode

    working = command == "work"
    ports = [] if settings.app_token or working else [("PORT", settings.port)]
    if settings.metrics_port is not None:
        ports.append(("VARULV_METRICS_PORT", settings.metrics_port))
    for name, port in ports:
        problem = _cannot_listen(settings.host, port, name)
        if problem:
            return _refuse(command, problem)
    try:
        url = database_url(settings.database_url, settings.data_dir)
        engine = make_engine(url, prepared_statements=settings.prepared_statements)
        wait_for_database(engine, settings.database_wait_seconds)
        needed = connections_needed(
            1 if working else settings.workers,
            settings.database_connections,
            settings.metrics_port is not None,
        )
        too_many, few_free = check_connections(engine, needed)
    except DatabaseUnavailable as error:
        return _refuse(command, error)
    if too_many:
        engine.dispose()
        return _refuse(command, too_many)
    if few_free:
        logging.getLogger("slackapp.cli").warning(few_free)
    try:
        upgrade(engine)
    except SchemaAhead as error:
        engine.dispose()
        return _refuse(command, error)
    held = claim(engine, settings.multi_workspace) or unreadable_tokens(engine, settings)
    engine.dispose()  # the app opens its own connections
    if held:
        return _refuse(command, held)
    if working:
        keep_time(settings, url)
    elif settings.app_token:
        serve_socket_mode(settings, url)
    else:
        serve_http(settings, url)
    return 0


def _erase_workspace(team_id: str, force: bool) -> int:
    """Delete every row about the workspace, in one transaction; refused while the
    installation store still holds it, unless ``force``."""
    from sqlalchemy.orm import sessionmaker

    from slackapp.config import Settings, SettingsError
    from slackapp.db.engine import (
        DatabaseUnavailable,
        transaction,
        wait_for_database,
    )
    from slackapp.db.erasure import Installed, erase_workspace, installed
    from slackapp.db.migrate import SchemaAhead, upgrade
    from slackapp.shapes import slack_id

    if not slack_id(team_id):
        return _refuse("erase-workspace", f"{team_id!r} is not a Slack team id (like T0123ABCD)")
    try:
        settings = Settings.from_env()
        engine = maintenance_engine(settings)
        wait_for_database(engine, settings.database_wait_seconds)
    except (SettingsError, DatabaseUnavailable) as error:
        return _refuse("erase-workspace", error)
    try:
        try:
            upgrade(engine)  # the tables it deletes from, as serve would have made them
        except SchemaAhead as error:
            return _refuse("erase-workspace", error)
        with transaction(sessionmaker(engine)) as session:
            how = installed(session, team_id)
            if how is not None and not force:
                why = {
                    Installed.WORKSPACE: f"{team_id} still has Varulv installed: remove Varulv "
                    "from the workspace first (that deletes its tokens)",
                    Installed.ORGANISATION: f"{team_id} still has Varulv installed, org-wide in "
                    "its Enterprise Grid organisation: remove Varulv from the organisation first",
                    Installed.CANNOT_TELL: f"{team_id} may still have Varulv installed: it is "
                    "installed org-wide in an Enterprise Grid organisation, and nothing kept "
                    "says whether the workspace is one of its own (its games were pruned, or "
                    "none was played)",
                }[how]
                return _refuse("erase-workspace", f"{why}; pass --force to erase it anyway")
            erased = erase_workspace(session, team_id)
    finally:
        engine.dispose()
    total = sum(erased.values())
    if not total:
        print(f"nothing kept about {team_id}: no row erased")
        return 0
    rows = ", ".join(f"{table} {count}" for table, count in erased.items() if count)
    print(f"erased {team_id}: {total} row{'' if total == 1 else 's'} ({rows})")
    return 0


def _end_game(game_id: int) -> int:
    """End an open game without the phase machine, as a game whose deadline step keeps failing
    is given up (``slackapp.game.faults``): for a lobby, or a game whose steps all fail, that
    nobody can stop. Its messages are written to the outbox, and whichever ``varulv serve`` or
    ``varulv work`` process sweeps next delivers them: this takes no delivery lease."""
    from sqlalchemy.exc import OperationalError

    from slackapp.config import Settings, SettingsError
    from slackapp.db import games, standing
    from slackapp.db.engine import (
        DatabaseUnavailable,
        make_sessions,
        outside_transaction,
        transaction,
        wait_for_database,
    )
    from slackapp.db.journal import keep_journal
    from slackapp.db.migrate import SchemaAhead, upgrade
    from slackapp.game.machine import ended_phase
    from slackapp.logs import configure_logging, log_context
    from slackapp.services.uow import commit_give_up

    try:
        configure_logging()
        settings = Settings.from_env()
        engine = maintenance_engine(settings)
        wait_for_database(engine, settings.database_wait_seconds)
    except (SettingsError, DatabaseUnavailable) as error:
        return _refuse("end-game", error)
    try:
        try:
            upgrade(engine)
        except SchemaAhead as error:
            return _refuse("end-game", error)
        sessions = make_sessions(engine)
        keep_journal(sessions)  # the phase change's line, as the app writes it
        try:
            ended = commit_give_up(sessions, game_id, None)
        except OperationalError as error:
            if not _lock_not_available(error):
                raise
            return _refuse(
                "end-game",
                f"game {game_id} was held by another transaction for "
                f"{games.LOCK_WAIT.total_seconds():.0f} s (a step under way, or one stuck); "
                "nothing changed: try again, or end that transaction",
            )
        if ended is None:
            with outside_transaction(sessions) as session:
                found = games.whereabouts(session.connection(), game_id)
            if found is None:
                return _refuse("end-game", f"there is no game {game_id}; nothing changed")
            with transaction(sessions) as session:  # should a run ended before it cleared it
                standing.lobby_closed(
                    session, standing.Lobby(found.team_id, found.channel_id, game_id)
                )
            return _refuse(
                "end-game",
                f"game {game_id} in {found.channel_id} of {found.team_id} has ended already "
                f"({found.phase.value}); nothing changed",
            )
        with transaction(sessions) as session:  # a standing table's lobby: closed now
            lobby = standing.Lobby(ended.team_id, ended.channel_id, ended.game_id)
            standing.lobby_closed(session, lobby)
    finally:
        engine.dispose()
    now = ended_phase(ended.phase).value
    with log_context(team_id=ended.team_id, channel_id=ended.channel_id, game_id=game_id):
        logging.getLogger("slackapp.cli").warning(
            "game %s ended by varulv end-game (it was in the %s); no one scores",
            game_id,
            ended.phase.value,
        )
    print(
        f"game {game_id} in {ended.channel_id} of {ended.team_id} ended (it was in the "
        f"{ended.phase.value}, and is {now} now); its channel is told once Varulv runs"
    )
    return 0


def _lock_not_available(error: BaseException) -> bool:
    """Whether ``error`` is PostgreSQL's ``lock_not_available``: a lock waited for too long."""
    from psycopg.errors import LockNotAvailable
    from sqlalchemy.exc import DBAPIError

    return isinstance(error, DBAPIError) and isinstance(error.orig, LockNotAvailable)


def maintenance_engine(settings: Settings) -> Engine:
    """The database of a one-off command, reached as ``serve`` reaches it: behind a pooler
    that cannot keep prepared statements (``VARULV_PREPARED_STATEMENTS=off``) it prepares
    none, or a command that runs a statement twice would fail there. With no ``DATABASE_URL``,
    only an embedded database already there: a new empty one, made where the command happened
    to run, would have it find nothing to prune or erase and say so as if it had."""
    from slackapp.db.engine import DatabaseUnavailable, database_url, make_engine

    if settings.database_url is None and not Path(settings.data_dir, "PG_VERSION").exists():
        raise DatabaseUnavailable(
            f"DATABASE_URL is unset, and {settings.data_dir} holds no database: set "
            "DATABASE_URL to the database varulv serve uses (or VARULV_DATA_DIR to its "
            "embedded one's folder); nothing changed"
        )
    url = database_url(settings.database_url, settings.data_dir)
    return make_engine(url, prepared_statements=settings.prepared_statements)


def _maintain(command: str, work: Callable[[Engine, Settings], str]) -> int:
    """Reach the database and bring its schema up to date, as serve does, then ``work``, whose
    answer is printed; a setting, the database or ``work`` refusing is one line, exit 2."""
    from slackapp.config import Settings, SettingsError
    from slackapp.db.engine import DatabaseUnavailable, wait_for_database
    from slackapp.db.migrate import SchemaAhead, upgrade
    from slackapp.db.tokens import TokenKeyError

    try:
        settings = Settings.from_env()
        engine = maintenance_engine(settings)
        wait_for_database(engine, settings.database_wait_seconds)
    except (SettingsError, DatabaseUnavailable) as error:
        return _refuse(command, error)
    try:
        upgrade(engine)
        print(work(engine, settings))
    except (SettingsError, TokenKeyError, SchemaAhead) as error:
        return _refuse(command, error)
    finally:
        engine.dispose()
    return 0


def _cannot_listen(host: str, port: int, name: str = "PORT") -> str | None:
    """Why the server could not listen on host:port, found before anything starts."""
    try:
        with socket.create_server((host, port)):
            return None
    except OSError as error:
        # In use, or below 1024 without the right: the port. Any other (a name that does not
        # resolve, an address not this machine's): the host.
        setting = name if error.errno in (errno.EADDRINUSE, errno.EACCES) else "HOST"
        return (
            f"cannot listen on {host}:{port} ({error.strerror or error}); set {setting} to another"
        )


def _sandbox(port: int | None, open_browser: bool) -> int:
    from slackapp.config import Settings, SettingsError, port_from_env
    from slackapp.logs import logging_config

    try:
        Settings.from_env()  # what the app would refuse, said before anything starts
        logging_config()
        chosen = port_from_env() if port is None else port
    except SettingsError as error:
        return _refuse("sandbox", error)
    from slackapp.sandbox.run import main as run_sandbox  # the whole app: only once it may run

    return run_sandbox(chosen, open_browser)


def _game_id(raw: str) -> int:
    """A game's id, as its log lines name it (``game_id``)."""
    if not raw.isascii() or not raw.isdigit() or not 0 < int(raw) < 2**31:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a game's id (a number, its game_id)")
    return int(raw)


def _port(raw: str) -> int:
    from slackapp.config import SettingsError, port_number

    try:
        return port_number(raw, lowest=0)
    except SettingsError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    parser = Parser(
        prog="varulv", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(
        dest="command",
        metavar="{serve,work,sandbox,referee,erase-workspace,rotate-token-key,prune,end-game}",
    )
    commands.add_parser("serve", help="serve Slack (HTTP on PORT, or Socket Mode)")
    commands.add_parser(
        "work",
        help="keep the timers and deliver, serving no requests (beside varulv serve with "
        "VARULV_TIMERS=off)",
    )
    sandbox = commands.add_parser(
        "sandbox", help="play without Slack: the app, a local Slack and a web page"
    )
    sandbox.add_argument(
        "--port",
        type=_port,
        help="the page's port on 127.0.0.1 (default: PORT, else 3000; 0: any free port)",
    )
    sandbox.add_argument("--open", action="store_true", help="open the page in a web browser")
    referee = commands.add_parser("referee", help="resolve one whole deal (docs/referee.md)")
    referee.add_argument(
        "file",
        nargs="?",
        default="-",
        help="the deal as JSON, or - (the default) for standard input",
    )
    erase = commands.add_parser(
        "erase-workspace",
        help="delete every game, score, setting, name and installation of one workspace",
    )
    erase.add_argument("team_id", help="the workspace's Slack team id (T…)")
    erase.add_argument(
        "--force", action="store_true", help="erase it even though Varulv is still installed there"
    )
    rotate = commands.add_parser(
        "rotate-token-key",
        help="encrypt every stored Slack token with the first key of VARULV_TOKEN_KEY",
    )
    rotate.add_argument(
        "--to-plain-text",
        action="store_true",
        help="decrypt them instead, so that Varulv runs without VARULV_TOKEN_KEY again",
    )
    commands.add_parser(
        "prune",
        help="delete the details of games ended more than VARULV_RETENTION_DAYS ago",
    )
    end = commands.add_parser(
        "end-game",
        help="end an open game nothing else can end, as a fault ends it: stopped (cancelled "
        "in its lobby), no one scoring, its channel told it is free",
    )
    end.add_argument("game_id", type=_game_id, help="the game's id (game_id in the logs)")
    args = parser.parse_args(argv)
    if args.command == "rotate-token-key":
        from slackapp.db.tokens import rotate_token_key

        to_plain_text = bool(args.to_plain_text)
        return _maintain(
            "rotate-token-key",
            lambda engine, settings: rotate_token_key(engine, settings.token_keys, to_plain_text),
        )
    if args.command == "prune":
        from slackapp.db.retention import prune_command

        return _maintain("prune", prune_command)
    if args.command == "erase-workspace":
        return _erase_workspace(args.team_id, args.force)
    if args.command == "end-game":
        return _end_game(args.game_id)
    if args.command == "referee":
        return _referee(args.file)
    if args.command in ("serve", "work"):
        return _serve(args.command)
    if args.command == "sandbox":
        return _sandbox(args.port, args.open)
    # No subcommand: with Slack credentials serve Slack, without them show the sandbox.
    from slackapp.config import slack_credentials_in_env

    if slack_credentials_in_env():
        return _serve()
    return _sandbox(None, open_browser=False)


if __name__ == "__main__":
    sys.exit(main())
