"""What the fault, security and fuzz tests share: holding a Web API call at the fake Slack so a
test can crash the app at an exact moment, counting what was posted, and reading the game."""

from __future__ import annotations

import itertools
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import Any, Unpack

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from slackapp.blocks.ids import ButtonValue
from slackapp.db.engine import transaction
from slackapp.db.models import Game, Seat
from slackapp.delivery.outbox import enqueue
from slackapp.fakeslack import FakeSlack, Message, SignedRequest
from slackapp.fakeslack.models import JSON
from slackapp.fakeslack.webapi import Answerer, ApiAnswer, ApiRequest
from slackapp.game import machine as m
from slackapp.game.effects import Effect
from tests.e2e.conftest import AppProcess, PhaseLengths, start_app
from tests.e2e.driver import Table
from tests.waiting import PATIENCE

_people = itertools.count(1)


def new_people(fake: FakeSlack, count: int) -> list[str]:
    """Fresh user ids (their DMs hold nothing from other tests), named after them."""
    users = []
    for _ in range(count):
        user = f"U{next(_people):03d}REL"
        fake.add_user(user, f"p{user[1:4]}")
        users.append(user)
    return users


def lobby_game(
    fake: FakeSlack, sessions: sessionmaker[Session], channel: str, shown: Sequence[Effect] = ()
) -> int:
    """A lobby that U0HOST holds in ``channel`` (added to the stand-in), with ``shown`` in its
    outbox from the same transaction."""
    fake.add_channel(channel, channel.lower())
    with transaction(sessions) as session:
        game = Game(
            team_id="T0001",
            channel_id=channel,
            host_user_id="U0HOST",
            phase="lobby",
            seed=1,
            night_seconds=120,
            day_seconds=300,
            vote_seconds=120,
            bots_allowed=True,
        )
        game.seats.append(Seat(position=0, user_id="U0HOST", display_name="host"))
        session.add(game)
        session.flush()
        if shown:
            enqueue(session.connection(), game, list(shown))
        return game.id


class Held:
    """The first Web API call to ``method`` that ``matches`` waits at the fake Slack
    (``response_url``: a post to a response URL, whose parameters are its body).

    With ``applied``, Slack has done what was asked (the message is posted) and only the answer
    is held, so the app never learns of it; without, the call waits before it takes effect, and
    an app killed meanwhile never got it through. ``release()`` lets it go.
    """

    def __init__(
        self,
        fake: FakeSlack,
        method: str,
        matches: Callable[[JSON], bool] = lambda params: True,
        *,
        applied: bool,
    ) -> None:
        self.fake = fake
        self.method = method
        self.matches = matches
        self.applied = applied
        self.reached = threading.Event()
        self.released = threading.Event()
        self.request: ApiRequest | None = None
        self._lock = threading.Lock()
        self._original = fake.api.handle

    def __enter__(self) -> Held:
        self.fake.api.handle = self._handle  # type: ignore[method-assign]  # held, put back on exit
        self.fake.api.hooks.append(self._hook)  # response URLs do not go through handle
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()
        self.fake.api.handle = self._original  # type: ignore[method-assign]  # as it was
        self.fake.api.hooks.remove(self._hook)

    def wait(self, timeout: float = PATIENCE) -> ApiRequest:
        if not self.reached.wait(timeout):
            raise AssertionError(f"the app never called {self.method} as expected")
        assert self.request is not None
        return self.request

    def release(self) -> None:
        self.released.set()

    def claims(self, request: ApiRequest) -> bool:
        """Whether this is the call to hold (asked once per call, under the lock)."""
        return request.method == self.method and self.matches(request.params)

    def channel_of(self, request: ApiRequest) -> str:
        """The conversation a call is about; a response URL's, from Slack's own record."""
        if request.method != "response_url":
            return str(request.params.get("channel"))
        try:
            return self.fake.grants.hook(request.token or "").channel
        except KeyError:
            return ""

    def _handle(self, request: ApiRequest) -> ApiAnswer:
        return self._held(request, self._original)

    def _hook(self, request: ApiRequest, answer: Answerer) -> ApiAnswer:
        if request.method != "response_url":  # a Web API call: _handle saw it already
            return answer(request)
        return self._held(request, answer)

    def _held(self, request: ApiRequest, answer: Answerer) -> ApiAnswer:
        with self._lock:
            mine = self.request is None and self.claims(request)
            if mine:
                self.request = request
        if not mine:
            return answer(request)
        answered = answer(request) if self.applied else None
        self.reached.set()
        self.released.wait(60)
        if answered is None:
            # The caller is gone by now; Slack never saw the call.
            status = 500 if request.method == "response_url" else 200
            return ApiAnswer({"ok": False, "error": "request_timeout"}, status)
        return answered


