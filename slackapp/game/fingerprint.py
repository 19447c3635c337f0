"""The game's commitments: the deal's fingerprint, shown when the cards are dealt, and the
night's, shown at dawn; both checked by the referee after the reveal.

A fingerprint commits the app to what decides the game before anyone can see it: the first
128 bits of a SHA-256 over a secret salt and what it binds, so it says nothing while the salt
is secret, and once the reveal gives the salt anyone can recompute it with ``hashlib`` alone.

- The deal's binds each person to the card dealt to their seat (seats by their keys: a
  person's Slack user id, ``bot1``… for a bot), in seat order, and the two centre cards.
- The night's binds the deal's fingerprint and every move made at night, bots' included, by
  the seat's key, in seat order: a record with another rob, swap or look does not match it.

Each is posted in a message of its own that the app never edits afterwards, so a screenshot
or a copied line is a witness. The ballots are witnessed by each voter's own confirmation and
by the reveal's tally, which the referee checks the ballots against.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from slackapp.game.cards import Deal
from slackapp.game.night import LookAtCenter, LookAtSeat, NightChoice, Peek, Rob, Swap

FINGERPRINT_DIGITS = 32
"""Hex digits shown: 128 bits, so neither a second deal nor a second night matching one
already shown can be found, even by an app choosing its own salt (a birthday search needs
some 2^64 hashes)."""


def deal_salt(seed: int) -> str:
    """The game's salt, drawn from its secret seed through a one-way hash (so the salt gives
    the seed away no more than the bots' seed does), on a stream of its own."""
    return hashlib.sha256(f"{seed}/deal salt".encode()).hexdigest()[:32]


def fingerprint_text(salt: str, deal: Deal) -> str:
    """What the deal's fingerprint hashes: the salt, each seat's ``KEY:CARD`` in seat order,
    then the two centre cards, separated by single spaces (keys and card names hold none)."""
    seats = [f"{seat}:{deal.dealt[seat]}" for seat in deal.seats]
    return " ".join([salt, *seats, *(str(card) for card in deal.center)])


def move_text(choice: NightChoice) -> str:
    """A night move as the night's fingerprint writes it: ``peek:1``, ``look:KEY``,
    ``look:center``, ``rob:KEY``, ``swap:KEY,KEY``."""
    match choice:
        case Peek(index):
            return f"peek:{index}"
        case LookAtSeat(seat):
            return f"look:{seat}"
        case LookAtCenter():
            return "look:center"
        case Rob(seat):
            return f"rob:{seat}"
        case Swap(first, second):
            return f"swap:{first},{second}"
    raise AssertionError(f"not a night move: {choice!r}")


def night_text(salt: str, deal: Deal, choices: Mapping[str, NightChoice]) -> str:
    """What the night's fingerprint hashes: the deal's fingerprint as shown, the salt, then
    each move as ``KEY:MOVE`` in seat order (a seat that made none is left out), separated by
    single spaces."""
    moves = [f"{seat}:{move_text(choices[seat])}" for seat in deal.seats if seat in choices]
    return " ".join([fingerprint(salt, deal), salt, *moves])


def _shown(text: str) -> str:
    """The first :data:`FINGERPRINT_DIGITS` hex digits of the SHA-256 of ``text`` (UTF-8), in
    groups of four: ``3f2a-9c1e-…``."""
    digits = hashlib.sha256(text.encode()).hexdigest()[:FINGERPRINT_DIGITS]
    return "-".join(digits[i : i + 4] for i in range(0, FINGERPRINT_DIGITS, 4))


def fingerprint(salt: str, deal: Deal) -> str:
    """The deal's fingerprint: :func:`fingerprint_text`, hashed and shown."""
    return _shown(fingerprint_text(salt, deal))


def night_fingerprint(salt: str, deal: Deal, choices: Mapping[str, NightChoice]) -> str:
    """The night's fingerprint: :func:`night_text`, hashed and shown."""
    return _shown(night_text(salt, deal, choices))
