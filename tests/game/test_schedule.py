"""A standing table's openings: weekdays, a local time, daylight saving, and wakes that fire once.

The property tests hold the engine to an oracle that knows nothing of folds or gaps: a day's
opening is the first UTC minute at which the zone's wall clock reads the opening time or later.
"""

from __future__ import annotations

import zoneinfo
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slackapp.game.schedule import (
    UNREADABLE_RETRY,
    BadSchedule,
    Schedule,
    Wake,
    after_a_fault,
    describe_weekdays,
    known_zones,
    last_opening,
    local_instant,
    next_opening,
    time_zone,
    wake,
)

STOCKHOLM = "Europe/Stockholm"
EVERY_DAY = frozenset(range(7))


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def daily(at: time, zone: str = STOCKHOLM, weekdays: frozenset[int] = EVERY_DAY) -> Schedule:
    return Schedule(weekdays=weekdays, at=at, zone=zone, lobby_minutes=15)


# --- what a schedule may be --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"weekdays": frozenset()}, "at least one weekday"),
        ({"weekdays": frozenset({7})}, r"0 \(Monday\) to 6"),
        ({"at": time(15, 0, 30)}, "hour and minute"),
        ({"at": time(15, 0, tzinfo=UTC)}, "hour and minute"),
        ({"lobby_minutes": 1}, "2 to 60 minutes"),
        ({"lobby_minutes": 61}, "2 to 60 minutes"),
        ({"zone": "Mars/Olympus"}, "not a time zone"),
        ({"zone": ""}, "not a time zone"),
        ({"zone": "../../etc/passwd"}, "not a time zone"),
        ({"zone": "localtime"}, "not a time zone"),
        ({"zone": "posixrules"}, "not a time zone"),
        ({"zone": "Europe/Stockholm\x00"}, "not a time zone"),
    ],
)
def test_a_schedule_that_cannot_be_kept_is_refused(change: dict[str, object], message: str) -> None:
    fields: dict[str, object] = {
        "weekdays": EVERY_DAY,
        "at": time(15, 0),
        "zone": STOCKHOLM,
        "lobby_minutes": 15,
    }
    fields.update(change)
    with pytest.raises(BadSchedule, match=message):
        Schedule(**fields)  # type: ignore[arg-type]  # each case changes a field of its own


def test_time_zone_loads_a_known_zone() -> None:
    assert time_zone("America/New_York") == ZoneInfo("America/New_York")


@pytest.mark.parametrize(
    ("weekdays", "words"),
    [
        (EVERY_DAY, "Every day"),
        (frozenset(range(5)), "Monday to Friday"),
        (frozenset({2}), "Wednesday"),
        (frozenset({4, 0}), "Monday and Friday"),
        (frozenset({0, 2, 4}), "Monday, Wednesday and Friday"),
    ],
)
def test_weekdays_read_as_people_say_them(weekdays: frozenset[int], words: str) -> None:
    assert describe_weekdays(weekdays) == words


def test_describe_names_days_time_and_zone() -> None:
    schedule = daily(time(15, 0), weekdays=frozenset({1, 3}))
    assert schedule.describe() == "Tuesday and Thursday at 15:00 (Europe/Stockholm)"


# --- openings --------------------------------------------------------------------------------


def test_the_next_opening_is_on_the_next_chosen_weekday() -> None:
    mondays_and_thursdays = daily(time(15, 0), weekdays=frozenset({0, 3}))
    # Tuesday 1 December 2026, 10:00 UTC: Thursday 3rd at 15:00 CET is 14:00 UTC.
    assert next_opening(mondays_and_thursdays, utc("2026-12-01T10:00")) == utc("2026-12-03T14:00")
    # From that very instant, strictly after it: Monday the 7th.
    assert next_opening(mondays_and_thursdays, utc("2026-12-03T14:00")) == utc("2026-12-07T14:00")
    # A minute before: that same opening.
    assert next_opening(mondays_and_thursdays, utc("2026-12-03T13:59")) == utc("2026-12-03T14:00")


def test_the_weekday_is_the_zones_not_utcs() -> None:
    # 09:00 on Monday in Auckland (UTC+13 in December) is Sunday 20:00 UTC.
    mondays = daily(time(9, 0), zone="Pacific/Auckland", weekdays=frozenset({0}))
    assert next_opening(mondays, utc("2026-12-01T00:00")) == utc("2026-12-06T20:00")


