"""Seasons: months and quarters in a channel's zone, their boundaries, standings and wrap-ups."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slackapp.game.cards import Card, Deal
from slackapp.game.night import NightChoice, Rob, Swap
from slackapp.game.outcome import play
from slackapp.game.seasons import (
    GameRecord,
    Season,
    SeasonLength,
    SeatRecord,
    Standing,
    game_record,
    season_of,
    season_to_wrap_up,
    season_zone,
    standings,
    wrap_up,
)

MONTH, QUARTER = SeasonLength.MONTH, SeasonLength.QUARTER
STOCKHOLM = ZoneInfo("Europe/Stockholm")
UTC_ZONE = ZoneInfo("UTC")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# --- seasons and their boundaries --------------------------------------------------------------


def test_a_month_season_is_the_calendar_month_in_the_zone() -> None:
    december = Season(2026, 12, MONTH)
    assert season_of(utc("2026-12-15T12:00"), MONTH, STOCKHOLM) == december
    assert december.key == "2026-12"
    assert december.name == "December 2026"
    assert december.starts(STOCKHOLM) == utc("2026-11-30T23:00")  # midnight CET
    assert december.ends(STOCKHOLM) == utc("2026-12-31T23:00")


def test_the_season_rolls_over_at_local_midnight() -> None:
    midnight = utc("2026-11-30T23:00")  # 1 December 00:00 in Stockholm
    assert season_of(midnight - timedelta(microseconds=1), MONTH, STOCKHOLM) == Season(
        2026, 11, MONTH
    )
    assert season_of(midnight, MONTH, STOCKHOLM) == Season(2026, 12, MONTH)
    # In UTC the same instant is still November.
    assert season_of(midnight, MONTH, UTC_ZONE) == Season(2026, 11, MONTH)


def test_a_month_boundary_in_summer_time_is_an_hour_earlier_in_utc() -> None:
    assert Season(2026, 7, MONTH).starts(STOCKHOLM) == utc("2026-06-30T22:00")


def test_the_year_rolls_over() -> None:
    december = Season(2026, 12, MONTH)
    assert december.next() == Season(2027, 1, MONTH)
    assert Season(2027, 1, MONTH).previous() == december
    assert season_of(utc("2027-01-01T00:00"), MONTH, UTC_ZONE) == Season(2027, 1, MONTH)


def test_quarters() -> None:
    fourth = season_of(utc("2026-11-02T09:00"), QUARTER, STOCKHOLM)
    assert fourth == Season(2026, 10, QUARTER)
    assert fourth.key == "2026-Q4"
    assert fourth.name == "October to December 2026"
    assert fourth.next() == Season(2027, 1, QUARTER)
    assert fourth.previous() == Season(2026, 7, QUARTER)
    assert fourth.next().key == "2027-Q1"
    assert fourth.starts(STOCKHOLM) == utc("2026-09-30T22:00")  # still summer time
    assert fourth.ends(STOCKHOLM) == utc("2026-12-31T23:00")


def test_a_season_whose_midnight_was_skipped_starts_when_the_clocks_jump() -> None:
    # Amman moved to summer time at midnight on 1 April 2016: 23:59:59 (UTC+2) on the 31st was
    # followed by 01:00 (UTC+3), at 22:00 UTC; 00:00 never happened.
    zone = ZoneInfo("Asia/Amman")
    jump = utc("2016-03-31T22:00")
    for april in (Season(2016, 4, MONTH), Season(2016, 4, QUARTER)):
        assert april.starts(zone) == jump
        assert season_of(jump - timedelta(seconds=1), april.length, zone) == april.previous()
        assert season_of(jump, april.length, zone) == april


def test_the_season_due_a_wrap_up_is_the_one_just_ended() -> None:
    assert season_to_wrap_up(utc("2027-01-01T08:00"), MONTH, STOCKHOLM) == Season(2026, 12, MONTH)
    assert season_to_wrap_up(utc("2027-01-01T08:00"), QUARTER, STOCKHOLM) == Season(
        2026, 10, QUARTER
    )


def test_a_channels_seasons_turn_in_its_tables_zone_or_utc() -> None:
    # By name: zoneinfo compares zones by identity, and a test that clears its cache makes
    # a second instance of the same zone.
    assert str(season_zone("Asia/Tokyo")) == "Asia/Tokyo"
    assert str(season_zone(None)) == str(UTC_ZONE) == "UTC"


def test_naive_instants_are_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        season_of(datetime(2026, 12, 1), MONTH, UTC_ZONE)


ZONES = [
    "Europe/Stockholm",
    "Asia/Amman",
    "Pacific/Apia",
    "Asia/Kathmandu",
    "Australia/Sydney",
    "UTC",
]


@settings(max_examples=200, deadline=None)
@given(
    st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1), timezones=st.just(UTC)
    ),
    st.sampled_from(list(SeasonLength)),
    st.sampled_from(ZONES),
)
def test_every_instant_is_in_exactly_its_season(
    instant: datetime, length: SeasonLength, zone_name: str
) -> None:
    zone = ZoneInfo(zone_name)
    season = season_of(instant, length, zone)
    assert season.starts(zone) <= instant < season.ends(zone)
    assert season.previous().ends(zone) == season.starts(zone)
    assert season.next().previous() == season
    assert season.first_month % length.months == 1 % length.months
    # Its key and name tell it apart from its neighbours.
    assert len({season.key, season.next().key, season.previous().key}) == 3


# --- what a season counts ----------------------------------------------------------------------

DAY = utc("2026-12-10T14:00")


def seat(
    key: str,
    points: int = 0,
    won: bool = False,
    named: bool = False,
    moved: bool = False,
    wolf: bool = False,
    bot: bool = False,
) -> SeatRecord:
    return SeatRecord(key, bot, points, won, named, moved, wolf)


def game(*seats: SeatRecord, at: datetime = DAY) -> GameRecord:
    return GameRecord(finished_at=at, seats=seats)


def test_a_game_record_reads_points_wins_ballots_and_moved_cards_from_the_outcome() -> None:
    deal = Deal(
        seats=("U1", "U2", "U3", "bot1"),
        dealt={"U1": Card.ROBBER, "U2": Card.WEREWOLF, "U3": Card.TROUBLEMAKER, "bot1": Card.SEER},
        center=(Card.VILLAGER, Card.WEREWOLF),
    )
    # The Robber takes the wolf; the Troublemaker swaps the new wolf with the Seer bot.
    choices: dict[str, NightChoice] = {"U1": Rob("U2"), "U3": Swap("U1", "bot1")}
    ballots: dict[str, str | None] = {"U1": "U2", "U2": "bot1", "U3": "bot1", "bot1": "U3"}
    outcome = play(deal, choices, ballots)
    # At dawn: U1 Seer, U2 Robber, U3 Troublemaker, bot1 Werewolf. The bot dies: village wins.
    record = game_record(outcome, bots={"bot1"}, finished_at=DAY)
    assert record == GameRecord(
        finished_at=DAY,
        seats=(
            SeatRecord("U1", False, 2, True, False, True, False),
            SeatRecord("U2", False, 3, True, True, True, False),
            SeatRecord("U3", False, 3, True, True, False, False),
            SeatRecord("bot1", True, 0, False, False, True, True),
        ),
    )


def test_a_card_that_changed_hands_moved_though_the_same_kind_came_back() -> None:
    """The Changeling counts a card as moved as the reveal does: robbed, then swapped back by
    the Troublemaker, the Robber's card changed hands though the Robber held it again at dawn
    (the reveal shows "Robber → *Robber*"), so the Robber's win counts."""
    deal = Deal(
        seats=("U1", "U2", "U3"),
        dealt={"U1": Card.ROBBER, "U2": Card.WEREWOLF, "U3": Card.TROUBLEMAKER},
        center=(Card.WEREWOLF, Card.SEER),
    )
    choices: dict[str, NightChoice] = {"U1": Rob("U2"), "U3": Swap("U1", "U2")}
    outcome = play(deal, choices, {"U1": "U2", "U2": "U1", "U3": "U2"})
    assert outcome.night.dawn == deal.dealt, "every seat holds the kind it was dealt"
    assert outcome.result.winners == ("U1", "U3"), "the wolf dies: the village wins"
    record = game_record(outcome, bots=set(), finished_at=DAY)
    moved = [seat.card_moved for seat in record.seats]
    assert moved == [outcome.night.changed_hands(key) for key in deal.seats] == [True, True, False]
    result = wrap_up(Season(2026, 12, MONTH), [record])
    assert result is not None
    changeling = {award.title: award for award in result.awards}["Changeling"]
    assert (changeling.holders, changeling.count) == (("U1",), 1)


