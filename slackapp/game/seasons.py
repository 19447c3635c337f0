"""Seasons of a channel's leaderboard, and the wrap-up that ends each one.

A season is a calendar month (the default) or a quarter, in the channel's time zone: the zone
of its standing table when it has one, UTC otherwise. It starts at local midnight on its first
day (or, where a clock change skips midnight, at the first instant after it).

Standings and awards count people only: a bot's seat never ranks. Equal results share a rank
and an award.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import date, datetime, time
from enum import StrEnum
from zoneinfo import ZoneInfo

from slackapp.game.cards import Card, Team
from slackapp.game.outcome import Outcome
from slackapp.game.schedule import local_instant

MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


class SeasonLength(StrEnum):
    MONTH = "month"
    QUARTER = "quarter"

    @property
    def months(self) -> int:
        return 1 if self is SeasonLength.MONTH else 3


DEFAULT_SEASON = SeasonLength.MONTH


@dataclass(frozen=True, order=True)
class Season:
    year: int
    first_month: int
    """1 to 12; for a quarter, 1, 4, 7 or 10."""
    length: SeasonLength

    @property
    def key(self) -> str:
        """Its name in storage: ``2026-12`` for a month, ``2026-Q4`` for a quarter."""
        if self.length is SeasonLength.MONTH:
            return f"{self.year}-{self.first_month:02d}"
        return f"{self.year}-Q{(self.first_month - 1) // 3 + 1}"

    @property
    def name(self) -> str:
        """Its name for people: ``December 2026``, ``October to December 2026``."""
        first = MONTH_NAMES[self.first_month - 1]
        if self.length is SeasonLength.MONTH:
            return f"{first} {self.year}"
        last = MONTH_NAMES[self.first_month + 1]
        return f"{first} to {last} {self.year}"

    def next(self) -> Season:
        month = self.first_month + self.length.months
        return Season(self.year + (month - 1) // 12, (month - 1) % 12 + 1, self.length)

    def previous(self) -> Season:
        month = self.first_month - self.length.months
        return Season(self.year + (month - 1) // 12, (month - 1) % 12 + 1, self.length)

    def starts(self, zone: ZoneInfo) -> datetime:
        """The first instant of the season, in UTC."""
        return local_instant(date(self.year, self.first_month, 1), time(0, 0), zone)

    def ends(self, zone: ZoneInfo) -> datetime:
        """The first instant after the season (the next one's start), in UTC."""
        return self.next().starts(zone)


def season_of(instant: datetime, length: SeasonLength, zone: ZoneInfo) -> Season:
    """The season that ``instant`` (timezone-aware) falls in, in ``zone``."""
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError("instants must be timezone-aware")
    local = instant.astimezone(zone)
    first_month = local.month - (local.month - 1) % length.months
    season = Season(local.year, first_month, length)
    # Local midnight on the 1st may fall later than midnight (a clock change skipped it):
    # the instants of the 1st before the season starts still belong to the season before.
    return season if season.starts(zone) <= instant else season.previous()


def season_zone(schedule_zone: str | None) -> ZoneInfo:
    """The zone a channel's seasons turn in: its standing table's, or UTC."""
    return ZoneInfo(schedule_zone) if schedule_zone else ZoneInfo("UTC")


# --- the games a season counts -------------------------------------------------------------


@dataclass(frozen=True)
class SeatRecord:
    """What a season needs of one seat in one finished game."""

    key: str
    is_bot: bool
    points: int
    won: bool
    named_werewolf: bool
    """Its ballot named a seat holding a Werewolf at dawn."""
    card_moved: bool
    """Its card changed hands in the night, even when the same kind came back by dawn: as the
    reveal shows it (:meth:`slackapp.game.night.Night.changed_hands`)."""
    werewolf_team: bool
    """Its card at dawn was on the werewolf team."""


@dataclass(frozen=True)
class GameRecord:
    finished_at: datetime
    seats: tuple[SeatRecord, ...]


def game_record(outcome: Outcome, bots: Collection[str], finished_at: datetime) -> GameRecord:
    """A finished game as its season counts it; ``bots`` are the seats bots held."""
    dawn, result = outcome.night.dawn, outcome.result
    wolves = {seat for seat, card in dawn.items() if card is Card.WEREWOLF}
    seats = tuple(
        SeatRecord(
            key=seat,
            is_bot=seat in bots,
            points=result.points[seat],
            won=seat in result.winners,
            named_werewolf=outcome.ballots.get(seat) in wolves,
            card_moved=outcome.night.changed_hands(seat),
            werewolf_team=dawn[seat].team is Team.WEREWOLF,
        )
        for seat in outcome.deal.seats
    )
    return GameRecord(finished_at=finished_at, seats=seats)


@dataclass(frozen=True)
class Standing:
    rank: int
    """1 for the top; people with equal points and wins share a rank (1, 1, 3, ...)."""
    key: str
    games: int
    wins: int
    points: int


def rank_order(key: str, wins: int, points: int) -> tuple[int, int, str]:
    """Where a person stands in any ranking: by points, then wins; people level on both are
    listed by their key, the same way in every ranking (this season's and all time)."""
    return (-points, -wins, key)


def standings(games: Iterable[GameRecord]) -> list[Standing]:
    """The people of ``games`` ranked by points, then wins."""
    totals: dict[str, list[int]] = {}
    for game in games:
        for seat in game.seats:
            if seat.is_bot:
                continue
            played, wins, points = totals.setdefault(seat.key, [0, 0, 0])
            totals[seat.key] = [played + 1, wins + seat.won, points + seat.points]
    order = sorted(totals.items(), key=lambda item: rank_order(item[0], item[1][1], item[1][2]))
    ranked: list[Standing] = []
    for position, (key, (played, wins, points)) in enumerate(order, start=1):
        above = ranked[-1] if ranked else None
        tied = above is not None and (above.points, above.wins) == (points, wins)
        rank = above.rank if tied and above is not None else position
        ranked.append(Standing(rank, key, played, wins, points))
    return ranked


# --- the wrap-up ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SeasonAward:
    title: str
    deed: str
    """What it is for, completed by the count: "named a werewolf on {ballots}"."""
    holders: tuple[str, ...]
    """Everyone with the top count (people only), in key order."""
    count: int


@dataclass(frozen=True)
class WrapUp:
    season: Season
    games: int
    winners: tuple[str, ...]
    """The people ranked first, when anyone scored."""
    points: int
    standings: tuple[Standing, ...]
    awards: tuple[SeasonAward, ...]


AWARDS: tuple[tuple[str, str, Callable[[SeatRecord], bool]], ...] = (
    ("Wolf hunter", "named a werewolf on {ballots}", lambda s: s.named_werewolf),
    (
        "Changeling",
        "won {games} after their card moved in the night",
        lambda s: s.won and s.card_moved,
    ),
    ("Pack leader", "won {games} for the werewolves", lambda s: s.won and s.werewolf_team),
)
"""Each award's title, what it is for, and which seats of a game count towards it."""


def _award(title: str, deed: str, counts: dict[str, int]) -> SeasonAward | None:
    top = max(counts.values(), default=0)
    if top == 0:
        return None
    holders = tuple(sorted(key for key, count in counts.items() if count == top))
    many = "" if top == 1 else "s"
    return SeasonAward(
        title, deed.format(ballots=f"{top} ballot{many}", games=f"{top} game{many}"), holders, top
    )


def wrap_up(season: Season, games: Collection[GameRecord]) -> WrapUp | None:
    """The season's result from its finished games, or None when no person played in it."""
    ranked = standings(games)
    if not ranked:
        return None
    awards = []
    for title, deed, counts_for in AWARDS:
        counts: dict[str, int] = {}
        for game in games:
            for seat in game.seats:
                if not seat.is_bot and counts_for(seat):
                    counts[seat.key] = counts.get(seat.key, 0) + 1
        award = _award(title, deed, counts)
        if award is not None:
            awards.append(award)
    top = ranked[0]
    winners = tuple(s.key for s in ranked if s.rank == 1) if top.points > 0 else ()
    return WrapUp(
        season=season,
        games=len(games),
        winners=winners,
        points=top.points,
        standings=tuple(ranked),
        awards=tuple(awards),
    )


def season_to_wrap_up(now: datetime, length: SeasonLength, zone: ZoneInfo) -> Season:
    """The season that ended most recently before ``now``: the one whose wrap-up is due."""
    return season_of(now, length, zone).previous()