def test_the_local_time_holds_across_the_spring_change() -> None:
    fika = daily(time(15, 0))
    # Stockholm moves to summer time on Sunday 29 March 2026.
    assert next_opening(fika, utc("2026-03-28T12:00")) == utc("2026-03-28T14:00")
    assert next_opening(fika, utc("2026-03-28T14:00")) == utc("2026-03-29T13:00")
    assert next_opening(fika, utc("2026-03-29T13:00")) == utc("2026-03-30T13:00")


def test_the_local_time_holds_across_the_autumn_change() -> None:
    fika = daily(time(15, 0))
    # And back to standard time on Sunday 25 October 2026.
    assert next_opening(fika, utc("2026-10-24T12:00")) == utc("2026-10-24T13:00")
    assert next_opening(fika, utc("2026-10-24T13:00")) == utc("2026-10-25T14:00")


def test_a_time_in_the_spring_gap_opens_when_the_clocks_jump() -> None:
    # 02:30 does not exist on 29 March 2026 in Stockholm: 02:00 CET jumps to 03:00 CEST,
    # at 01:00 UTC.
    night_owls = daily(time(2, 30))
    assert local_instant(date(2026, 3, 29), time(2, 30), ZoneInfo(STOCKHOLM)) == utc(
        "2026-03-29T01:00"
    )
    assert next_opening(night_owls, utc("2026-03-28T02:00")) == utc("2026-03-29T01:00")
    # The days either side keep their 02:30.
    assert next_opening(night_owls, utc("2026-03-28T00:00")) == utc("2026-03-28T01:30")
    assert next_opening(night_owls, utc("2026-03-29T01:00")) == utc("2026-03-30T00:30")


def test_a_time_in_the_new_york_gap_opens_at_three() -> None:
    # 8 March 2026: 02:00 EST jumps to 03:00 EDT at 07:00 UTC.
    schedule = daily(time(2, 15), zone="America/New_York")
    assert next_opening(schedule, utc("2026-03-08T00:00")) == utc("2026-03-08T07:00")


def test_a_time_in_the_autumn_fold_opens_once_at_its_first_occurrence() -> None:
    # 02:30 happens twice on 25 October 2026 in Stockholm: at 00:30 UTC (CEST) and 01:30 UTC.
    night_owls = daily(time(2, 30))
    first = next_opening(night_owls, utc("2026-10-24T12:00"))
    assert first == utc("2026-10-25T00:30")
    assert next_opening(night_owls, first) == utc("2026-10-26T01:30")


def test_a_day_that_does_not_exist_opens_when_it_ends() -> None:
    # Samoa skipped 30 December 2011: 23:59:59 on the 29th (UTC-10) was followed by 00:00 on
    # the 31st (UTC+14), at 10:00 UTC on the 30th.
    schedule = daily(time(10, 0), zone="Pacific/Apia")
    openings = [utc("2011-12-28T00:00")]
    for _ in range(4):
        openings.append(next_opening(schedule, openings[-1]))
    assert openings[1:] == [
        utc("2011-12-28T20:00"),
        utc("2011-12-29T20:00"),
        utc("2011-12-30T10:00"),  # the 30th's 10:00, at the jump
        utc("2011-12-30T20:00"),  # the 31st's 10:00 (UTC+14)
    ]


def test_last_opening_is_at_or_before() -> None:
    fika = daily(time(15, 0), weekdays=frozenset({0}))
    monday = utc("2026-11-30T14:00")
    assert last_opening(fika, monday) == monday
    assert last_opening(fika, monday - timedelta(seconds=1)) == utc("2026-11-23T14:00")
    assert last_opening(fika, utc("2026-12-06T23:59")) == monday


def test_naive_instants_are_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        next_opening(daily(time(15, 0)), datetime(2026, 12, 1, 12, 0))
    with pytest.raises(ValueError, match="timezone-aware"):
        last_opening(daily(time(15, 0)), datetime(2026, 12, 1, 12, 0))


# --- against the oracle ------------------------------------------------------------------------

# Zones with changes of every kind: DST north and south, half-hour offsets, a 30-minute DST
# (Lord Howe), no DST at all, and a skipped day (Apia, 2011).
ZONES = [
    "Europe/Stockholm",
    "America/New_York",
    "America/Sao_Paulo",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Pacific/Chatham",
    "Pacific/Apia",
    "Africa/Casablanca",
    "UTC",
]


def oracle_opening(day: date, at: time, zone: ZoneInfo) -> datetime:
    """The first UTC minute whose wall-clock reading in ``zone`` is ``at`` on ``day`` or later."""
    wall = datetime.combine(day, at)
    minute = wall.replace(tzinfo=UTC) - timedelta(hours=15)
    while minute.astimezone(zone).replace(tzinfo=None) < wall:
        minute += timedelta(minutes=1)
    return minute


