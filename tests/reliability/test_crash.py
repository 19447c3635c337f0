"""``kill -9`` at night, by day and during the vote, and at the worst moments inside a step.

After a restart the game goes on: deadlines are those the database kept, no choice or ballot a
person saw accepted is lost, and nothing is posted twice.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine

from slackapp.fakeslack import FakeSlack, Message
from slackapp.fakeslack.webapi import Answerer, ApiAnswer, ApiRequest
from slackapp.game import Card
from tests.e2e.conftest import NO_LATE_LANDINGS, AppProcess, start_app
from tests.e2e.driver import Table
from tests.reliability.support import (
    DAY,
    LOBBY,
    NIGHT_DM,
    REVEAL,
    VOTE,
    Held,
    assert_nothing_posted_twice,
    boards,
    conversations,
    new_people,
    posted,
    restart,
    seat_rows,
    set_deadline,
)
from tests.waiting import PATIENCE

pytestmark = pytest.mark.long(19)


def now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Crashing:
    """Three people at a table whose app process the test kills and starts again."""

    table: Table
    people: list[str]
    app: AppProcess
    database_url: str
    late_landing: float | None
    """The apps' window for late landings (None: Slack's)."""

    def kill(self) -> None:
        self.app.kill()

    def restart(self) -> None:
        """A fresh app process on the same database, serving the table from now on."""
        self.app = restart(self.table, self.app, self.database_url, self.late_landing)


def crashing_table(
    fake: FakeSlack, database_url: str, db: Engine, late_landing: float | None
) -> Iterator[Crashing]:
    people = new_people(fake, 3)
    app = start_app(fake, database_url, late_landing=late_landing)
    crashing = Crashing(Table(fake, app, db), people, app, database_url, late_landing)
    yield crashing
    crashing.app.stop()  # whichever process serves the table by the end


@pytest.fixture
def crashing(fake: FakeSlack, database_url: str, db: Engine) -> Iterator[Crashing]:
    """Its stand-in lets nothing land after the process that sent it is killed."""
    yield from crashing_table(fake, database_url, db, NO_LATE_LANDINGS)


@pytest.fixture
def crashing_as_slack(fake: FakeSlack, database_url: str, db: Engine) -> Iterator[Crashing]:
    """Its apps wait Slack's own time for a late landing."""
    yield from crashing_table(fake, database_url, db, None)


def assert_dms_agree_with_the_database(table: Table, people: list[str]) -> None:
    """A person who sees buttons has not chosen yet; one who sees a result has, in the database."""
    seats = seat_rows(table.db, table.game_id())
    for user in people:
        offers_a_choice = bool(table.dm(user).buttons())
        assert offers_a_choice != seats[user]["confirmed"], (
            f"{user}'s DM {'offers a choice' if offers_a_choice else 'shows a result'} but the "
            f"database says confirmed={seats[user]['confirmed']}"
        )


def to_the_vote(table: Table, people: list[str]) -> None:
    """The first of ``people`` seats the others and starts; everyone plays the night, two hear
    enough, and the vote opens."""
    anna, bo, cia = people
    table.seat_people(anna, [bo, cia])
    table.start(anna)
    table.play_night(people)
    table.wait_for_phase("day")
    table.heard_enough([anna, bo])
    table.wait_for_phase("vote")


def to_the_robbers_choice(table: Table, people: list[str]) -> Message:
    """The third of ``people`` is dealt the Robber and the others play their night: the
    Robber's DM, whose choice is the night's last and brings the dawn."""
    anna, bo, cia = people
    table.seat_people(anna, [bo, cia])
    table.arrange_deal(lambda dealt, center: dealt[cia] is Card.ROBBER)
    table.start(anna)
    table.play_night([anna, bo])
    return table.dm(cia)


def is_day_board(params: dict[str, object]) -> bool:
    return str(params.get("text")).startswith(DAY)


def play_to_the_end(table: Table, people: list[str]) -> dict[str, Any]:
    table.wait_for_phase("day")
    table.heard_enough(people[:2])
    table.wait_for_phase("vote")
    table.vote({people[0]: "Nobody", people[1]: "Nobody", people[2]: "Nobody"})
    table.wait_for_phase("over")
    table.reveal()
    return table.stored_outcome_matches_referee()


