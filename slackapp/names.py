"""People's names, asked of Slack only where one must be written out.

Slack draws a person's name itself wherever Varulv writes a mention (``<@U…>`` in mrkdwn: the
lobby, the boards, the messages), so sitting down needs no name at all. A name is written out
only where Slack renders no mention: button labels (the night's and the ballot's), the
referee's input, a bot's choice of a name nobody at the table has. A person sits down under
the name kept for them in ``people`` (read in the step's own transaction,
:meth:`Names.name_for`), else the handle their request carried; nothing is asked of Slack on
the way. At *Start*, before the deal, the people whose name is unknown or older than
``NAME_REFRESH`` are asked of Slack in one go (:meth:`Names.at_start`: one client, one
``users.info`` after another, the answers kept in one statement) and the cards are dealt
under those names. Opening the App Home refreshes the viewer's kept name once it is stale
(:meth:`Names.refresh`), so a regular's name stays current without Slack telling Varulv of
everyone's profile changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from sqlalchemy import Connection
from sqlalchemy.orm import Session, sessionmaker

from slackapp.db import people
from slackapp.db.engine import outside_transaction
from slackapp.shapes import profile_name
from slackapp.turns import Turns

log = logging.getLogger(__name__)

NAME_REFRESH = timedelta(days=1)
"""A person's kept name is asked of Slack again once it is this old."""
NAME_LOOKUP_SECONDS = 3
"""Each users.info gets this long, once, with no wait for a rate limit."""
THE_PERSONS_OWN = frozenset({"user_not_found", "user_not_visible"})
"""users.info's refusals that are about the one person asked: the others are still asked."""


class AsksNames(Protocol):
    """What a look-up asks of Slack (a ``WebClient``)."""

    def users_info(self, *, user: str) -> Any: ...


def lookup_client(client: WebClient) -> WebClient:
    """A client for names, acting as ``client`` does (its token, its Slack): a short timeout
    and no waiting out a rate limit, since a person waits for *Start* meanwhile and a handle
    can always stand in for a name."""
    return WebClient(
        token=client.token,
        base_url=client.base_url,
        timeout=NAME_LOOKUP_SECONDS,
        ssl=client.ssl,
        proxy=client.proxy,
    )


class Names:
    def __init__(self, sessions: sessionmaker[Session], now: Callable[[], datetime]) -> None:
        self.sessions = sessions
        self.now = now
        self.turns = Turns()
        """Turns at ``users.info``'s tier, per workspace, in this process."""

    @staticmethod
    def name_for(connection: Connection, team_id: str, user_id: str, handle: str) -> str:
        """The name a person sits down under, read in the step's own transaction: the one kept
        for them, however old (*Start* asks again if it is stale), else their handle."""
        known = people.known_in(connection, team_id, user_id)
        return handle if known is None else known.name

    def at_start(self, slack: AsksNames, team_id: str, user_ids: Collection[str]) -> dict[str, str]:
        """The names to deal ``user_ids`` under, in the workspace ``team_id``: the kept ones
        still fresh as they are, the others asked of Slack now and kept. Someone Slack gave
        no name for is left out when none is kept (their seat keeps the name it has)."""
        if not user_ids:
            return {}
        with outside_transaction(self.sessions) as session:
            known = people.known_of(session.connection(), team_id, user_ids)
        now = self.now()
        names = {user: kept.name for user, kept in known.items()}
        stale = [
            user
            for user in user_ids
            if user not in known or now - known[user].fetched_at >= NAME_REFRESH
        ]
        return names | self.ask(slack, team_id, stale)

    def refresh(self, slack: AsksNames, team_id: str, user_id: str) -> None:
        """The person's kept name asked of Slack again if it is stale (the App Home was
        opened). Varulv keeps the names of people who played only: one it keeps none of
        is not asked."""
        with outside_transaction(self.sessions) as session:
            known = people.known_in(session.connection(), team_id, user_id)
        if known is not None and self.now() - known.fetched_at >= NAME_REFRESH:
            self.ask(slack, team_id, [user_id])

    def ask(self, slack: AsksNames, team_id: str, user_ids: Collection[str]) -> dict[str, str]:
        """Each person's name as Slack shows it, asked one after another with one client and
        kept together in one statement. The first failure not about the person asked (a rate
        limit, an install from before ``users:read``, Slack away) ends the asking: the rest
        stand as they are."""
        learned: dict[str, str] = {}
        for user_id in user_ids:
            try:
                self.turns.wait_for("users.info", team_id)  # Slack's Tier 4, per workspace
                user = slack.users_info(user=user_id).get("user")
            except (SlackApiError, SlackClientError, OSError) as error:
                reason = _reason(error)
                if reason in THE_PERSONS_OWN:
                    continue
                log.warning(
                    "users.info failed, names stay as known: %s",
                    reason,
                    extra={"count": len(user_ids) - len(learned)},
                )
                break
            name = profile_name(user, "")
            if name:  # a profile with no name: the name Varulv has stands
                learned[user_id] = name
        if learned:
            self.keep(team_id, learned)
        return learned

    def keep(self, team_id: str, names: Mapping[str, str]) -> None:
        with outside_transaction(self.sessions) as session:
            people.keep(session.connection(), team_id, names, self.now())


def _reason(error: Exception) -> str:
    if isinstance(error, SlackApiError):
        return str(error.response.get("error") or error)
    return type(error).__name__