def test_standings_rank_people_by_points_then_wins_and_share_ties() -> None:
    games = [
        game(
            seat("ann", 3, won=True), seat("bo", 2, won=True), seat("cia"), seat("B1", 3, bot=True)
        ),
        game(seat("ann"), seat("bo", 1), seat("cia", 2, won=True), seat("dan", 2, won=True)),
        game(seat("dan", 2, won=True), seat("eva", 3, won=True)),
    ]
    assert standings(games) == [
        Standing(1, "dan", 2, 2, 4),
        Standing(2, "ann", 2, 1, 3),
        Standing(2, "bo", 2, 1, 3),
        Standing(2, "eva", 1, 1, 3),
        Standing(5, "cia", 2, 1, 2),
    ]


def test_bots_never_rank() -> None:
    assert standings([game(seat("B1", 9, won=True, bot=True))]) == []
    assert wrap_up(Season(2026, 12, MONTH), [game(seat("B1", 9, won=True, bot=True))]) is None


def test_the_wrap_up_names_the_winner_and_the_awards() -> None:
    december = Season(2026, 12, MONTH)
    games = [
        game(
            seat("ann", 3, won=True, named=True),
            seat("bo", 0),
            seat("B1", 3, won=True, named=True, bot=True),
        ),
        game(seat("ann", 1, named=True), seat("bo", 2, won=True, moved=True, wolf=True)),
        game(seat("ann", 2, won=True, moved=True), seat("bo", 2, won=True, moved=True, wolf=True)),
    ]
    result = wrap_up(december, games)
    assert result is not None
    assert result.season == december
    assert result.games == 3
    assert result.winners == ("ann",)
    assert result.points == 6
    by_title = {award.title: award for award in result.awards}
    assert by_title["Wolf hunter"].holders == ("ann",)
    assert by_title["Wolf hunter"].count == 2
    assert by_title["Wolf hunter"].deed == "named a werewolf on 2 ballots"
    assert by_title["Changeling"].holders == ("bo",)
    assert by_title["Changeling"].count == 2
    assert by_title["Pack leader"].holders == ("bo",)
    assert [award.title for award in result.awards] == ["Wolf hunter", "Changeling", "Pack leader"]


def test_ties_share_the_win_and_the_awards() -> None:
    games = [
        game(seat("bo", 3, won=True, named=True), seat("ann", 3, won=True, named=True)),
    ]
    result = wrap_up(Season(2026, 12, MONTH), games)
    assert result is not None
    assert result.winners == ("ann", "bo")
    assert [award.holders for award in result.awards] == [("ann", "bo")]
    assert result.awards[0].deed == "named a werewolf on 1 ballot"


def test_an_award_nobody_earned_is_left_out_and_a_season_without_points_has_no_winner() -> None:
    result = wrap_up(Season(2026, 12, MONTH), [game(seat("ann"), seat("bo"))])
    assert result is not None
    assert result.winners == ()
    assert result.awards == ()
    assert [standing.rank for standing in result.standings] == [1, 1]