def test_a_crash_at_night_keeps_every_choice_and_the_night_still_ends(
    fake: FakeSlack, db: Engine, crashing: Crashing
) -> None:
    anna, bo, cia = people = crashing.people
    table = crashing.table
    since = len(fake.calls)
    table.seat_people(anna, [bo, cia])
    table.start(anna)
    table.play_night([anna, bo])
    game_id = table.game_id()
    table.wait(
        lambda: sum(s["confirmed"] for s in seat_rows(db, game_id).values()) == 2 or None,
        "two confirmed nights",
    )
    before = seat_rows(db, game_id)

    crashing.kill()
    set_deadline(db, game_id, now() - timedelta(seconds=1))  # dawn was due while it was down
    crashing.restart()

    table.wait_for_phase("day")
    after = seat_rows(db, game_id)
    for user in (anna, bo):
        assert after[user]["confirmed"]
        assert after[user]["night_choice"] == before[user]["night_choice"]
    assert not after[cia]["confirmed"]
    assert "The night ended before you" in table.dm(cia).rendered_text
    assert boards(fake, since, table.channel, DAY) == 1
    play_to_the_end(table, people)  # the referee's outcome is made of the stored choices
    for user in (anna, bo):
        assert seat_rows(db, game_id)[user]["night_choice"] == before[user]["night_choice"]
    assert_nothing_posted_twice(fake, since, conversations(fake, table, people))


def test_a_crash_by_day_keeps_heard_enough(fake: FakeSlack, crashing: Crashing) -> None:
    anna, bo, cia = people = crashing.people
    table = crashing.table
    since = len(fake.calls)
    table.seat_people(anna, [bo, cia])
    table.start(anna)
    table.play_night(people)
    table.wait_for_phase("day")
    table.heard_enough([anna])
    table.ephemeral(anna, "you have heard enough")

    crashing.kill()
    crashing.restart()

    assert table.game()["phase"] == "day"
    table.heard_enough([bo])  # with anna's mark, two of three: the vote opens at once
    table.wait_for_phase("vote")
    assert boards(fake, since, table.channel, DAY) == 1
    assert boards(fake, since, table.channel, VOTE) == 1
    table.vote({anna: "Nobody", bo: "Nobody", cia: "Nobody"})
    table.wait_for_phase("over")
    table.stored_outcome_matches_referee()
    assert_nothing_posted_twice(fake, since, conversations(fake, table, people))


def test_a_crash_during_the_vote_keeps_every_ballot_and_its_deadline(
    fake: FakeSlack, db: Engine, crashing: Crashing
) -> None:
    anna, bo, _ = people = crashing.people
    table = crashing.table
    since = len(fake.calls)
    to_the_vote(table, people)
    table.vote({anna: table.fake.user_name(bo) or bo, bo: "Nobody"})

    crashing.kill()
    deadline = now() + timedelta(seconds=2)
    set_deadline(db, table.game_id(), deadline)
    crashing.restart()

    table.wait_for_phase("over")  # nobody else votes: the deadline closes it
    outcome = table.stored_outcome_matches_referee()
    assert outcome["tally"] == {bo: 1, "nobody": 1}
    reveals = [
        call
        for call in fake.calls[since:]
        if call.method == "chat.postMessage" and str(call.params.get("text")).startswith(REVEAL)
    ]
    assert len(reveals) == 1
    assert reveals[0].at >= deadline.timestamp(), "the vote closed before its deadline"
    assert_nothing_posted_twice(fake, since, conversations(fake, table, people))


def test_a_crash_right_after_a_person_saw_their_night_result_keeps_that_choice(
    fake: FakeSlack, db: Engine, crashing: Crashing
) -> None:
    anna, bo, cia = people = crashing.people
    table = crashing.table
    since = len(fake.calls)
    table.seat_people(anna, [bo, cia])
    table.arrange_deal(lambda dealt, center: dealt[anna] is Card.SEER)
    table.start(anna)
    dm = table.dm(anna)
    # Her DM is redrawn through her click's response URL (her private answer is not).
    redrawn = Held(fake, "response_url", lambda p: p.get("replace_original") is True, applied=True)
    with redrawn as held:
        table.click(anna, dm, dm.buttons()[0].text)  # the Seer looks at a card
        held.wait()
        seen = fake.message(dm.channel, dm.ts)
        assert "card is" in seen.rendered_text and not seen.buttons()
        crashing.kill()
    crashing.restart()

    assert seat_rows(db, table.game_id())[anna]["confirmed"], "the Seer's look was lost"
    assert_dms_agree_with_the_database(table, people)
    table.play_night([bo, cia])
    outcome = play_to_the_end(table, people)
    assert anna in outcome["seen"], "what the Seer saw is part of the outcome"
    assert_nothing_posted_twice(fake, since, conversations(fake, table, people))


