"""The bots as they played before they reasoned over possible deals: the benchmark's baseline.

A frozen copy of that policy, kept here (and not in the app) so that ``benchmarks/bots.py`` can
set today's bots against it. Night: every move random. Ballot:

- A bot that believes it holds a Werewolf (dealt one and not robbed as far as it knows, or it
  robbed one, or as the Insomniac woke up as one) votes for a random seat that is not a
  werewolf it knows of, or for nobody when every other seat is one.
- The Minion shields the werewolves it saw: a random seat that is not one of them.
- A bot that saw a Werewolf at a seat votes for that seat.
- A Seer that saw both werewolves of the deck in the centre votes for nobody.
- Anyone else votes for nobody one time in six, otherwise for a random seat other than itself
  and any seat it knows to be innocent (the Robber's victim).
"""

from __future__ import annotations

import random

from slackapp.game.bots import BotView
from slackapp.game.cards import Card
from slackapp.game.night import (
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


def _rng(seed: int | str, seat: str, decision: str) -> random.Random:
    return random.Random(f"{seed}/{seat}/{decision}")


def baseline_night_choice(view: BotView, seed: int | str) -> NightChoice | None:
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


def baseline_ballot(view: BotView, seed: int | str, deck_werewolves: int) -> str | None:
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
