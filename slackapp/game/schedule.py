"""A standing table: the weekdays and local time a channel's lobby opens by itself.

Times are local to an IANA time zone, so a fika at 15:00 in Stockholm stays at 15:00 across
daylight-saving changes. Two local times need a rule:

- a time that does not exist (the spring gap, 02:30 when clocks jump from 02:00 to 03:00)
  opens at the first instant after the gap, the moment the clocks jump (03:00);
- a time that happens twice (the autumn fold, 02:30 when clocks fall back from 03:00 to 02:00)
  opens at its first occurrence only.

Nothing here reads a clock: every instant is passed in, timezone-aware, and returned in UTC.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WORKDAYS = frozenset(range(5))

LOBBY_MINUTES_BOUNDS = (2, 60)
"""How long a scheduled lobby may stay open (inclusive): long enough to notice, short enough
for a break."""


class BadSchedule(ValueError):
    """A schedule that cannot be kept; the message says what to change."""


@dataclass(frozen=True)
class Schedule:
    weekdays: frozenset[int]
    """0 is Monday, 6 is Sunday (``date.weekday()``)."""
    at: time
    """The local wall time the lobby opens, to the minute."""
    zone: str
    """An IANA time zone name, e.g. ``Europe/Stockholm``."""
    lobby_minutes: int
    """How long the lobby stays open for people to join before it closes by itself."""

    def __post_init__(self) -> None:
        if not self.weekdays:
            raise BadSchedule("Pick at least one weekday.")
        if not self.weekdays <= frozenset(range(7)):
            raise BadSchedule(
                f"Weekdays are 0 (Monday) to 6 (Sunday), not {sorted(self.weekdays)}."
            )
        if self.at.second or self.at.microsecond or self.at.tzinfo is not None:
            raise BadSchedule("The time is a local hour and minute, nothing more.")
        low, high = LOBBY_MINUTES_BOUNDS
        if not low <= self.lobby_minutes <= high:
            raise BadSchedule(f"The lobby stays open {low} to {high} minutes.")
        time_zone(self.zone)  # raises BadSchedule for an unknown zone

    @property
    def tz(self) -> ZoneInfo:
        return time_zone(self.zone)

    @property
    def lobby_length(self) -> timedelta:
        return timedelta(minutes=self.lobby_minutes)

    def describe(self) -> str:
        """One line for people: "Monday, Wednesday and Friday at 15:00 (Europe/Stockholm)"."""
        return f"{describe_weekdays(self.weekdays)} at {self.at:%H:%M} ({self.zone})"


@cache
def known_zones() -> frozenset[str]:
    """The IANA zone names this machine's time zone database holds, less the two that name
    no place: ``localtime`` (the server's own) and ``Factory``."""
    return frozenset(available_timezones() - {"localtime", "Factory"})


def time_zone(name: str) -> ZoneInfo:
    """The zone named ``name``; raises BadSchedule for a name that is not an IANA zone."""
    # Checked against the list, not by trying to load it: ZoneInfo also opens files such as
    # "posixrules" that are no zone anyone lives in.
    if name not in known_zones():
        raise BadSchedule(f"{name!r} is not a time zone Varulv knows.")
    return ZoneInfo(name)


def describe_weekdays(weekdays: frozenset[int]) -> str:
    if weekdays == frozenset(range(7)):
        return "Every day"
    if weekdays == WORKDAYS:
        return "Monday to Friday"
    names = [WEEKDAY_NAMES[day] for day in sorted(weekdays)]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def local_instant(day: date, at: time, zone: ZoneInfo) -> datetime:
    """The UTC instant the wall clock in ``zone`` reads ``at`` on ``day``, by the rules above."""
    first = datetime.combine(day, at, zone)  # fold=0: the first occurrence of a repeated time
    instant = first.astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) == first.replace(tzinfo=None):
        return instant
    return _end_of_gap(first, zone)