def test_a_crash_before_slack_took_the_day_board_posts_it_once(
    fake: FakeSlack, crashing: Crashing
) -> None:
    *_, cia = people = crashing.people
    table = crashing.table
    since = len(fake.calls)
    dm = to_the_robbers_choice(table, people)
    day_board = Held(fake, "chat.postMessage", is_day_board, applied=False)
    with day_board:
        table.click(cia, dm, dm.buttons()[0].text)  # the last choice of the night: dawn
        day_board.wait()
        crashing.kill()
    crashing.restart()

    table.wait_for_phase("day")  # what dawn committed is shown after the restart
    assert_dms_agree_with_the_database(table, people)
    play_to_the_end(table, people)
    assert boards(fake, since, table.channel, DAY) == 1
    assert_nothing_posted_twice(fake, since, conversations(fake, table, people))


def test_a_crash_after_slack_took_a_post_but_before_its_ts_was_kept_repeats_only_that_post(
    fake: FakeSlack, crashing: Crashing
) -> None:
    """The one window no restart can close: Slack posted the day board, and the process died
    before it could record the message's ts. Slack's API has no idempotency key, and reading
    the channel back would need history scopes the app does not ask for, so the restarted
    deliverer posts the board again: the very same message, since the night's end was
    committed before anything showed it. Only that one message repeats, and the game goes on."""
    *_, cia = people = crashing.people
    table = crashing.table
    since = len(fake.calls)
    dm = to_the_robbers_choice(table, people)
    day_board = Held(fake, "chat.postMessage", is_day_board, applied=True)
    with day_board:
        table.click(cia, dm, dm.buttons()[0].text)
        day_board.wait()
        # The dawn's other messages (the night's seal beside the board) are recorded first:
        # the window under test is the held board's alone.
        table.wait(lambda: table.undelivered() == 1 or None, "all but the board recorded")
        crashing.kill()
    assert table.game()["phase"] == "day", "the night's end is committed before it shows"
    crashing.restart()

    table.wait_for_phase("day")
    assert_dms_agree_with_the_database(table, people)
    play_to_the_end(table, people)
    day_posts = [
        (call.params.get("text"), call.params.get("blocks"))
        for call in fake.calls[since:]
        if call.method == "chat.postMessage" and is_day_board(call.params) and call.ok
    ]
    assert len(day_posts) == 2 and day_posts[0] == day_posts[1], "a repeat is identical"
    counts = posted(fake, since, conversations(fake, table, people))
    repeated = [(where, said) for (where, said), n in counts.items() if n > 1]
    assert len(repeated) == 1
    assert repeated[0][0] == table.channel and repeated[0][1].startswith(DAY)
    for message in (LOBBY, VOTE, REVEAL):
        assert boards(fake, since, table.channel, message) == 1
    for user in people:
        assert boards(fake, since, fake.dm_channel(user), NIGHT_DM) == 1


def test_a_crash_before_slack_took_the_lobby_posts_it_after_the_restart(
    fake: FakeSlack, crashing: Crashing
) -> None:
    anna, bo, cia = people = crashing.people
    table = crashing.table
    since = len(fake.calls)
    lobby = Held(
        fake, "chat.postMessage", lambda p: p.get("channel") == table.channel, applied=False
    )
    with lobby:
        table.command(anna)
        lobby.wait()
        crashing.kill()
    assert "lobby" not in table.posted(), "the table was opened, its lobby never posted"
    crashing.restart()

    table.click(bo, table.lobby(), "Join")  # the restarted process posts what was kept
    table.click(cia, table.lobby(), "Join")
    table.wait(lambda: len(table.seats()) == 3 or None, "three seated")
    table.start(anna)
    table.play_night(people)
    play_to_the_end(table, people)
    assert boards(fake, since, table.channel, LOBBY) == 1
    assert_nothing_posted_twice(fake, since, conversations(fake, table, people))


