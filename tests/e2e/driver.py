"""Plays Varulv the way people do: typing /varulv and clicking buttons in the fake Slack."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Protocol, TypeVar

import requests
from sqlalchemy import Engine, text

from slackapp.blocks.screen import deck_text
from slackapp.fakeslack import JSON, FakeSlack, Message
from slackapp.game import MAX_SEATS, MIN_SEATS, Card, deal
from slackapp.game.referee import referee
from tests.waiting import PATIENCE

T = TypeVar("T")
_channels = itertools.count(1)
Picker = Callable[[str, Card, Message], str]
"""(user, card, night DM) → the label of the button to click next."""
CARD_IN_DM = re.compile(r"Your card: \*(\w+)\*")


class ServedApp(Protocol):
    """The app as the driver sees it: where Slack posts to it, and its log for failures."""

    @property
    def events_url(self) -> str | None:
        """Its request URL; None over Socket Mode, where the fake sends on the app's socket."""
        ...

    def log_tail(self, lines: int = 60) -> str: ...


class Table:
    """One channel's game, seen through the fake Slack."""

    def __init__(self, fake: FakeSlack, app: ServedApp, db: Engine) -> None:
        self.fake = fake
        self.app = app
        self.db = db
        self.channel = f"C{next(_channels):04d}E2E"
        fake.add_channel(self.channel, f"fika-{self.channel.lower()}")
        self.since = Decimal(fake.next_ts())
        """When the table was set: a private message from before answers nothing here."""
        _aim(fake, app)

    def aim(self) -> None:
        """Send what people do to this table's app (tests may run several, or alternate)."""
        _aim(self.fake, self.app)

    # -- typing and clicking -------------------------------------------------------

    def command(self, user: str, words: str = "") -> requests.Response:
        self.aim()
        response = self.fake.slash_command(user, text=words, channel_id=self.channel)
        assert response.status_code == 200, response.text
        return response

    def click(self, user: str, message: Message, label: str) -> requests.Response:
        """Click the button labelled ``label`` (text or action id) in the newest ``message``."""
        self.aim()
        current = self.fake.message(message.channel, message.ts)
        button = current.button(label)
        response = self.fake.click(user, current, button.action_id)
        assert response.status_code == 200, response.text
        return response

    def wait(self, predicate: Callable[[], T | None], what: str, timeout: float = PATIENCE) -> T:
        try:
            return self.fake.wait_for(predicate, timeout, what=what)
        except TimeoutError as error:
            raise AssertionError(f"{error}\n--- app log ---\n{self.app.log_tail()}") from None

    # -- what people see -----------------------------------------------------------

    def public(self) -> list[Message]:
        return self.fake.messages(self.channel)

    def board(self, containing: str, saying: str = "") -> Message:
        """The newest public message containing ``containing``, once it exists (and says
        ``saying``: boards are redrawn after the step that changed them committed)."""

        def found() -> Message | None:
            message = self.fake.find_message(self.channel, containing)
            return message if message is not None and saying in message.rendered_text else None

        try:
            return self.wait(found, f"a channel message containing {containing!r} {saying!r}")
        except AssertionError as error:
            raise AssertionError(f"{error}\n--- what it shows ---\n{self.shown()}") from None

    def shown(self) -> str:
        """The channel's messages and the game's messages as the outbox left them: what a
        failing wait for a board reports."""
        lines = [f"{m.ts} {m.text!r}" for m in self.fake.messages(self.channel)]
        with self.db.connect() as connection:
            lines += [
                f"{surface} v{version}: {failure or ('sent' if done else 'waiting')}"
                for surface, version, failure, done in connection.execute(
                    text(
                        "SELECT surface, version, failure, done_at IS NOT NULL FROM outbox "
                        "WHERE stream = :id ORDER BY id"
                    ),
                    {"id": self.game_id()},
                )
            ]
        return "\n".join(lines)

    def lobby(self) -> Message:
        return self.wait(
            lambda: next((m for m in self.public() if _has_button(m, "Join")), None),
            "the lobby",
        )

    def dm(self, user: str, saying: str = "Your card") -> Message:
        """The person's night message at this table (``saying``: its words for "Your card"
        in the table's language). The same person's DMs from other tables' games, earlier
        or ending meanwhile, name another channel."""
        return self.wait(lambda: self.newest_dm(user, saying), f"{user}'s night DM at this table")

    def result_dm(self, user: str, saying: str = "The whole story is in") -> Message:
        """The person's message at the end of this table's game, below their night message."""
        return self.wait(
            lambda: self.newest_dm(user, saying), f"{user}'s message at this game's end"
        )

    def newest_dm(self, user: str, saying: str) -> Message | None:
        """The person's newest DM that says ``saying`` and names this table's channel."""
        here = f"<#{self.channel}>"
        return next(
            (
                m
                for m in reversed(self.fake.dm_messages(user))
                if saying in m.rendered_text and here in m.rendered_text
            ),
            None,
        )

    def dm_saying(self, user: str, containing: str) -> Message:
        """The person's night message once it says ``containing`` (it is redrawn after the
        step that changed it committed)."""
        return self.wait(
            lambda: ((dm := self.dm(user)) and containing in dm.rendered_text and dm) or None,
            f"{user}'s night DM to say {containing!r}",
        )

    def card(self, user: str) -> Card:
        found = CARD_IN_DM.search(self.dm(user).rendered_text)
        assert found, self.dm(user).rendered_text
        return Card(found.group(1))

    def ephemeral(self, user: str, containing: str) -> Message:
        """The first private message to ``user`` since this table was set that says
        ``containing``: the same person's answers at earlier tables (the tests' people play
        many games on one stand-in) are not answers to anything here."""
        return self.wait(
            lambda: next(
                (
                    m
                    for m in self.fake.ephemerals(user)
                    if containing in m.rendered_text and Decimal(m.ts) > self.since
                ),
                None,
            ),
            f"a private message to {user} containing {containing!r}",
        )

    # -- the game in the database (arranged or checked by tests) ---------------------

    def game_id(self) -> int:
        with self.db.connect() as connection:
            return int(
                connection.execute(
                    text("SELECT max(id) FROM games WHERE channel_id = :c"), {"c": self.channel}
                ).scalar_one()
            )

    def game(self) -> dict[str, Any]:
        with self.db.connect() as connection:
            row = (
                connection.execute(
                    text("SELECT * FROM games WHERE id = :id"), {"id": self.game_id()}
                )
                .mappings()
                .one()
            )
            return dict(row)

    def seats(self) -> list[dict[str, Any]]:
        with self.db.connect() as connection:
            rows = connection.execute(
                text("SELECT * FROM seats WHERE game_id = :id ORDER BY position"),
                {"id": self.game_id()},
            ).mappings()
            return [dict(row) for row in rows]

    def posted(self) -> dict[str, str]:
        """The game's messages Slack has taken, as the app recorded them: surface → ts."""
        with self.db.connect() as connection:
            rows = connection.execute(
                text("SELECT surface, ts FROM messages WHERE stream = :id"),
                {"id": self.game_id()},
            )
            return {surface: ts for surface, ts in rows}

    def seat_keys(self) -> list[str]:
        return [seat["user_id"] or seat["bot_name"] for seat in self.seats()]

    def arrange_deal(self, wanted: Callable[[dict[str, Card], tuple[Card, Card]], bool]) -> None:
        """Before Start, pick the game's seed so that the deal is one the test needs."""
        keys = self.seat_keys()
        for seed in range(100_000):
            candidate = deal(keys, seed)
            if wanted(candidate.dealt, candidate.center):
                with self.db.begin() as connection:
                    connection.execute(
                        text("UPDATE games SET seed = :s WHERE id = :id"),
                        {"s": seed, "id": self.game_id()},
                    )
                return
        raise AssertionError("no seed gives the wanted deal")

    # -- whole phases --------------------------------------------------------------

    def seat_people(self, host: str, others: list[str], bots: bool = False) -> Message:
        self.command(host)
        lobby = self.lobby()
        for user in others:
            self.click(user, lobby, "Join")
        expected = 1 + len(others)
        self.wait(lambda: len(self.seats()) == expected or None, f"{expected} seated")
        if bots:
            self.click(host, lobby, "Fill with bots")
            self.wait(lambda: len(self.seats()) >= 5 or None, "bots seated")
        self.lobby_shows(lobby, f"Seated ({len(self.seats())})")  # committed first, shown after
        return lobby

    def lobby_shows(self, lobby: Message, saying: str) -> None:
        self.wait(
            lambda: saying in self.fake.message(lobby.channel, lobby.ts).rendered_text or None,
            f"the lobby to say {saying!r}",
        )

    def cancel(self, user: str, lobby: Message) -> None:
        """*Cancel*, then *Yes, cancel* in the private question it brings (the new one: the
        same person may have been asked about an earlier table in the channel)."""

        def questions() -> list[Message]:
            shown = self.fake.ephemerals(user, lobby.channel)
            return [m for m in shown if "Cancel this table?" in m.rendered_text]

        before = len(questions())
        self.click(user, lobby, "Cancel")
        question = self.wait(
            lambda: questions()[before] if len(questions()) > before else None,
            f"the question to {user}: Cancel this table?",
        )
        self.click(user, question, "Yes, cancel")
        self.lobby_shows(lobby, "cancelled this table")

    def start(self, host: str) -> None:
        self.click(host, self.lobby(), "Start")
        self.wait(lambda: self.game()["phase"] != "lobby" or None, "the Start committed")
        # The deal is committed first and the cards go out after: wait for every card, so that
        # nobody's newest night message is still the one from an earlier game.
        people = [seat["user_id"] for seat in self.seats() if seat["user_id"]]
        self.wait(
            lambda: all(f"dm:{user}" in self.posted() for user in people) or None,
            "every card sent",
        )

    def play_night(self, people: list[str], pick: Picker | None = None) -> None:
        """Each person clicks what ``pick`` names for their card until their night is done."""
        for user in people:
            self.finish_night(user, pick or first_choice)

    def finish_night(self, user: str, pick: Picker) -> None:
        dm = self.dm(user)
        while dm.buttons():
            self.click(user, dm, pick(user, self.card(user), dm))

            def changed(before: list[JSON] = dm.blocks) -> Message | None:
                newest = self.dm(user)
                return newest if newest.blocks != before else None

            dm = self.wait(changed, f"{user}'s night DM to change")

    def heard_enough(self, users: list[str]) -> None:
        board = self.board("Heard enough")
        for user in users:
            self.click(user, board, "Heard enough")

    def ballot(self, user: str) -> Message:
        """*Vote* on the board, then the person's own ballot it brought them (a new one: the
        same person may have opened one before)."""

        def ballots() -> list[Message]:
            shown = self.fake.ephemerals(user, self.channel)
            return [m for m in shown if "Your sealed ballot" in m.rendered_text]

        before = len(ballots())
        self.click(user, self.board("One sealed ballot each"), "Vote")
        return self.wait(
            lambda: ballots()[before] if len(ballots()) > before else None,
            f"{user}'s own ballot",
        )

    def cast(self, user: str, ballot: Message, label: str) -> Message:
        """Click ``label`` on the person's own ``ballot``; the ballot once drawn again with
        the answer."""
        self.click(user, ballot, label)

        def answered() -> Message | None:
            now = self.fake.message(ballot.channel, ballot.ts)
            return now if now.blocks != ballot.blocks else None

        return self.wait(answered, f"{user}'s ballot to answer {label!r}")

    def vote(self, votes: dict[str, str]) -> None:
        """Each user opens their own ballot and clicks the given label (a name, or "Nobody")."""
        for user, label in votes.items():
            self.cast(user, self.ballot(user), label)

    def vote_nobody_if_not_voted(self, people: list[str]) -> None:
        """Each of ``people`` who has not voted yet votes for Nobody, while the vote lasts."""
        for user in people:
            if self.game()["phase"] != "vote":
                return
            if self._has_voted(user):
                continue
            self.cast(user, self.ballot(user), "Nobody")

    def _has_voted(self, user: str) -> bool:
        with self.db.connect() as connection:
            found = connection.execute(
                text(
                    "SELECT count(*) FROM ballots JOIN seats ON seats.id = ballots.seat_id "
                    "WHERE seats.game_id = :id AND seats.user_id = :u"
                ),
                {"id": self.game_id(), "u": user},
            ).scalar_one()
        return bool(found)

    def nobody_dies_tonight(self, people: list[str]) -> dict[str, Any]:
        """From the day to the reveal: most of ``people`` have heard enough, every one of them
        votes for nobody; returns the outcome, checked against the referee."""
        self.heard_enough(people[: len(people) // 2 + 1])
        self.vote(dict.fromkeys(people, "Nobody"))
        self.wait_for_phase("over")
        return self.stored_outcome_matches_referee()

    def reveal(self) -> Message:
        """The reveal, once Slack has it (it is posted after the vote's close is committed)."""
        return self.board("what really happened")

    def stored_outcome_matches_referee(self) -> dict[str, Any]:
        """Recompute the game from what the database kept with the referee; return it."""
        game, seats = self.game(), self.seats()
        with self.db.connect() as connection:
            ballots = {
                row.voter_key: (None if row.target == "nobody" else row.target)
                for row in connection.execute(
                    text("SELECT voter_key, target FROM ballots WHERE game_id = :id"),
                    {"id": game["id"]},
                )
            }
        keys = [seat["user_id"] or seat["bot_name"] for seat in seats]
        deal_json = {
            "seats": keys,
            "dealt": {key: seat["dealt"] for key, seat in zip(keys, seats, strict=True)},
            "center": game["center"],
            "night": {
                key: seat["night_choice"]
                for key, seat in zip(keys, seats, strict=True)
                if seat["night_choice"] is not None
            },
            "ballots": ballots,
        }
        expected = referee(json.dumps(deal_json))
        assert game["outcome"] == expected
        return expected

    def undelivered(self) -> int:
        """How many of the game's messages, and of the channel's notices, the app has still to
        show (its outbox): the game's stream, and the channel's entries of any stream."""
        with self.db.connect() as connection:
            return int(
                connection.execute(
                    text(
                        "SELECT count(*) FROM outbox WHERE done_at IS NULL AND (channel = :c"
                        " OR stream = (SELECT max(id) FROM games WHERE channel_id = :c))"
                    ),
                    {"c": self.channel},
                ).scalar_one()
            )

    def wait_for_phase(self, phase: str, timeout: float = PATIENCE) -> None:
        """Until the game is in ``phase`` and Slack shows everything the app decided so far:
        a phase is committed first, and shown after."""
        self.wait(lambda: self.game()["phase"] == phase or None, f"phase {phase}", timeout)
        self.wait(lambda: self.undelivered() == 0 or None, f"phase {phase} shown", timeout)


def without_deck(text: str) -> str:
    """``text`` without any table's deck or night order, as written or inside JSON: these are
    public by design, as at a real table, so a search for secrets must not count them."""
    sizes = range(MIN_SEATS, MAX_SEATS + 1)
    lines = {line for size in sizes for line in deck_text(size).split("\n")}
    for line in sorted(lines, key=len, reverse=True):  # one night order begins another
        text = text.replace(line, "").replace(json.dumps(line)[1:-1], "")
    return text


def _aim(fake: FakeSlack, app: ServedApp) -> None:
    url = app.events_url  # read once: a subclass may hand out the next process each time
    if url is not None:  # over Socket Mode the fake sends on the app's socket instead
        fake.app_url = url


def _has_button(message: Message, label: str) -> bool:
    try:
        message.button(label)
    except LookupError:
        return False
    return True


def first_choice(user: str, card: Card, dm: Message) -> str:
    """A simple night: every card makes the first move it is offered."""
    return dm.buttons()[0].text
