"""What every screen returns, and the few pieces all screens share.

A :class:`Screen` is a message: the blocks, and the plain ``text`` Slack shows in
notifications and where blocks cannot render. That text never holds a secret.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from slackapp.blocks.kit import SECTION_TEXT_LIMIT, Json, context, section
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.words import ENGLISH, Words
from slackapp.game.cards import MAX_SEATS, MIN_SEATS, Card, deck_for, deck_in_play
from slackapp.game.night import wake_order


@dataclass(frozen=True)
class Screen:
    text: str
    """Plain notification fallback: never a card, a choice or a ballot before the reveal."""
    blocks: list[Json]
    """Block Kit as plain data (``slackapp.blocks.kit``)."""

    def as_dicts(self) -> list[Json]:
        """The blocks as chat.postMessage / chat.update take them."""
        return self.blocks


def slack_time(moment: datetime) -> str:
    """A time every reader sees in their own time zone, with a UTC fallback for old clients."""
    if moment.utcoffset() is None:
        raise ValueError("a deadline must be a timezone-aware datetime")
    fallback = moment.astimezone(UTC).strftime("%H:%M UTC")
    return f"<!date^{int(moment.timestamp())}^{{time}}|{fallback}>"


def and_list(items: Sequence[str], words: Words = ENGLISH) -> str:
    """``a``, ``a and b``, ``a, b and c``: how a sentence names several seats."""
    if len(items) <= 1:
        return "".join(items)
    return words._("{some} and {last}", some=", ".join(items[:-1]), last=items[-1])


def seat_name(labels: Mapping[str, SeatLabel], seat: str) -> str:
    """The seat as mrkdwn: a mention for a person, the bold name for a bot."""
    label = labels.get(seat)
    return label.mention if label else seat


def seat_names(
    labels: Mapping[str, SeatLabel], seats: Sequence[str], words: Words = ENGLISH
) -> str:
    return and_list([seat_name(labels, seat) for seat in seats], words)


def plural(count: int, one: str, many: str | None = None) -> str:
    """English only (the referee's and the logs' words); screens count with ``ngettext``."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def sections(lines: Iterable[str]) -> list[Json]:
    """Lines packed into as few sections as Slack's per-section text limit allows."""
    blocks: list[Json] = []
    chunk = ""
    for line in lines:
        line = line[:SECTION_TEXT_LIMIT]
        candidate = f"{chunk}\n{line}" if chunk else line
        if len(candidate) > SECTION_TEXT_LIMIT:
            blocks.append(section(chunk))
            candidate = line
        chunk = candidate
    if chunk:
        blocks.append(section(chunk))
    return blocks


def deck_context(seat_count: int, words: Words = ENGLISH) -> list[Json]:
    """The table's deck and the night's order: public by design, as at a real table."""
    if not MIN_SEATS <= seat_count <= MAX_SEATS:
        return []
    return [context(deck_text(seat_count, words))]


@functools.cache
def deck_text(seat_count: int, words: Words = ENGLISH) -> str:
    """The deck, and on the next line the night's order. Worked out once per table size and
    language: most boards carry it, and a burst redraws many. The cards keep their English
    names in every language."""
    cards = ", ".join(
        card if copies == 1 else f"{card} \N{MULTIPLICATION SIGN}{copies}"
        for card, copies in deck_in_play(seat_count)
    )
    deck = words._(
        "In play: {cards}. {total} cards for {seats} seats: two lie face down in the centre.",
        cards=cards,
        total=seat_count + 2,
        seats=seat_count,
    )
    dealt = deck_for(seat_count)
    names = [
        words._("Werewolves") if card is Card.WEREWOLF and dealt.count(card) > 1 else str(card)
        for card in wake_order(seat_count)
    ]
    wakes = words._("The night wakes: {order}.", order=" \N{RIGHTWARDS ARROW} ".join(names))
    if Card.VILLAGER in dealt:
        sleeps = (
            words._("Villagers sleep.")
            if dealt.count(Card.VILLAGER) > 1
            else words._("The Villager sleeps.")
        )
        wakes = f"{wakes} {sleeps}"
    return f"{deck}\n{wakes}"