def test_a_crash_while_the_cards_go_out_sends_each_card_once(
    fake: FakeSlack, db: Engine, crashing: Crashing
) -> None:
    """The deal is committed before any card is sent, and each card's message is recorded as
    Slack takes it: after a restart the cards still missing are sent, and every card a person
    sees is of that one deal."""
    anna, bo, cia = people = crashing.people
    table = crashing.table
    since = len(fake.calls)
    table.seat_people(anna, [bo, cia])
    second_card = Held(
        fake,
        "chat.postMessage",
        lambda p: p.get("channel") == fake.dm_channel(bo),
        applied=False,
    )
    with second_card:
        table.click(anna, table.lobby(), "Start")
        second_card.wait()
        crashing.kill()
    dealt = {user: seat["dealt"] for user, seat in seat_rows(db, table.game_id()).items()}
    crashing.restart()

    table.wait(
        lambda: all(f"dm:{user}" in table.posted() for user in people) or None,
        "the cards still missing",
    )
    assert {u: s["dealt"] for u, s in seat_rows(db, table.game_id()).items()} == dealt
    assert boards(fake, since, fake.dm_channel(bo), NIGHT_DM) == 1, "the card held is sent"
    for user in people:
        # The cards go out side by side: one Slack took just as the app died may repeat,
        # the very same message.
        cards = [
            (call.params.get("text"), call.params.get("blocks"))
            for call in fake.calls[since:]
            if call.method == "chat.postMessage"
            and call.ok
            and call.params.get("channel") == fake.dm_channel(user)
        ]
        assert len(cards) in (1, 2) and all(card == cards[0] for card in cards), user
    table.play_night(people)
    play_to_the_end(table, people)


@pytest.mark.parametrize("slack_took_it", [False, True], ids=["never-posted", "posted"])
def test_a_crash_while_the_reveal_is_posted_shows_one_reveal_counting_the_last_ballot(
    fake: FakeSlack, crashing: Crashing, slack_took_it: bool
) -> None:
    """The last ballot closes the vote; the app dies while the reveal is on its way to Slack.
    The ballot and the close were committed before anything showed them, so the reveal shown
    after the restart counts that ballot; when Slack had taken the first post, the repeat is
    the very same message."""
    anna, bo, cia = people = crashing.people
    table = crashing.table
    since = len(fake.calls)
    to_the_vote(table, people)
    table.vote({anna: "Nobody", bo: "Nobody"})
    ballot = table.ballot(cia)
    reveal = Held(
        fake,
        "chat.postMessage",
        lambda p: str(p.get("text")).startswith(REVEAL),
        applied=slack_took_it,
    )
    with reveal:
        table.click(cia, ballot, fake.user_name(anna) or anna)
        reveal.wait()
        crashing.kill()
    assert table.game()["phase"] == "over", "the vote's close is committed before it shows"
    crashing.restart()

    table.wait_for_phase("over")
    outcome = table.stored_outcome_matches_referee()
    assert outcome["tally"] == {anna: 1, "nobody": 2}, "the last ballot counts"
    shown = [m for m in fake.messages(table.channel) if m.text.startswith(REVEAL)]
    assert len(shown) == (2 if slack_took_it else 1)
    assert all((m.text, m.blocks) == (shown[0].text, shown[0].blocks) for m in shown)
    assert f"<@{cia}> → <@{anna}>" in shown[0].rendered_text
    assert "did not vote" not in shown[0].rendered_text
    assert boards(fake, since, table.channel, VOTE) == 1