def _end_of_gap(wall: datetime, zone: ZoneInfo) -> datetime:
    """The instant the clocks jump over ``wall``, a wall time in the gap that does not exist.

    fold=0 reads the gap with the offset from before the jump and fold=1 with the offset after
    it; the jump lies between the two readings, found to the second by bisection.
    """
    low = wall.replace(fold=1).astimezone(UTC)  # before the jump
    high = wall.replace(fold=0).astimezone(UTC)  # after the jump
    low, high = min(low, high), max(low, high)
    after_offset = high.astimezone(zone).utcoffset()
    while high - low > timedelta(seconds=1):
        middle = low + (high - low) / 2
        middle = middle.replace(microsecond=0)
        if middle.astimezone(zone).utcoffset() == after_offset:
            high = middle
        else:
            low = middle
    return high


def _openings_from(schedule: Schedule, first_day: date) -> Iterator[datetime]:
    """Every opening from local ``first_day`` on, in order."""
    zone = schedule.tz
    day = first_day
    while True:
        if day.weekday() in schedule.weekdays:
            yield local_instant(day, schedule.at, zone)
        day += timedelta(days=1)


def _check_aware(instant: datetime) -> None:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError("instants must be timezone-aware")


def next_opening(schedule: Schedule, after: datetime) -> datetime:
    """The first opening strictly after ``after``, in UTC."""
    _check_aware(after)
    # From the day before: an opening pushed past a gap can land on the next local day.
    start = after.astimezone(schedule.tz).date() - timedelta(days=1)
    return next(instant for instant in _openings_from(schedule, start) if instant > after)


def last_opening(schedule: Schedule, at_or_before: datetime) -> datetime:
    """The latest opening at or before ``at_or_before``, in UTC."""
    _check_aware(at_or_before)
    local_day = at_or_before.astimezone(schedule.tz).date()
    start = local_day - timedelta(days=8)  # every weekday occurs once in any seven days
    latest = None
    for instant in _openings_from(schedule, start):
        if instant > at_or_before:
            break
        latest = instant
    assert latest is not None, "a week always holds an opening"
    return latest


@dataclass(frozen=True)
class Wake:
    """What a timer waking at some instant must do about a schedule armed for ``armed``."""

    opening: datetime | None
    """The opening to open the lobby for now, or None: not yet due, or too late to be useful."""
    rearm: datetime
    """The next opening to arm the schedule for (unchanged when nothing was due)."""


def wake(schedule: Schedule, armed: datetime, now: datetime) -> Wake:
    """Decide a wake-up: open at most one lobby, then arm for the first opening after ``now``.

    A schedule is stored with the one opening it is armed for. A wake before it changes
    nothing. A wake at or after it opens the lobby once, for the latest opening that has
    passed, while that lobby would still be open; a wake later than that (the app was down)
    opens nothing rather than a stale table. Either way it arms the first opening after
    ``now``, so that a second wake for the same minute finds nothing due, and a backlog of
    missed days is never replayed.
    """
    _check_aware(armed)
    _check_aware(now)
    if now < armed:
        return Wake(opening=None, rearm=armed)
    latest = last_opening(schedule, now)
    rearm = next_opening(schedule, now)
    if latest < armed or now >= latest + schedule.lobby_length:
        return Wake(opening=None, rearm=rearm)
    return Wake(opening=latest, rearm=rearm)


UNREADABLE_RETRY = timedelta(hours=1)
"""How long a standing table whose schedule cannot be read (its zone is no longer one this
machine knows) waits before it is tried again, having no opening to wait for."""


def after_a_fault(schedule: Schedule | None, now: datetime) -> datetime | None:
    """When a standing table whose opening failed at ``now`` is tried again: None, at the next
    sweep, as it is still due (a failure that passes costs its channel seconds; once its lobby
    time is over, :func:`wake` arms its next opening before anything that could fail, so one
    that lasts costs that opening, and no try at every sweep after it); or, when its schedule
    cannot be read (``None``), :data:`UNREADABLE_RETRY` on, and :func:`wake` then opens no
    table for an opening it missed."""
    _check_aware(now)
    if schedule is None:
        return now + UNREADABLE_RETRY
    return None
