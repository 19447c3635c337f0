"""Nothing public gives a game away before the reveal.

Random games are each played twice, the same way by the same people, over two different deals:
everything the channel shows before the reveal (every message as posted and as each edit left
it, its text and blocks, button values, action ids, select options) must be the same both
times, so it cannot carry a card, a night choice or a ballot. Each person's App Home stays as
it was before the game. And no button value in the channel may carry anything but the game and
a seat, since any member can read a button's value from their client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, text

from slackapp.fakeslack import JSON, FakeSlack, Message
from slackapp.game import BOT_TABLE, Card, deal
from slackapp.game.fingerprint import deal_salt, fingerprint
from tests.e2e.driver import Table, without_deck
from tests.inprocess.harness import InProcessApp
from tests.reliability.support import new_people

pytestmark = pytest.mark.long(16)

CARD_NAMES = [card.value for card in Card]
FIRST_LONG_SEED = 10**15
"""Seeds this long cannot turn up in a message by chance: finding one there means a leak."""
PLAY_ONLY = (Phase.explicit, Phase.reuse, Phase.generate)
"""Each example is two whole games over HTTP: no shrinking, so the run stays short."""
DATES = re.compile(r"<!date\^\d+\^[^>]*>")
VALUES = re.compile(r'"value": "(\d+)')
FIRST_SPEAKER = re.compile(r"<@\w+> speaks first")
CLAIMS_ORDER = re.compile(r"in this order: (?:\d+\. <@\w+>(?:, )?)+\.")
"""Drawn from the seed on a stream of its own, so it differs between two plays by design."""
CHANNEL_BUTTON_VALUE = re.compile(r"^GAME(:(U\w+|bot\d+|nobody))?$")


@dataclass(frozen=True)
class Plan:
    """How the people play, the same over either deal: which button each presses at night
    (by position), how many have heard enough, and whom each votes for (by seat)."""

    people: int
    bots: bool
    night_picks: list[int]
    ballots: list[int]


plans = st.integers(3, 5).flatmap(
    lambda people: st.builds(
        Plan,
        people=st.just(people),
        bots=st.booleans(),
        night_picks=st.lists(st.integers(0, 9), min_size=people, max_size=people),
        ballots=st.lists(st.integers(0, 9), min_size=people, max_size=people),
    )
)


FINGERPRINTS = re.compile(r"[0-9a-f]{4}(?:-[0-9a-f]{4}){7}")
"""The night's fingerprint too, posted at dawn: it hides the moves behind the same salt."""


def normalized(raw: str, game_id: int, channel: str, shown: str) -> str:
    """What differs between two plays of the same game anyway: ids, times of day, who is
    named to speak first (and so the order of the claims), and the deal's fingerprint
    ``shown`` (which hides the deal behind a salt that is checked below never to be sent
    before the reveal)."""
    raw = FINGERPRINTS.sub("<fingerprint>", raw.replace(shown, "<fingerprint>"))
    raw = DATES.sub("<date>", raw.replace(channel, "CHANNEL"))
    raw = FIRST_SPEAKER.sub("<first speaker> speaks first", raw)
    raw = CLAIMS_ORDER.sub("in this order: <claims order>.", raw)
    return VALUES.sub(lambda found: '"value": "GAME' if found[1] == str(game_id) else found[0], raw)


def night_pick(index: int) -> Any:
    def pick(user: str, card: Card, dm: Message) -> str:
        choices = [b.text for b in dm.buttons() if b.text != "Start over"]
        return choices[index % len(choices)]

    return pick


@dataclass
class Played:
    public: list[str]
    """Every post and edit in the channel before the reveal, as sent, ids normalized."""
    homes_before: dict[str, Any]
    homes_during: dict[str, Any]
    seats: list[str]
    seed: int


