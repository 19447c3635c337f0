"""One live copy of every message: a post Slack took as the app died is posted again after the
restart, and a click on the copy the app did not record makes that copy the message and
deletes the other, so each person holds exactly one copy with live buttons and the copy they
clicked is the one that changes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType

import pytest
from sqlalchemy import Engine, text

from slackapp.fakeslack import FakeSlack, Message
from slackapp.fakeslack.models import JSON
from slackapp.fakeslack.webapi import ApiAnswer, ApiRequest
from tests.e2e.conftest import NO_LATE_LANDINGS, start_app
from tests.e2e.driver import Table
from tests.reliability.support import LOBBY, NIGHT_DM, boards, new_people, restart
from tests.waiting import PATIENCE

pytestmark = pytest.mark.long(12)


class TakenUnanswered:
    """Every Web API call to ``method`` that ``matches`` is done by Slack, and its answer held
    until the test lets go: the app never learns the ``ts`` of what Slack posted."""

    def __init__(self, fake: FakeSlack, method: str, matches: Callable[[JSON], bool]) -> None:
        self.fake, self.method, self.matches = fake, method, matches
        self.taken: list[ApiRequest] = []
        self.changed = threading.Condition()
        self.released = threading.Event()
        self._original = fake.api.handle

    def __enter__(self) -> TakenUnanswered:
        self.fake.api.handle = self._handle  # type: ignore[method-assign]  # put back on exit
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.released.set()
        self.fake.api.handle = self._original  # type: ignore[method-assign]  # as it was

    def wait_for(self, count: int, timeout: float = PATIENCE) -> None:
        with self.changed:
            if not self.changed.wait_for(lambda: len(self.taken) >= count, timeout):
                raise AssertionError(f"Slack took {len(self.taken)} of {count} {self.method}")

    def _handle(self, request: ApiRequest) -> ApiAnswer:
        if request.method != self.method or not self.matches(request.params):
            return self._original(request)
        answer = self._original(request)
        with self.changed:
            self.taken.append(request)
            self.changed.notify_all()
        self.released.wait(60)
        return answer


def copies(fake: FakeSlack, channel: str, containing: str) -> list[Message]:
    return [m for m in fake.messages(channel) if containing in m.rendered_text + m.text]


def recorded_ts(db: Engine, game_id: int, surface: str) -> str:
    with db.connect() as connection:
        return str(
            connection.execute(
                text("SELECT ts FROM messages WHERE stream = :g AND surface = :s"),
                {"g": game_id, "s": surface},
            ).scalar_one()
        )


def test_a_kill_right_after_start_leaves_two_cards_each_and_a_click_keeps_the_clicked_one(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    people = new_people(fake, 3)
    anna, bo, cia = people
    app = start_app(fake, database_url, late_landing=NO_LATE_LANDINGS)
    table = Table(fake, app, db)
    try:
        table.seat_people(anna, [bo, cia])
        dms = {fake.dm_channel(user): user for user in people}
        since = len(fake.calls)
        with TakenUnanswered(fake, "chat.postMessage", lambda p: p.get("channel") in dms) as held:
            table.click(anna, table.lobby(), "Start")
            held.wait_for(len(people))  # every card is in its DM; no ts reached the app
            app.kill()
        game_id = table.game_id()
        app = restart(table, app, database_url, NO_LATE_LANDINGS)

        def two_cards_each() -> bool:
            return all(len(copies(fake, user, "Your card")) == 2 for user in people)

        table.wait(lambda: two_cards_each() or None, "every card posted again")
        for user in people:
            first, second = copies(fake, user, "Your card")
            assert first.blocks == second.blocks, "the repeat is the very same message"
            assert first.buttons(), "both copies offer the night's choice"
            assert boards(fake, since, fake.dm_channel(user), NIGHT_DM) == 2
        table.wait(lambda: table.undelivered() == 0 or None, "the restart's posts recorded")

        for user in people:
            recorded = recorded_ts(db, game_id, f"dm:{user}")
            unrecorded = next(m for m in copies(fake, user, "Your card") if m.ts != recorded)
            table.click(user, unrecorded, unrecorded.buttons()[0].text)

            def clicked_copy_changed(before: Message = unrecorded) -> Message | None:
                now = fake.get_message(before.channel, before.ts)
                return now if now is not None and now.blocks != before.blocks else None

            table.wait(clicked_copy_changed, f"{user}'s clicked card to change")

            def one_card_left(user: str = user) -> bool:
                return len(copies(fake, user, "Your card")) == 1

            table.wait(lambda: one_card_left() or None, f"{user}'s other card deleted")
            (kept,) = copies(fake, user, "Your card")
            assert kept.ts == unrecorded.ts == recorded_ts(db, game_id, f"dm:{user}")

        deletes = [c for c in fake.calls[since:] if c.method == "chat.delete"]
        assert len(deletes) == len(people) and all(c.ok for c in deletes)
        for user in people:  # the night goes on, on the copies that stayed
            table.finish_night(user, lambda user, card, dm: dm.buttons()[0].text)
        table.wait_for_phase("day")
        for user in people:
            (kept,) = copies(fake, user, "Your card")
            assert not kept.buttons(), "the one copy left shows the night's result"
    finally:
        app.stop()


def test_a_join_on_the_lobby_slack_took_as_the_app_died_keeps_that_lobby(
    fake: FakeSlack, database_url: str, db: Engine
) -> None:
    """The lobby, posted as the app died, is posted again after the restart; *Join* on the
    first one makes it the table's lobby, and the second goes. A second click on the copy
    being deleted (it was still on screen) is counted, and changes no record."""
    anna, bo, cia = new_people(fake, 3)
    app = start_app(fake, database_url, late_landing=NO_LATE_LANDINGS)
    table = Table(fake, app, db)
    try:
        since = len(fake.calls)
        in_channel = lambda p: p.get("channel") == table.channel  # noqa: E731
        with TakenUnanswered(fake, "chat.postMessage", in_channel) as held:
            table.command(anna)
            held.wait_for(1)
            app.kill()
        app = restart(table, app, database_url, NO_LATE_LANDINGS)
        table.wait(
            lambda: len(copies(fake, table.channel, LOBBY)) == 2 or None,
            "the lobby posted again",
        )
        lobbies = copies(fake, table.channel, LOBBY)
        table.wait(lambda: table.undelivered() == 0 or None, "the second lobby recorded")
        first, second = lobbies
        assert recorded_ts(db, table.game_id(), "lobby") == second.ts
        table.click(bo, first, "Join")
        # Still on cia's screen a moment: counted all the same, and it stays the one deleted.
        join = second.button("Join").action_id
        assert fake.click(cia, second, join, stale=True).status_code == 200
        table.wait(lambda: len(table.seats()) == 3 or None, "three seated")
        table.wait(
            lambda: [m.ts for m in copies(fake, table.channel, LOBBY)] == [first.ts] or None,
            "one lobby left",
        )
        table.lobby_shows(first, "Seated (3)")
        assert recorded_ts(db, table.game_id(), "lobby") == first.ts
        assert boards(fake, since, table.channel, LOBBY) == 2
        table.start(anna)
        assert table.game()["phase"] == "night"
    finally:
        app.stop()
