"""How a bot plays: its night choice and its ballot, from nothing but what that bot knows.

A bot's view is its own seat, the table's seats, the card it was dealt, and what its night
showed it (:class:`~slackapp.game.night.Knowledge`). Each decision draws from a generator
seeded by the game's seed, the bot's seat and the decision, so a game replays exactly.

Night:
- A lone Werewolf peeks at a random centre card; wolves in a pack, the Minion, the Insomniac
  and the Villager have nothing to choose.
- The Seer looks at both centre cards half the time, otherwise at a random other seat.
- The Robber robs a random other seat. The Troublemaker swaps two random other seats.

Ballot (never for itself):
- A bot that believes it holds a Werewolf (dealt one and not robbed as far as it knows, or it
  robbed one, or as the Insomniac woke up as one) votes for a random seat that is not a
  werewolf it knows of, or for nobody when every other seat is one.
- The Minion shields the werewolves it saw: it votes for a random seat that is not one of them,
  or for nobody when every other seat is one.
- A bot that saw a Werewolf at a seat (the Seer's look, the Robber's victim now holds the
  Robber, so not that one) votes for that seat.
- A Seer that saw both werewolves of the deck in the centre votes for nobody: with no wolf at
  the table, the village wins only if nobody dies.
- Anyone else knows nothing useful: it votes for nobody one time in six, otherwise for a random
  seat other than itself and any seat it knows to be innocent (the Robber's victim).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from slackapp.game.cards import Card
from slackapp.game.night import (
    Knowledge,
    LookAtCenter,
    LookAtSeat,
    NightChoice,
    Peek,
    Rob,
    SawCard,
    SawCenter,
    SawSeat,
    SawWerewolves,
    Swap,
)

NOBODY_ODDS = 6
"""A bot with nothing to go on votes for nobody one time in this many."""


@dataclass(frozen=True)
class BotView:
    """Everything a bot may use: no other seat's card, no other seat's choice."""

    seat: str
    seats: tuple[str, ...]
    dealt: Card
    lone_wolf: bool = False
    choice: NightChoice | None = None
    learned: Knowledge | None = None

    @property
    def others(self) -> list[str]:
        return [seat for seat in self.seats if seat != self.seat]


def _rng(seed: int | str, seat: str, decision: str) -> random.Random:
    return random.Random(f"{seed}/{seat}/{decision}")


def bot_night_choice(view: BotView, seed: int | str) -> NightChoice | None:
    """The bot's night choice, by the card it was dealt."""
    rng = _rng(seed, view.seat, "night")
    others = view.others
    match view.dealt:
        case Card.WEREWOLF if view.lone_wolf:
            return Peek(rng.randrange(2))
        case Card.SEER:
            return LookAtCenter() if rng.random() < 0.5 else LookAtSeat(rng.choice(others))
        case Card.ROBBER:
            return Rob(rng.choice(others))
        case Card.TROUBLEMAKER:
            first, second = rng.sample(others, 2)
            return Swap(first, second)
    return None


def believed_card(view: BotView) -> Card:
    """The card the bot thinks it holds: what it took or saw last, else what it was dealt."""
    if isinstance(view.learned, SawCard):
        return view.learned.card
    return view.dealt


def bot_ballot(view: BotView, seed: int | str, deck_werewolves: int) -> str | None:
    """The bot's ballot: a seat other than its own, or None for nobody.

    ``deck_werewolves`` is public: how many Werewolf cards the table's deck holds.
    """
    rng = _rng(seed, view.seat, "ballot")
    others = view.others
    known_wolves: set[str] = set()
    innocent: set[str] = set()
    learned = view.learned
    if isinstance(learned, SawWerewolves):
        known_wolves.update(learned.werewolves)
    if isinstance(learned, SawSeat) and learned.card is Card.WEREWOLF:
        return learned.seat
    if isinstance(view.choice, Rob):
        innocent.add(view.choice.seat)  # it now holds the Robber card

    if believed_card(view) is Card.WEREWOLF or view.dealt is Card.MINION:
        # Every other seat a known wolf (a custom deck): naming nobody is the only shield.
        targets = [seat for seat in others if seat not in known_wolves]
        return rng.choice(targets) if targets else None
    if isinstance(learned, SawCenter) and learned.cards.count(Card.WEREWOLF) >= deck_werewolves:
        return None
    if rng.randrange(NOBODY_ODDS) == 0:
        return None
    targets = [seat for seat in others if seat not in innocent] or others
    return rng.choice(targets)