def oracle_next(schedule: Schedule, after: datetime) -> datetime:
    zone = ZoneInfo(schedule.zone)
    start = after.astimezone(zone).date() - timedelta(days=1)
    days = [start + timedelta(days=n) for n in range(10)]
    return min(
        instant
        for day in days
        if day.weekday() in schedule.weekdays
        for instant in [oracle_opening(day, schedule.at, zone)]
        if instant > after
    )


schedules = st.builds(
    Schedule,
    weekdays=st.frozensets(st.integers(0, 6), min_size=1),
    at=st.builds(time, st.integers(0, 23), st.sampled_from([0, 15, 30, 45, 59])),
    zone=st.sampled_from(ZONES),
    lobby_minutes=st.integers(2, 60),
)
# Around every year's changes, and across the Samoa skip.
instants = st.datetimes(
    min_value=datetime(2011, 1, 1), max_value=datetime(2030, 12, 31), timezones=st.just(UTC)
)


@settings(max_examples=60, deadline=None)
@given(schedules, instants)
def test_next_opening_matches_the_oracle(schedule: Schedule, after: datetime) -> None:
    assert next_opening(schedule, after) == oracle_next(schedule, after)


def changes(zone: ZoneInfo, year: int) -> list[datetime]:
    """The instants (to the minute, UTC) the zone's offset changed in ``year``."""
    found = []
    noon = datetime(year, 1, 1, 12, tzinfo=UTC)
    for _ in range(366):
        following = noon + timedelta(days=1)
        if noon.astimezone(zone).utcoffset() != following.astimezone(zone).utcoffset():
            low, high = noon, following  # the change lies in (low, high]: bisect it
            while high - low > timedelta(minutes=1):
                middle = low + (high - low) / 2
                if middle.astimezone(zone).utcoffset() == noon.astimezone(zone).utcoffset():
                    low = middle
                else:
                    high = middle
            found.append(high.replace(second=0, microsecond=0))
        noon = following
    return found


CHANGING = [
    (name, year) for name in ZONES for year in range(2011, 2031) if changes(ZoneInfo(name), year)
]
"""The zones and years with a change of offset: some zones keep one offset all year."""


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(CHANGING), st.data())
def test_next_opening_matches_the_oracle_around_each_change(
    zone_year: tuple[str, int], data: st.DataObject
) -> None:
    """Opening times in and around a gap or a fold, on the day of the change."""
    zone_name, year = zone_year
    zone = ZoneInfo(zone_name)
    change = data.draw(st.sampled_from(changes(zone, year)))
    just_before = (change - timedelta(minutes=1)).astimezone(zone)
    wall = just_before.replace(tzinfo=None) + timedelta(minutes=data.draw(st.integers(-90, 90)))
    schedule = daily(time(wall.hour, wall.minute), zone=zone_name)
    after = change - timedelta(hours=data.draw(st.integers(1, 30)))
    assert next_opening(schedule, after) == oracle_next(schedule, after)


@settings(max_examples=200, deadline=None)
@given(schedules, instants)
def test_openings_chain_without_gaps_or_repeats(schedule: Schedule, after: datetime) -> None:
    upcoming = next_opening(schedule, after)
    assert upcoming > after
    assert upcoming.tzinfo is UTC
    # Nothing lies between: the last opening before it is at or before ``after``.
    assert last_opening(schedule, upcoming - timedelta(microseconds=1)) <= after
    assert last_opening(schedule, upcoming) == upcoming
    assert next_opening(schedule, upcoming - timedelta(microseconds=1)) == upcoming
    # An opening reads the chosen time on a chosen weekday, unless that time did not exist
    # that day; then it reads later, within the day's jump.
    local = upcoming.astimezone(ZoneInfo(schedule.zone))
    reads = datetime.combine(local.date(), schedule.at)
    if local.replace(tzinfo=None) == reads:
        assert local.weekday() in schedule.weekdays
    else:
        before = (upcoming - timedelta(seconds=1)).astimezone(ZoneInfo(schedule.zone))
        assert before.utcoffset() != local.utcoffset()


# --- waking up ---------------------------------------------------------------------------------

FIKA = daily(time(15, 0), weekdays=frozenset(range(5)))
THURSDAY = utc("2026-12-03T14:00")
FRIDAY = utc("2026-12-04T14:00")
MONDAY = utc("2026-12-07T14:00")


def test_a_wake_before_the_opening_changes_nothing() -> None:
    woke = wake(FIKA, armed=THURSDAY, now=THURSDAY - timedelta(seconds=1))
    assert woke.opening is None
    assert woke.rearm == THURSDAY


