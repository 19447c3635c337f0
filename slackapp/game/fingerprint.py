"""The deal's fingerprint: shown on the night board, checked by the referee after the reveal.

The fingerprint commits the app to the deal before anyone plays: it is the start of a SHA-256
of a secret salt and the cards, so it says nothing about the cards while the salt is secret,
and once the reveal gives the salt anyone can recompute it and see that the deal they are
shown is the one that was dealt.
"""

from __future__ import annotations

import hashlib

from slackapp.game.cards import Deal

FINGERPRINT_DIGITS = 16
"""Hex digits shown: 64 bits, too many for a changed deal and a new salt to be found, after
the fact, that match a fingerprint already shown."""


def deal_salt(seed: int) -> str:
    """The game's salt, drawn from its secret seed through a one-way hash (so the salt gives
    the seed away no more than the bots' seed does), on a stream of its own."""
    return hashlib.sha256(f"{seed}/deal salt".encode()).hexdigest()[:32]


def fingerprint_text(salt: str, deal: Deal) -> str:
    """What is hashed: the salt, each seat's dealt card in seat order, then the two centre
    cards, separated by single spaces (card names hold none)."""
    cards = [str(deal.dealt[seat]) for seat in deal.seats] + [str(card) for card in deal.center]
    return " ".join([salt, *cards])


def fingerprint(salt: str, deal: Deal) -> str:
    """The first :data:`FINGERPRINT_DIGITS` hex digits of the SHA-256 of
    :func:`fingerprint_text`, in groups of four: ``3f2a-9c1e-77b0-d41a``."""
    digest = hashlib.sha256(fingerprint_text(salt, deal).encode()).hexdigest()
    digits = digest[:FINGERPRINT_DIGITS]
    return "-".join(digits[i : i + 4] for i in range(0, FINGERPRINT_DIGITS, 4))
