"""Whether the person asking may change a channel's table: the channel's facts from the
database, Slack's admin flags only when those do not already decide (see
:mod:`slackapp.game.permissions`, which holds the rule)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from slack_sdk import WebClient
from slack_sdk.errors import SlackClientError
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db import channels, games, standing
from slackapp.db.engine import transaction
from slackapp.game import permissions as rule
from slackapp.game.machine import Phase
from slackapp.game.permissions import Asker, Change, Refusal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Standing:
    """The channel's facts the rule needs."""

    host: str | None
    """The host of the channel's open game, if one is open."""
    standing_owner: str | None
    open_to_everyone: bool
    in_lobby: bool = False
    """The open game has not been dealt yet."""
    game_id: int | None = None
    """The open game the facts are of."""

    def answering_for(self, change: Change) -> str | None:
        """The host who answers for the table in ``change``: for the settings and the
        standing table, only a dealt game's, since anyone may open a lobby with ``/varulv``
        and so become its host."""
        return None if self.in_lobby and change is not Change.STOP else self.host


def channel_standing(session: Session, team_id: str, channel_id: str) -> Standing:
    game = games.open_in(session, team_id, channel_id)
    row = standing.get(session, team_id, channel_id)
    return Standing(
        None if game is None else game.host_user_id,
        None if row is None else row.owner_user_id,
        channels.open_to_everyone(session, team_id, channel_id),
        game is not None and game.phase == Phase.LOBBY.value,
        None if game is None else game.id,
    )


def is_admin(client: WebClient, user_id: str) -> bool:
    """Slack's word on whether ``user_id`` is a workspace admin or owner; not one when Slack
    does not answer (the refusal says who can)."""
    try:
        user = client.users_info(user=user_id)["user"]
    except (SlackClientError, OSError, KeyError, TypeError) as error:
        log.warning("no admin flags from users.info: %s", error)
        return False
    return isinstance(user, dict) and rule.is_admin(user)


def refusal_of(
    sessions: sessionmaker[Session],
    client: WebClient,
    team_id: str,
    channel_id: str,
    user_id: str,
    change: Change,
    admin: bool | None = None,
) -> Refusal | None:
    """None when ``user_id`` may make ``change`` in the channel; otherwise who can.
    ``admin``: Slack's flags, already asked; otherwise asked only if they decide."""
    return checked(sessions, client, team_id, channel_id, user_id, change, admin)[0]


def checked(
    sessions: sessionmaker[Session],
    client: WebClient,
    team_id: str,
    channel_id: str,
    user_id: str,
    change: Change,
    admin: bool | None = None,
) -> tuple[Refusal | None, int | None]:
    """:func:`refusal_of`, and the open game it was decided for (a stop may end only that
    one: another opened meanwhile has not been checked)."""
    with transaction(sessions) as session:
        facts = channel_standing(session, team_id, channel_id)
    if change is Change.STOP and facts.host is None:
        return None, None  # no game to stop: the step says so, without asking Slack
    host = facts.answering_for(change)
    asker = Asker(
        hosts_the_game=host is not None and host == user_id,
        set_the_standing_table=facts.standing_owner == user_id,
        is_admin=bool(admin),
    )
    if admin is None and rule.needs_admin_flags(change, asker, facts.open_to_everyone):
        asker = replace(asker, is_admin=is_admin(client, user_id))
    if rule.may(change, asker, facts.open_to_everyone):
        return None, facts.game_id
    return rule.refusal(change, host, facts.standing_owner), facts.game_id