def play(
    fake: FakeSlack,
    app: InProcessApp,
    db: Engine,
    people: list[str],
    plan: Plan,
    seed_for: Callable[[list[str]], int],
) -> Played:
    """Play one game with the seed ``seed_for(seat keys)``."""
    table = Table(fake, app, db)
    since = len(fake.calls)
    table.command(people[0])
    for seated, user in enumerate(people[1:], start=2):  # one by one: the same seats each time
        table.click(user, table.lobby(), "Join")
        # Each picture shown before the next click: a redraw a later one supersedes unsent
        # would make the two plays differ by timing alone.
        table.board("Join", saying=f"Seated ({seated})")
    if plan.bots and len(people) < BOT_TABLE:
        table.click(people[0], table.lobby(), "Fill with bots")
        table.wait(lambda: len(table.seats()) == BOT_TABLE or None, "bots seated")
    game_id = table.game_id()
    keys = table.seat_keys()
    seed = seed_for(keys)
    with db.begin() as connection:
        connection.execute(
            text("UPDATE games SET seed = :s WHERE id = :id"), {"s": seed, "id": game_id}
        )
    homes_before = open_homes(fake, people)
    table.start(people[0])
    for user, pick in zip(people, plan.night_picks, strict=True):
        table.finish_night(user, night_pick(pick))
    table.wait_for_phase("day")
    enough = people[: len(people) // 2 + 1]
    for count, user in enumerate(enough, start=1):
        table.heard_enough([user])
        if count < len(enough):
            heard = "1 person has" if count == 1 else f"{count} people have"
            table.board("Heard enough", saying=f"{heard} heard enough")
    table.wait_for_phase("vote")
    names = [  # as the ballot's buttons name the seats
        seat["display_name"] + (" (bot)" if seat["bot_name"] else "") for seat in table.seats()
    ]
    votes = {}
    for user, choice in zip(people, plan.ballots, strict=True):
        others = [name for key, name in zip(keys, names, strict=True) if key != user]
        options = [*others, "Nobody"]
        votes[user] = options[choice % len(options)]
    bots = len(keys) - len(people)
    for count, user in enumerate(people[:-1], start=bots + 1):
        table.cast(user, table.ballot(user), votes[user])

        # this game's board, not an answer someone got in the other game
        def counted(n: int = count) -> bool | None:
            return f"{n} of {len(keys)} have voted" in table.board("ballot").rendered_text or None

        table.wait(counted, f"{count} ballots counted")
    homes_during = open_homes(fake, people)
    last = table.ballot(people[-1])
    before_reveal = len(fake.calls)
    table.click(people[-1], last, votes[people[-1]])
    table.wait_for_phase("over")

    salt = deal_salt(seed)
    shown = fingerprint(salt, deal(keys, seed))
    sent = json.dumps([call.params for call in fake.calls[since:before_reveal]])
    assert shown in sent, "the night board shows the deal's fingerprint"
    assert salt not in sent, "the salt that opens the fingerprint was sent before the reveal"
    public = [
        normalized(
            json.dumps([call.method, call.params.get("text"), call.params.get("blocks")]),
            game_id,
            table.channel,
            shown,
        )
        for call in fake.calls[since:before_reveal]
        if call.method in ("chat.postMessage", "chat.update")
        and call.params.get("channel") == table.channel
    ]
    everything = json.dumps([call.params for call in fake.calls[since:]])
    assert str(seed) not in everything, "the seed (and so the whole deal) was sent to Slack"
    return Played(public, homes_before, homes_during, keys, seed)


def open_homes(fake: FakeSlack, people: list[str]) -> dict[str, Any]:
    homes = {}
    for user in people:
        before = (fake.home_view(user) or {}).get("hash")
        assert fake.app_home_opened(user).status_code == 200  # published after the answer

        def published(u: str = user, b: object = before) -> JSON | None:
            return shown if (shown := fake.home_view(u)) and shown.get("hash") != b else None

        view = fake.wait_for(published, what="the Home tab")
        homes[user] = view["blocks"]
    return homes


@settings(max_examples=8, deadline=None, phases=PLAY_ONLY)
@given(plan=plans, first_seed=st.integers(FIRST_LONG_SEED, 2**62 - 1))
def test_the_channel_shows_the_same_before_the_reveal_whatever_the_cards(
    fake: FakeSlack, app: InProcessApp, db: Engine, plan: Plan, first_seed: int
) -> None:
    people = new_people(fake, plan.people)
    first = play(fake, app, db, people, plan, lambda keys: first_seed)
    second = play(fake, app, db, people, plan, lambda keys: another_deal(keys, first_seed))

    assert first.seats == second.seats
    # Different messages are shown side by side, so only what was shown is compared, not the
    # order in which two messages were drawn.
    assert sorted(first.public) == sorted(second.public), (
        "something public before the reveal shows the cards"
    )
    assert first.homes_during == first.homes_before, "the App Home shows a running game"
    public = without_deck("\n".join(first.public))
    for card in CARD_NAMES:
        assert card not in public, f"{card} is public before the reveal"
    for blocks in (json.loads(entry)[2] for entry in first.public):
        for value in button_values(blocks or []):
            assert CHANNEL_BUTTON_VALUE.match(value), f"a channel button carries {value!r}"


def another_deal(keys: list[str], seed: int) -> int:
    """A seed that deals these seats differently from ``seed``."""
    first = deal(keys, seed).dealt
    other = seed
    while True:
        other = other + 1 if other + 1 < 2**62 else FIRST_LONG_SEED
        if deal(keys, other).dealt != first:
            return other


def button_values(blocks: list[Any]) -> Iterator[str]:
    for block in blocks:
        for element in block.get("elements", []) if isinstance(block, dict) else []:
            if isinstance(element, dict) and element.get("type") == "button":
                yield str(element.get("value"))
            for option in element.get("options", []) if isinstance(element, dict) else []:
                yield str(option.get("value"))
