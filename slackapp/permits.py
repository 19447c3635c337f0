"""Whether the person asking may change a channel's table: the channel's facts from the
database, Slack's admin flags only when those do not already decide (see
:mod:`slackapp.game.permissions`, which holds the rule).

A permission is decided twice: once to answer at once (and open a form only to those who
may), and again in the transaction that makes the change, under the channel's lock and, for
a stop, the lock of the very game it ends, on facts read after the locks were granted. So
nothing decided on one game (or on "no game is open") is applied to another.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackClientError
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db import channels, games, standing
from slackapp.db.engine import transaction
from slackapp.game import permissions as rule
from slackapp.game.permissions import Asker, Change, Channel, Refusal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Standing:
    """The channel's facts the rule needs."""

    host: str | None
    """The host of the game a stop would end (the channel's open game), if one is open."""
    standing_owner: str | None
    open_to_everyone: bool
    game_id: int | None = None
    """The open game the facts are of."""

    @property
    def channel(self) -> Channel:
        return Channel(self.open_to_everyone, self.standing_owner is not None)


def channel_standing(
    session: Session, team_id: str, channel_id: str, game: tuple[int, str] | None = None
) -> Standing:
    """The channel's facts; ``game`` (its id and host): the game a stop would end, else the
    channel's open game."""
    if game is None:
        open_game = games.open_in(session, team_id, channel_id)
        game = None if open_game is None else (open_game.id, open_game.host_user_id)
    row = standing.get(session, team_id, channel_id)
    return Standing(
        None if game is None else game[1],
        None if row is None else row.owner_user_id,
        channels.open_to_everyone(session, team_id, channel_id),
        None if game is None else game[0],
    )


def profile_of(client: WebClient, user_id: str) -> dict[str, Any] | None:
    """The person as Slack's users.info has them (admin flags, time zone); None when Slack
    does not answer."""
    try:
        user = client.users_info(user=user_id)["user"]
    except (SlackClientError, OSError, KeyError, TypeError) as error:
        log.warning("no profile from users.info: %s", error)
        return None
    return user if isinstance(user, dict) else None


def is_admin(client: WebClient, user_id: str) -> bool:
    """Slack's word on whether ``user_id`` is a workspace admin or owner; not one when Slack
    does not answer (the refusal says who can)."""
    user = profile_of(client, user_id)
    return user is not None and rule.is_admin(user)


class AdminFlags:
    """Slack's admin flags of one person, asked at most once and only when they decide."""

    def __init__(self, client: WebClient, user_id: str, known: bool | None = None) -> None:
        self.client = client
        self.user_id = user_id
        self.known = known

    def __call__(self) -> bool:
        if self.known is None:
            self.known = is_admin(self.client, self.user_id)
        return self.known


def decide(facts: Standing, user_id: str, change: Change, admin: AdminFlags) -> Refusal | None:
    """None when ``user_id`` may make ``change`` given ``facts``; otherwise who can."""
    asker = Asker(
        hosts_the_game=facts.host is not None and facts.host == user_id,
        set_the_standing_table=facts.standing_owner == user_id,
        is_admin=bool(admin.known),
    )
    if admin.known is None and rule.needs_admin_flags(change, asker, facts.channel):
        asker = Asker(asker.hosts_the_game, asker.set_the_standing_table, admin())
    if rule.may(change, asker, facts.channel):
        return None
    return rule.refusal(change, facts.host, facts.standing_owner)


def checked(
    sessions: sessionmaker[Session],
    client: WebClient,
    team_id: str,
    channel_id: str,
    user_id: str,
    change: Change,
    admin: bool | AdminFlags | None = None,
) -> tuple[Refusal | None, int | None]:
    """None when ``user_id`` may make ``change`` in the channel, otherwise who can; and the
    open game it was decided for (a stop may end only that one: another opened meanwhile has
    not been checked). ``admin``: Slack's flags, if already asked; otherwise asked only if
    they decide. Decided again when the change is made: see :func:`refusal_under_lock`."""
    with transaction(sessions) as session:
        facts = channel_standing(session, team_id, channel_id)
    if change is Change.STOP and facts.host is None:
        return None, None  # no game to stop: the step says so, without asking Slack
    flags = admin if isinstance(admin, AdminFlags) else AdminFlags(client, user_id, admin)
    return decide(facts, user_id, change, flags), facts.game_id


def refusal_under_lock(
    session: Session,
    team_id: str,
    channel_id: str,
    user_id: str,
    change: Change,
    admin: AdminFlags,
    game: tuple[int, str] | None = None,
) -> Refusal | None:
    """The permission decided again in the transaction that makes the change, once the
    channel's lock is held; ``game`` (its id and host, its row locked by the caller): the
    game a stop ends."""
    channels.lock_channel(session, team_id, channel_id)
    facts = channel_standing(session, team_id, channel_id, game)
    return decide(facts, user_id, change, admin)