def restart(
    table: Table,
    old: AppProcess,
    database_url: str,
    late_landing: float | None = None,
    **lengths: Unpack[PhaseLengths],
) -> AppProcess:
    """A fresh app process on the same database, serving the table from now on."""
    old.stop()
    app = start_app(table.fake, database_url, late_landing=late_landing, **lengths)
    table.app = app
    return app


def posted(fake: FakeSlack, since: int, channels: set[str]) -> Counter[tuple[str, str]]:
    """Messages Slack accepted in ``channels`` since call number ``since``: (channel, text)."""
    return Counter(
        (str(call.params.get("channel")), str(call.params.get("text")))
        for call in fake.calls[since:]
        if call.method == "chat.postMessage"
        and call.ok
        and str(call.params.get("channel")) in channels
    )


def conversations(fake: FakeSlack, table: Table, people: list[str]) -> set[str]:
    """The table's channel and its people's DMs: everywhere the game posts."""
    return {table.channel, *(fake.dm_channel(user) for user in people)}


def assert_nothing_posted_twice(fake: FakeSlack, since: int, channels: set[str]) -> None:
    twice = {key: n for key, n in posted(fake, since, channels).items() if n > 1}
    assert not twice, f"posted more than once: {twice}"


def boards(fake: FakeSlack, since: int, channel: str, starting: str) -> int:
    """How many messages starting with ``starting`` Slack accepted in ``channel``."""
    return sum(
        n
        for (where, said), n in posted(fake, since, {channel}).items()
        if where == channel and said.startswith(starting)
    )


LOBBY = "A table for Varulv is being set"
DAY = "Day breaks at the Varulv table"
VOTE = "The Varulv vote is open"
REVEAL = "The Varulv reveal"
NIGHT_DM = "Varulv: your card for tonight is here."


def set_deadline(db: Engine, game_id: int, at: datetime) -> None:
    with db.begin() as connection:
        connection.execute(
            text("UPDATE games SET deadline = :at WHERE id = :id"), {"at": at, "id": game_id}
        )


def seat_rows(db: Engine, game_id: int) -> dict[str, dict[str, Any]]:
    """Each seat's row by its key (user id, or bot name), ballots included."""
    with db.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT seats.*, ballots.target AS ballot FROM seats "
                "LEFT JOIN ballots ON ballots.seat_id = seats.id "
                "WHERE seats.game_id = :id ORDER BY position"
            ),
            {"id": game_id},
        ).mappings()
        return {row["user_id"] or row["bot_name"]: dict(row) for row in rows}


@contextmanager
def running_app(fake: FakeSlack, database_url: str, **options: Any) -> Iterator[AppProcess]:
    app = start_app(fake, database_url, **options)
    try:
        yield app
    finally:
        app.stop()


def signed(fake: FakeSlack, act: Callable[[], object]) -> SignedRequest:
    """The one request ``act`` (a command or a click on ``fake``) would send, signed, unsent."""
    with fake.keeping_requests() as kept:
        act()
    assert len(kept) == 1, f"expected one request, got {len(kept)}"
    return kept[0]


def send_together(
    fake: FakeSlack, sends: list[tuple[SignedRequest, str]], headers: dict[str, str] | None = None
) -> list[int]:
    """Send every (request, url) at the same instant, one thread each; their HTTP statuses."""
    start = threading.Barrier(len(sends))

    def send(request: SignedRequest, url: str) -> int:
        start.wait()
        return fake.send(request, url, headers=headers).status_code

    with ThreadPoolExecutor(len(sends)) as pool:
        return list(pool.map(lambda pair: send(*pair), sends))