def test_a_crash_while_the_day_board_is_posted_never_shows_the_insomniac_a_false_card(
    fake: FakeSlack, db: Engine, crashing: Crashing
) -> None:
    """The Troublemaker's swap of the Insomniac is the night's last choice; the app dies while
    the day board is on its way. Dawn was committed before any message showed it, so whatever
    the Insomniac was ever shown is the card the outcome gives them."""
    anna, bo, cia = people = crashing.people
    table = crashing.table
    table.seat_people(anna, [bo, cia], bots=True)
    table.arrange_deal(
        lambda dealt, center: dealt[anna] is Card.TROUBLEMAKER and dealt[bo] is Card.INSOMNIAC
    )
    table.start(anna)
    table.play_night([bo, cia])
    dm = table.dm(anna)
    table.click(anna, dm, fake.user_name(bo) or bo)
    dm = table.dm_saying(anna, "Swap ")
    day_board = Held(fake, "chat.postMessage", is_day_board, applied=False)
    with day_board:
        table.click(anna, dm, fake.user_name(cia) or cia)  # bo and cia swap: dawn
        day_board.wait()
        crashing.kill()
    assert table.game()["phase"] == "day"
    crashing.restart()

    table.wait_for_phase("day")
    play_to_the_end(table, people)
    dawn = table.stored_outcome_matches_referee()["dawn"][bo]
    swapped = seat_rows(db, table.game_id())[anna]["night_choice"]["swap"]
    assert sorted(swapped) == sorted([bo, cia]), "the swap was kept"
    insomniac_dm = fake.dm_channel(bo)
    said = [  # posted, redrawn, or redrawn through a click's response_url
        str(call.params.get("blocks"))
        for call in fake.calls
        if insomniac_dm in (call.params.get("channel"), call.response.get("channel"))
        and call.method in ("chat.postMessage", "chat.update", "response_url")
        and "At the end of the night your card is" in str(call.params.get("blocks"))
    ]
    assert said, "the Insomniac was shown their card at dawn"
    for blocks in said:
        assert f"At the end of the night your card is *{dawn}*" in blocks


class LandsLate:
    """The first redraw of ``channel``'s message ``ts`` (``chat.update``, or a post to a click's
    ``response_url`` that replaces it) reaches Slack and waits there: Slack applies it only
    once :meth:`land` is called, whoever sent it, and even if its sender has died meanwhile."""

    def __init__(self, fake: FakeSlack, channel: str, ts: str) -> None:
        self.fake = fake
        self.channel = channel
        self.ts = ts
        self.reached = threading.Event()
        self.landed = threading.Event()
        self._lock = threading.Lock()
        self._taken = False

    def __enter__(self) -> LandsLate:
        self.fake.api.hooks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.landed.set()
        self.fake.api.hooks.remove(self)

    def __call__(self, request: ApiRequest, answer: Answerer) -> ApiAnswer:
        with self._lock:
            mine = not self._taken and self._redraws(request)
            self._taken = self._taken or mine
        if not mine:
            return answer(request)
        self.reached.set()
        self.landed.wait(PATIENCE)
        return answer(request)

    def _redraws(self, request: ApiRequest) -> bool:
        if request.method == "chat.update":
            params = request.params
            return params.get("channel") == self.channel and params.get("ts") == self.ts
        if request.method != "response_url" or request.params.get("replace_original") is not True:
            return False
        hook = self.fake.grants.hook(request.token or "")
        return hook.channel == self.channel and hook.message_ts == self.ts

    def land(self) -> None:
        self.landed.set()


def test_a_redraw_still_on_its_way_to_slack_when_its_process_died_is_followed_by_the_newest(
    fake: FakeSlack, crashing_as_slack: Crashing
) -> None:
    """The app dies while its redraw of the lobby is with Slack, which applies it only after
    the restarted process has shown newer versions: the lobby is drawn once more with the
    newest, as after a call whose outcome the app saw was unknown."""
    crashing = crashing_as_slack
    anna, bo, cia = crashing.people
    table = crashing.table
    table.command(anna)
    lobby = table.lobby()
    with LandsLate(fake, table.channel, lobby.ts) as late:
        table.click(bo, lobby, "Join")
        assert late.reached.wait(PATIENCE), "the lobby was never redrawn"
        crashing.kill()
        crashing.restart()
        table.click(cia, lobby, "Join")
        table.lobby_shows(lobby, "Seated (3)")
        late.land()  # the dead process's redraw, with bo alone seated, lands only now
        table.wait(
            lambda: "Seated (2)" in fake.message(lobby.channel, lobby.ts).rendered_text or None,
            "the late redraw to land",
        )
    table.lobby_shows(lobby, "Seated (3)")
    table.wait(lambda: table.undelivered() == 0 or None, "the lobby's versions all sent")
    assert "Seated (3)" in fake.message(lobby.channel, lobby.ts).rendered_text
