"""A channel's settings (``/varulv settings``), each declared once, here: its name, the kind of
value it holds, its bounds or choices, its default and who may change it.

Everything else follows from this table: the ``channel_settings`` column of the same name
(``slackapp.db.channels`` reads and writes every setting alike, and the table's checks are
built from the bounds and choices), the modal's field with the same block and action id
(``slackapp.blocks.settings``, whose ``FIELDS`` holds each setting's words), reading that
field back and checking it, and whose permission saving it takes. :class:`ChannelChoice` is
the same settings as typed values, field for field in the table's order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import Enum, StrEnum
from typing import Any, Generic, TypeVar

from slackapp.game.lines import Language
from slackapp.game.permissions import Asker, Change, Channel, may
from slackapp.game.seasons import DEFAULT_SEASON, SeasonLength

T = TypeVar("T", bound=int | StrEnum)


class Kind(Enum):
    SECONDS = "seconds"
    """A whole number of seconds within the setting's bounds, typed in."""
    SWITCH = "switch"
    """On or off, ticked."""
    PICK = "pick"
    """One of the setting's choices, picked."""


@dataclass(frozen=True)
class Setting(Generic[T]):
    name: str
    """Its column, its modal field's block and action id, its :class:`ChannelChoice` field."""
    kind: Kind
    default: T
    """What a channel that chose nothing gets (the operator may set other lengths)."""
    bounds: tuple[int, int] = (0, 0)
    """The lowest and highest number of seconds, both allowed (``SECONDS`` only)."""
    choices: tuple[T, ...] = ()
    """Every value it may take (``PICK`` only)."""
    change: Change = Change.SETTINGS
    """The permission saving it takes; one of its own is asked only when the value changes,
    and the modal offers the setting only to those who may make it."""

    def allows(self, value: object) -> bool:
        if self.kind is Kind.SECONDS:
            low, high = self.bounds
            return isinstance(value, int) and low <= value <= high
        if self.kind is Kind.PICK:
            return value in self.choices
        return isinstance(value, bool)

    def picked(self, value: str) -> T | None:
        """The choice whose value a form or a column carries, or None if there is none."""
        return next((choice for choice in self.choices if str(choice) == value), None)

    def stored(self, value: T) -> object:
        """The value as its column keeps it."""
        return str(value) if self.kind is Kind.PICK else value

    def read(self, column: Any) -> T:
        """The value of its column (always one the table's check allowed)."""
        if self.kind is Kind.PICK:
            picked = self.picked(str(column))
            return self.default if picked is None else picked
        value: T = column
        return value


NIGHT = Setting[int]("night_seconds", Kind.SECONDS, 120, bounds=(30, 600))
DAY = Setting[int]("day_seconds", Kind.SECONDS, 300, bounds=(60, 1800))
VOTE = Setting[int]("vote_seconds", Kind.SECONDS, 120, bounds=(30, 600))
"""A game's lengths: long enough to act or talk, short enough for a break."""
BOTS = Setting[bool]("bots_allowed", Kind.SWITCH, True)
"""Whether the lobby offers "Fill with bots"."""
SEASON = Setting[SeasonLength]("season", Kind.PICK, DEFAULT_SEASON, choices=tuple(SeasonLength))
"""How long the leaderboard's seasons run."""
LANGUAGE = Setting[Language]("language", Kind.PICK, Language.ENGLISH, choices=tuple(Language))
"""The words of the channel's games and answers."""
OPEN_TO_EVERYONE = Setting[bool]("open_to_everyone", Kind.SWITCH, False, change=Change.OPENNESS)
"""Anyone in the channel may change its table, not only its admins and the standing table's
owner (see ``slackapp.game.permissions``)."""

SETTINGS: tuple[Setting[Any], ...] = (NIGHT, DAY, VOTE, BOTS, SEASON, LANGUAGE, OPEN_TO_EVERYONE)
"""Every setting, in the modal's order."""
LENGTHS = tuple(setting for setting in SETTINGS if setting.kind is Kind.SECONDS)


@dataclass(frozen=True)
class ChannelChoice:
    """What a channel's next game gets: its settings, or the defaults. A setting with a
    permission of its own is None when the form that chose the rest did not offer it."""

    night_seconds: int
    day_seconds: int
    vote_seconds: int
    bots_allowed: bool
    season: SeasonLength = DEFAULT_SEASON
    language: Language = Language.ENGLISH
    open_to_everyone: bool | None = False

    def value(self, setting: Setting[Any]) -> Any:
        return getattr(self, setting.name)


assert [field.name for field in fields(ChannelChoice)] == [s.name for s in SETTINGS]


@dataclass(frozen=True)
class Kept:
    """The settings a game keeps from its channel when its table opens, as the channel chose
    them then: a change made while it runs is for the next table. Each field is a setting of
    the same name, and a ``games`` column of that name too (``slackapp.db.games`` reads and
    writes them all alike), so a setting a game keeps is added here and nowhere on the way
    from the channel to the game."""

    bots_allowed: bool = BOTS.default
    language: Language = LANGUAGE.default

    def value(self, setting: Setting[Any]) -> Any:
        return getattr(self, setting.name)


KEPT = tuple(setting for setting in SETTINGS if setting.name in {f.name for f in fields(Kept)})
"""The settings a game keeps, in the modal's order."""
assert {setting.name for setting in KEPT} == {f.name for f in fields(Kept)}
DEFAULT_KEPT = Kept()
"""What a game keeps of a channel that chose nothing."""
assert all(DEFAULT_KEPT.value(setting) == setting.default for setting in KEPT)


def kept_of(choice: ChannelChoice) -> Kept:
    """What a table opened in the channel now keeps of its ``choice``."""
    return Kept(**{setting.name: choice.value(setting) for setting in KEPT})


def default_choice(instead: Mapping[str, Any]) -> ChannelChoice:
    """Every setting's default, or the value ``instead`` has for it (the operator's lengths)."""
    return choice_of(
        {setting.name: instead.get(setting.name, setting.default) for setting in SETTINGS}
    )


def choice_of(values: Mapping[str, Any]) -> ChannelChoice:
    """The choice of each setting's value, by name."""
    return ChannelChoice(**{setting.name: values[setting.name] for setting in SETTINGS})


def offered(is_admin: bool) -> tuple[Setting[Any], ...]:
    """The settings the modal shows someone who may change the channel's settings: those with a
    permission of their own only if they may make that change too (opening the channel's table
    is for admins, whatever the channel)."""
    asker = Asker(is_admin=is_admin)
    return tuple(
        setting
        for setting in SETTINGS
        if setting.change is Change.SETTINGS or may(setting.change, asker, Channel())
    )


def changes_asked(choice: ChannelChoice, now: ChannelChoice) -> tuple[Change, ...]:
    """The permissions saving ``choice`` over the channel's settings ``now`` takes beyond
    ``Change.SETTINGS``: a setting's own, when its value changes."""
    asked = (
        setting.change
        for setting in SETTINGS
        if setting.change is not Change.SETTINGS
        and choice.value(setting) is not None
        and choice.value(setting) != now.value(setting)
    )
    return tuple(dict.fromkeys(asked))
