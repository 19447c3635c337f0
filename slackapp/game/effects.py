"""What a decision shows: the machine's effects, and the views of each Slack surface.

A surface is one Slack message of a game: the channel's "lobby" (which becomes the night
board), the "day" board, the "vote" board, the "reveal", each person's night message
"dm:<key>" and their word at the game's end "over:<key>". A :class:`Show` says what a surface
must show now (its first Show posts it); :class:`Say` and :class:`Tell` are new posts;
:class:`Answer` is the private answer to whoever acted; :class:`Scored` carries the decided game
and the reasons for each seat's points. Views are plain data: ``slackapp.blocks.render`` draws
them as Block Kit. Public views hold names, counts and times only, never a card, a night choice
or a ballot.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from slackapp.game.cards import Card
from slackapp.game.lines import Language, Line, Message, SeatName
from slackapp.game.night import Knowledge, NightChoice, SawWerewolves
from slackapp.game.outcome import BallotScore, Outcome
from slackapp.game.settings import Kept

LOBBY_BOARD = "lobby"
DAY_BOARD = "day"
VOTE_BOARD = "vote"
REVEAL = "reveal"


def dm_surface(key: str) -> str:
    return f"dm:{key}"


def over_surface(key: str) -> str:
    """A person's word at the game's end: a message of its own in their DM, posted once below
    their night message (which keeps their night as it stood at dawn). A post, not a redraw:
    ten redraws at every reveal would spend the workspace's shared ``chat.update`` budget."""
    return f"over:{key}"


def dm_key(surface: str) -> str | None:
    """The seat a private surface belongs to, or None for a channel surface."""
    for prefix in ("dm:", "over:"):
        if surface.startswith(prefix):
            return surface.removeprefix(prefix)
    return None


@dataclass(frozen=True)
class LobbyView:
    game_id: int
    host: str
    seats: tuple[SeatName, ...]
    kept: Kept
    """The channel's settings the table keeps, whole: a screen reads the ones it shows."""


@dataclass(frozen=True)
class ClosedView:
    """A message once its game has moved on or ended: a line, no buttons (the machine's, or
    words already in the table's language)."""

    line: Line | str


@dataclass(frozen=True)
class NightBoardView:
    seats: tuple[SeatName, ...]
    confirmed: int
    people: int
    deadline: datetime
    fingerprint: str = ""
    """The deal's fingerprint (``slackapp.game.fingerprint``); "" shows none."""


@dataclass(frozen=True)
class NightOverView:
    seats: tuple[SeatName, ...]
    fingerprint: str = ""


@dataclass(frozen=True)
class DayBoardView:
    game_id: int
    deadline: datetime
    heard: int
    needed: int
    people: int
    seat_count: int = 0
    """How many seats the table has: its deck is public (:func:`cards.deck_in_play`)."""
    first_speaker: SeatName | None = None
    """The person named to speak first, so that nobody has to fight for the first word."""
    claims_order: tuple[SeatName, ...] = ()
    """Every person, in the order they make their claim: the first speaker, then round the
    table."""
    silent: tuple[SeatName, ...] = ()
    """The bots: they hold cards, move cards and vote, but make no claim."""


@dataclass(frozen=True)
class DayOverView:
    reason: Line
    seat_count: int = 0
    """The table's size, for its public deck (0: not shown)."""


@dataclass(frozen=True)
class BallotBoardView:
    game_id: int
    seats: tuple[SeatName, ...]
    voted: int
    total: int
    deadline: datetime


@dataclass(frozen=True)
class PersonalBallotView:
    """One person's own ballot, shown only to them: never a channel's surface."""

    game_id: int
    others: tuple[SeatName, ...]
    """Every seat but the person's own, in seat order."""
    voted: bool
    target: str | None
    """The seat key their ballot names; None for Nobody (or, without ``voted``, no ballot)."""
    deadline: datetime
    language: Language = Language.ENGLISH
    """The game's words: this ballot is drawn outside the game's own messages."""


@dataclass(frozen=True)
class BallotClosedView:
    voted: int
    total: int


@dataclass(frozen=True)
class RevealView:
    outcome: Outcome
    seats: tuple[SeatName, ...]
    game_id: int = 0
    """The game revealed, which its *Play again* button names (0: no button)."""


@dataclass(frozen=True)
class NightDmView:
    """A person's private night message: their card, what they know and may still do."""

    game_id: int
    channel: str
    me: SeatName
    seats: tuple[SeatName, ...]
    card: Card
    kind: str | None
    """The move the card offers (:meth:`GameState.choice_kind`), or None: confirm only."""
    waking: Knowledge | None
    """What a Werewolf or the Minion sees on waking, before any choice."""
    pending: str | None
    confirmed: bool
    choice: NightChoice | None
    learned: Knowledge | None
    """What the seat's own choice showed it."""
    dawn_card: Card | None = None
    """The Insomniac's card at dawn, once the night is over."""
    late: bool = False
    """The night ended before this person confirmed."""

    @property
    def minion_without_werewolves(self) -> bool:
        """A Minion that saw no seat dealt a Werewolf: with no Werewolf at the table it wins
        only if someone other than the Minion dies (docs/rules.md), not by keeping one alive."""
        return (
            self.card is Card.MINION
            and isinstance(self.waking, SawWerewolves)
            and not self.waking.werewolves
        )


@dataclass(frozen=True)
class GameOverDmView:
    channel: str
    dealt: Card
    dawn: Card
    points: int
    won: bool
    ballot: BallotScore | None = None
    """What the person's ballot did for their points."""
    moved: bool = False
    """The person's card changed hands in the night, even if the same kind came back."""


PublicView = (
    LobbyView
    | ClosedView
    | NightBoardView
    | NightOverView
    | DayBoardView
    | DayOverView
    | BallotBoardView
    | BallotClosedView
    | RevealView
)
View = PublicView | NightDmView | GameOverDmView


def settles(view: View) -> bool:
    """Whether ``view`` is its message's last word: the phase it shows is over (dawn, the day
    or the vote closed, a lobby closed, the reveal, a person's night at dawn or their result),
    so no later step of the game redraws it. A board that still counts (confirmed, voted) is
    not: it is redrawn again before its phase ends."""
    if isinstance(view, NightDmView):
        return view.late or view.dawn_card is not None
    return isinstance(
        view,
        ClosedView | NightOverView | DayOverView | BallotClosedView | RevealView | GameOverDmView,
    )


@dataclass(frozen=True)
class Show:
    surface: str
    view: View


@dataclass(frozen=True)
class Say:
    """A new line in the game's channel: the machine's, or words already in the table's
    language (a standing table's call)."""

    text: Line | str


@dataclass(frozen=True)
class Tell:
    """A private message to a person (seated or not), e.g. the host when a game had to end."""

    user: str
    text: Line


@dataclass(frozen=True)
class Answer:
    """The private answer to whoever sent the event."""

    line: Line

    @property
    def reason(self) -> Message:
        return self.line.message


@dataclass(frozen=True)
class Award:
    key: str
    points: int
    won: bool
    named_werewolf: bool


@dataclass(frozen=True)
class Scored:
    """The game is decided: its outcome and each seat's points with their reasons."""

    outcome: Outcome
    awards: tuple[Award, ...]


Effect = Show | Say | Tell | Answer | Scored