def journal(apps: list[AppProcess], game_id: int) -> Counter[str]:
    """How many times the processes together logged each phase change of the game."""
    changes: Counter[str] = Counter()
    for app in apps:
        for line in app.log.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if entry.get("logger") == "slackapp.games" and entry.get("game_id") == game_id:
                changes[str(entry.get("phase"))] += 1
    return changes


def ballot_button(message: Message, target: str) -> str:
    """The action id of the ballot button for the seat ``target`` (a key, or "nobody")."""
    return next(
        button.action_id
        for button in message.buttons()
        if ButtonValue.unpack(button.value).target == target
    )


def signed_click(fake: FakeSlack, user: str, message: Message, action_id: str) -> SignedRequest:
    return signed(fake, lambda: fake.click(user, message, action_id))


def signed_command(fake: FakeSlack, user: str, channel: str, words: str = "") -> SignedRequest:
    return signed(fake, lambda: fake.slash_command(user, text=words, channel_id=channel))


class HeldNth(Held):
    """The ``n``-th call (from 0) of ``methods`` to any of ``channels`` waits at the fake
    Slack, as :class:`Held` does; ``reached`` stays unset if the app never makes that many."""

    def __init__(
        self,
        fake: FakeSlack,
        methods: tuple[str, ...],
        channels: Callable[[], set[str]],
        n: int,
        *,
        applied: bool,
    ) -> None:
        super().__init__(fake, methods[0], applied=applied)
        self.methods = methods
        self.channels = channels
        self.n = n
        self.seen = 0

    def claims(self, request: ApiRequest) -> bool:
        if request.method not in self.methods:
            return False
        if request.method == "response_url" and request.params.get("replace_original") is not True:
            return False  # a private answer, not a message redrawn
        if self.channel_of(request) not in self.channels():
            return False
        self.seen += 1
        return self.seen == self.n + 1


class Clock:
    """A clock that stands still until a test sets ``at``."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


class Nothing:
    """The deliverer and the timers, which a test of steps alone leaves out: it checks the
    database and the outbox instead."""

    def kick(self, game_id: int) -> None:
        pass

    def arm(self, game_id: int, at: datetime) -> None:
        pass

    def disarm(self, game_id: int) -> None:
        pass


class BrokenSteps:
    """The phase machine's step made to raise ``error()`` for chosen games, as a fault in the
    code or a row it cannot read would: for every step of the games in ``always``, and for the
    next step only of those in ``once``. Every other game is stepped as ever."""

    def __init__(
        self,
        monkeypatch: pytest.MonkeyPatch,
        error: Callable[[], Exception] = lambda: RuntimeError("a fault stepping a game"),
    ) -> None:
        self.always: set[int] = set()
        self.once: set[int] = set()
        self.raised: list[int] = []
        """The games whose step raised, in order."""
        real = m.step

        def step(state: m.GameState, event: m.Event, now: datetime) -> m.Step:
            if state.id in self.always or state.id in self.once:
                self.once.discard(state.id)
                self.raised.append(state.id)
                raise error()
            return real(state, event, now)

        monkeypatch.setattr(m, "step", step)


def a_standing_table(
    db: Engine,
    team: str,
    channel: str,
    owner: str,
    *,
    paused: str | None = None,
    weekdays: int = 1,
    zone: str = "UTC",
    enterprise: str | None = None,
) -> None:
    """A standing table as a saved schedule leaves it, opening at 10:00 on ``weekdays`` (a
    bit each, Monday first) from tomorrow; ``paused``: why, if it is. A channel that has one
    keeps it."""
    with db.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO standing_tables (team_id, channel_id, enterprise_id, weekdays,"
                " minute_of_day, zone, lobby_minutes, next_at, owner_user_id, paused)"
                " VALUES (:t, :c, :e, :w, 600, :z, 20, now() + interval '1 day', :u, :p)"
                " ON CONFLICT DO NOTHING"
            ),
            {"t": team, "c": channel, "e": enterprise, "w": weekdays, "z": zone, "u": owner,
             "p": paused},
        )  # fmt: skip