def test_a_wake_at_the_minute_opens_and_arms_the_next_day() -> None:
    woke = wake(FIKA, armed=THURSDAY, now=THURSDAY)
    assert woke.opening == THURSDAY
    assert woke.rearm == FRIDAY


def test_a_second_wake_for_the_same_minute_opens_nothing() -> None:
    first = wake(FIKA, armed=THURSDAY, now=THURSDAY + timedelta(seconds=2))
    second = wake(FIKA, armed=first.rearm, now=THURSDAY + timedelta(seconds=3))
    assert first.opening == THURSDAY
    assert second.opening is None
    assert second.rearm == FRIDAY


def test_a_late_wake_still_opens_while_the_lobby_would_be_open() -> None:
    woke = wake(FIKA, armed=THURSDAY, now=THURSDAY + timedelta(minutes=14, seconds=59))
    assert woke.opening == THURSDAY
    assert woke.rearm == FRIDAY


def test_a_wake_after_the_lobby_would_have_closed_opens_nothing() -> None:
    woke = wake(FIKA, armed=THURSDAY, now=THURSDAY + timedelta(minutes=15))
    assert woke.opening is None
    assert woke.rearm == FRIDAY


def test_a_wake_after_days_down_opens_only_the_latest_and_replays_nothing() -> None:
    # Armed for Thursday, down until a minute after Monday's opening.
    woke = wake(FIKA, armed=THURSDAY, now=MONDAY + timedelta(minutes=1))
    assert woke.opening == MONDAY
    assert woke.rearm == utc("2026-12-08T14:00")


def test_a_wake_between_openings_after_a_miss_arms_the_next() -> None:
    woke = wake(FIKA, armed=THURSDAY, now=utc("2026-12-05T10:00"))  # Saturday
    assert woke == wake(FIKA, armed=THURSDAY, now=utc("2026-12-05T10:00"))
    assert woke.opening is None
    assert woke.rearm == MONDAY


def test_an_opening_that_failed_is_tried_again_while_its_lobby_may_open_and_not_after() -> None:
    failed_at = THURSDAY + timedelta(seconds=2)
    assert after_a_fault(FIKA, failed_at) is None, "still due: the next sweep tries again"
    assert wake(FIKA, armed=THURSDAY, now=failed_at + timedelta(seconds=2)).opening == THURSDAY
    # Failing until its lobby time is over, it is armed for Friday before it fails again.
    over = THURSDAY + FIKA.lobby_length
    assert wake(FIKA, armed=THURSDAY, now=over) == Wake(opening=None, rearm=FRIDAY)


def test_a_schedule_that_cannot_be_read_is_tried_again_an_hour_on() -> None:
    failed_at = THURSDAY + timedelta(minutes=1)
    again = after_a_fault(None, failed_at)
    assert again == failed_at + UNREADABLE_RETRY == THURSDAY + timedelta(hours=1, minutes=1)
    # Readable by then, it opens no stale table for the opening it missed, and arms Friday's.
    woke = wake(FIKA, armed=again, now=again)
    assert woke.opening is None
    assert woke.rearm == FRIDAY


@settings(max_examples=150, deadline=None)
@given(schedules, instants, st.lists(st.integers(0, 3 * 24 * 3600), min_size=1, max_size=8))
def test_wakes_open_each_opening_at_most_once(
    schedule: Schedule, start: datetime, offsets: list[int]
) -> None:
    """However many wakes, in order and at whatever times, no opening is opened twice, and
    every opening is opened when a wake falls inside its lobby."""
    armed = next_opening(schedule, start)
    opened: list[datetime] = []
    for now in sorted(start + timedelta(seconds=offset) for offset in offsets):
        woke = wake(schedule, armed, now)
        if woke.opening is not None:
            assert woke.opening <= now < woke.opening + schedule.lobby_length
            opened.append(woke.opening)
        assert woke.rearm > now or woke.rearm == armed
        armed = woke.rearm
    assert len(opened) == len(set(opened))


def test_a_zone_the_machine_lacks_is_still_known() -> None:
    """A machine whose own time zone database holds no zone at all (a slim image; Debian keeps
    old names such as US/Eastern apart): the zones still come from the ``tzdata`` package."""
    try:
        zoneinfo.reset_tzpath(to=[])
        zoneinfo.ZoneInfo.clear_cache()
        known_zones.cache_clear()
        assert {"Europe/Stockholm", "US/Eastern", "Asia/Calcutta"} <= known_zones()
        assert time_zone("US/Eastern").utcoffset(datetime(2026, 7, 1)) == timedelta(hours=-4)
    finally:
        zoneinfo.reset_tzpath()
        zoneinfo.ZoneInfo.clear_cache()
        known_zones.cache_clear()
