"""One kind of server per database: a single-workspace server and an "Add to Slack" server
each serve every game they find, so on one database they would take each other's games."""

from __future__ import annotations

from sqlalchemy import Connection, Engine, exists, select
from sqlalchemy.dialects.postgresql import insert

from slackapp.db.models import Deployment, Game
from slackapp.db.slack_tables import BOTS_TABLE, INSTALLATIONS_TABLE, slack_metadata

SINGLE, MULTI = "single", "multi"

HELD_BY_MULTI = (
    "this database belongs to an “Add to Slack” server (SLACK_CLIENT_ID) that serves the "
    "workspaces installed in it; a single-workspace server (SLACK_BOT_TOKEN) would take their "
    "games. Give it a database of its own (DATABASE_URL), or serve with SLACK_CLIENT_ID and "
    "SLACK_CLIENT_SECRET"
)
HELD_BY_SINGLE = (
    "this database belongs to a single-workspace server (SLACK_BOT_TOKEN); an “Add to Slack” "
    "server (SLACK_CLIENT_ID) would take its games without its token. Give it a database of "
    "its own (DATABASE_URL), or serve with SLACK_BOT_TOKEN"
)


def claim(engine: Engine, multi_workspace: bool) -> str | None:
    """Claim the database for this kind of server; why not, when another kind holds it.

    A database claimed by no server yet (made before the claim existed) belongs to the kind
    its rows show: installations are an "Add to Slack" server's, games without any are a
    single-workspace server's, and an empty one is this server's.
    """
    wanted = MULTI if multi_workspace else SINGLE
    with engine.begin() as connection:
        mode = connection.scalar(select(Deployment.mode))
        if mode is None:
            mode = _shown_by_rows(connection) or wanted
            connection.execute(insert(Deployment).values(id=1, mode=mode).on_conflict_do_nothing())
            mode = connection.scalar(select(Deployment.mode))
    if mode == wanted:
        return None
    return HELD_BY_MULTI if mode == MULTI else HELD_BY_SINGLE


def _shown_by_rows(connection: Connection) -> str | None:
    tables = slack_metadata().tables
    for name in (INSTALLATIONS_TABLE, BOTS_TABLE):
        if connection.scalar(select(exists().select_from(tables[name]))):
            return MULTI
    if connection.scalar(select(exists().select_from(Game))):
        return SINGLE
    return None
