"""The sampled worlds draw from a seat's generator exactly as random.Random's own methods would:
the same seed gives the same worlds, and the generator ends in the same state."""

from __future__ import annotations

import random

import pytest

from slackapp.game.cards import Card
from slackapp.game.worlds import _below, _pair, _sample, _shuffle

SEEDS = [*range(40), "a", "Sight(me=0, seat_count=5)", "plan/Seer/7"]


@pytest.mark.parametrize("seed", SEEDS)
def test_each_draw_is_the_one_random_random_makes(seed: int | str) -> None:
    ours, theirs = random.Random(seed), random.Random(seed)
    bits = ours.getrandbits
    for size in range(1, 14):
        assert _below(bits, size) == theirs.randrange(size)
        population = list(range(3, 3 + size))
        for count in range(size + 1):
            assert _sample(bits, population, count) == theirs.sample(population, count)
        if size >= 2:
            assert list(_pair(bits, size)) == theirs.sample(range(size), 2)
        cards = [list(Card)[number % len(Card)] for number in range(size)]
        shuffled = cards.copy()
        _shuffle(bits, shuffled)
        theirs.shuffle(cards)
        assert shuffled == cards
    assert ours.getstate() == theirs.getstate()
