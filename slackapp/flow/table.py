"""What every game step needs: the database, the Web API client, the clock and the timers.

Each step is one transaction that locks the game row and re-checks the phase before it changes
anything, so a double click, two clicks at once or a late timer cannot advance a game twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload, sessionmaker

from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import Screen
from slackapp.db.models import Game, Phase, Seat
from slackapp.game import Card, Deal

log = logging.getLogger(__name__)


class Alarm(Protocol):
    def arm(self, game_id: int, at: datetime) -> None: ...


class NoAlarm:
    """For steps run where no timers are kept (a deadline sweep still finds the game)."""

    def arm(self, game_id: int, at: datetime) -> None:
        pass


def utc_now() -> datetime:
    return datetime.now(UTC)


class NotInstalled(Exception):
    """The workspace has no installation (never added, or uninstalled): no token to act with."""


ClientFor = Callable[[str], WebClient]
"""A workspace's team id → a Web API client with that workspace's bot token."""


@dataclass
class Lengths:
    night_seconds: int
    day_seconds: int
    vote_seconds: int


@dataclass
class Table:
    sessions: sessionmaker[Session]
    client: WebClient
    lengths: Lengths
    alarm: Alarm = field(default_factory=NoAlarm)
    now: Callable[[], datetime] = utc_now
    clients: ClientFor | None = None
    """Installed in many workspaces: each one's client. None: ``client`` serves the only one."""

    def for_workspace(self, team_id: str) -> Table:
        """This table acting in one workspace: ``client`` carries that workspace's bot token.

        Raises NotInstalled when the workspace has no installation.
        """
        if self.clients is None:
            return self
        return replace(self, client=self.clients(team_id))

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        with self.sessions() as session, session.begin():
            yield session

    def deadline(self, seconds: int) -> datetime:
        return self.now() + timedelta(seconds=seconds)


@dataclass(frozen=True)
class Reply:
    """A private answer to the person who acted (None when the screens say it all)."""

    text: str | None = None
    blocks: list[dict[str, Any]] | None = None


def lock_game(session: Session, game_id: int, skip_locked: bool = False) -> Game | None:
    """The game row, locked until the transaction ends, with its seats loaded.

    ``skip_locked``: None at once if another transaction holds the lock, instead of waiting.
    """
    return session.scalars(
        select(Game)
        .where(Game.id == game_id)
        .with_for_update(skip_locked=skip_locked)
        .options(selectinload(Game.seats).selectinload(Seat.ballot))
    ).one_or_none()


def is_due(table: Table, game: Game) -> bool:
    """Whether the game's current phase has reached its deadline, whether or not a timer has
    fired yet. A move made after that counts for nothing: what the deadline closed stays closed,
    so a phase ended anew after a crash ends exactly as it would have."""
    return game.deadline is not None and game.deadline <= table.now()


def open_game_in(
    session: Session, team_id: str, channel_id: str, lock: bool = False
) -> Game | None:
    query = select(Game).where(
        Game.team_id == team_id,
        Game.channel_id == channel_id,
        Game.phase.in_([p.value for p in (Phase.LOBBY, Phase.NIGHT, Phase.DAY, Phase.VOTE)]),
    )
    if lock:
        query = query.with_for_update().options(selectinload(Game.seats).selectinload(Seat.ballot))
    return session.scalars(query).one_or_none()


def seat_of(game: Game, user_id: str) -> Seat | None:
    return next((seat for seat in game.seats if seat.user_id == user_id), None)


def people(game: Game) -> list[Seat]:
    return [seat for seat in game.seats if not seat.is_bot]


def label(seat: Seat) -> SeatLabel:
    return SeatLabel(key=seat.key, name=seat.display_name, user_id=seat.user_id)


def labels(game: Game) -> list[SeatLabel]:
    return [label(seat) for seat in game.seats]


def deal_of(game: Game) -> Deal:
    """The deal as the engine sees it, rebuilt from the stored cards."""
    assert game.center is not None, "only a started game has a deal"
    left, right = (Card(card) for card in game.center)
    return Deal(
        seats=tuple(seat.key for seat in game.seats),
        dealt={seat.key: Card(seat.dealt or "") for seat in game.seats},
        center=(left, right),
    )


def post(table: Table, channel: str, screen: Screen) -> str:
    """Post a message and return its ts; a failure propagates and rolls the step back."""
    response = table.client.chat_postMessage(
        channel=channel, text=screen.text, blocks=screen.as_dicts()
    )
    return str(response["ts"])


def update(table: Table, channel: str | None, ts: str | None, screen: Screen) -> None:
    """Redraw a message in place. A message someone deleted must not stop the game."""
    if not channel or not ts:
        return
    try:
        table.client.chat_update(channel=channel, ts=ts, text=screen.text, blocks=screen.as_dicts())
    except SlackApiError as error:
        log.warning(
            "could not update message %s in %s: %s", ts, channel, error.response.get("error")
        )


def say(table: Table, channel: str, text: str) -> None:
    """A plain public line in the channel, for announcements that need no buttons."""
    try:
        table.client.chat_postMessage(channel=channel, text=text)
    except SlackApiError as error:
        log.warning("could not post to %s: %s", channel, error.response.get("error"))


def names(seats: Sequence[Seat]) -> str:
    mentions: list[str] = [label(seat).mention for seat in seats]
    if len(mentions) <= 1:
        return "".join(mentions)
    return ", ".join(mentions[:-1]) + " and " + mentions[-1]
