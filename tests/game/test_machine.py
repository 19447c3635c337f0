"""The phase machine in process: every rule and refusal, and random event sequences that keep
its invariants (phase order, no secret on a public surface before the reveal, ballots only in
the vote, scores once, refusals change nothing)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, get_args

import pytest
from hypothesis import event as hypothesis_event
from hypothesis import given, settings
from hypothesis import strategies as st

from slackapp.blocks import said as words
from slackapp.game import machine as m
from slackapp.game.cards import Card, deal
from slackapp.game.effects import (
    DAY_BOARD,
    LOBBY_BOARD,
    REVEAL,
    VOTE_BOARD,
    Answer,
    Award,
    ClosedView,
    DayBoardView,
    DayOverView,
    Effect,
    GameOverDmView,
    LobbyView,
    NightDmView,
    NightOverView,
    RevealView,
    Say,
    Scored,
    Show,
    Tell,
    dm_key,
    over_surface,
    settles,
)
from slackapp.game.lines import Language, Line, Message
from slackapp.game.night import Knowledge, NightChoice, Peek, Swap
from slackapp.game.outcome import Outcome, play
from slackapp.game.settings import Kept

pytestmark = pytest.mark.long(8)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LENGTHS = m.Lengths(night_seconds=120, day_seconds=300, vote_seconds=120)
PEOPLE = ["UANNA", "UBO", "UCIA", "UDAN", "UEVA", "UFIA", "UGUS", "UHED", "UIVO", "UJON", "UKIM"]


def new_table(host: str = "UANNA", seed: int = 1, bots_allowed: bool = True) -> m.GameState:
    kept = Kept(bots_allowed=bots_allowed)
    return m.open_table(7, "CFIKA", host, host.lower(), seed, LENGTHS, kept).state


def run(state: m.GameState, *events: m.Event, now: datetime = T0) -> m.Step:
    """Apply events in turn; the last step, with every effect of the whole run."""
    effects: list[Effect] = []
    for event in events:
        done = m.step(state, event, now)
        state = done.state
        effects += done.effects
    return m.Step(state, tuple(effects))


def seated(people: list[str], seed: int = 1, bots: bool = False) -> m.GameState:
    state = new_table(people[0], seed)
    state = run(state, *(m.Join(user, user.lower()) for user in people[1:])).state
    if bots:
        state = run(state, m.FillWithBots(people[0])).state
    return state


def seed_where(
    keys: list[str], wanted: Callable[[dict[str, Card], tuple[Card, Card]], bool]
) -> int:
    for seed in range(100_000):
        dealt = deal(keys, seed)
        if wanted(dealt.dealt, dealt.center):
            return seed
    raise AssertionError("no seed gives the wanted deal")


def started(people: list[str], wanted: Callable[..., bool] = lambda d, c: True) -> m.GameState:
    seed = seed_where(people, wanted)
    state = run(seated(people, seed), m.Start(people[0])).state
    assert state.phase == m.Phase.NIGHT
    return state


def answers(step: m.Step) -> list[str]:
    """The step's answers, in English."""
    return [words.said(effect.line) for effect in step.effects if isinstance(effect, Answer)]


def english(line: Line | str | None) -> str:
    return "" if line is None else words.said_or_text(line)


def shows(step: m.Step, surface: str | None = None) -> list[Show]:
    return [
        effect
        for effect in step.effects
        if isinstance(effect, Show) and (surface is None or effect.surface == surface)
    ]


def seat_of(state: m.GameState, key: str) -> m.SeatState:
    """The seat of ``key``, which the test has seated."""
    found = state.seat(key)
    assert found is not None, key
    return found


def confirm_all(state: m.GameState, now: datetime = T0) -> m.GameState:
    """Everyone who has not confirmed skips or confirms, whatever their card."""
    for key in state.awaiting():
        move: m.Event = m.NightConfirm(key) if state.choice_kind(key) is None else m.NightSkip(key)
        state = m.step(state, move, now).state
    return state


# -- the lobby ------------------------------------------------------------------------------


def test_a_table_opens_with_its_host_seated_and_its_lobby_shown() -> None:
    opened = m.open_table(7, "CFIKA", "UANNA", "anna", 1, LENGTHS)
    assert [seat.key for seat in opened.state.seats] == ["UANNA"]
    assert opened.state.phase == m.Phase.LOBBY
    (show,) = opened.effects
    assert isinstance(show, Show) and show.surface == LOBBY_BOARD
    assert isinstance(show.view, LobbyView)


def test_lobby_refusals_change_nothing() -> None:
    state = new_table()
    refusals: list[tuple[m.Event, str]] = [
        (m.Join("UANNA", "anna"), "already seated"),
        (m.Leave("UBO"), "not seated"),
        (m.FillWithBots("UBO"), "not seated"),
        (m.Start("UBO"), "not seated"),
        (m.Cancel("UBO"), "not seated"),
        (m.Start("UANNA"), "at least 2 people"),
    ]
    for event, said in refusals:
        done = m.step(state, event, T0)
        assert done.state == state
        assert any(said in text for text in answers(done)), (event, answers(done))


def test_two_people_need_a_third_seat_and_bots_fill_to_five() -> None:
    state = seated(["UANNA", "UBO"])
    refused = m.step(state, m.Start("UANNA"), T0)
    assert "3 to 10 seats" in answers(refused)[0] and "Fill with bots" in answers(refused)[0]
    filled = m.step(state, m.FillWithBots("UBO"), T0).state
    assert [seat.key for seat in filled.seats] == ["UANNA", "UBO", "bot1", "bot2", "bot3"]
    assert "up to 5 seats" in answers(m.step(filled, m.FillWithBots("UANNA"), T0))[0]


def test_bots_switched_off_are_refused() -> None:
    state = new_table(bots_allowed=False)
    state = run(state, m.Join("UBO", "bo")).state
    assert "switched off" in answers(m.step(state, m.FillWithBots("UANNA"), T0))[0]
    assert "Fill with bots" not in answers(m.step(state, m.Start("UANNA"), T0))[0]


def test_bots_fill_only_up_to_five_and_each_person_joining_after_takes_a_bots_seat() -> None:
    state = seated(PEOPLE[:2], bots=True)
    assert len(state.seats) == 5 and sum(seat.is_bot for seat in state.seats) == 3
    for joined, user in enumerate(PEOPLE[2:5], start=3):
        state = m.step(state, m.Join(user, user.lower()), T0).state
        assert len(state.seats) == 5, "a bot gave up its seat"
        assert len(state.people) == joined
    assert not any(seat.is_bot for seat in state.seats)
    state = run(state, *(m.Join(user, user.lower()) for user in PEOPLE[5:10])).state
    assert len(state.seats) == 10 and not any(seat.is_bot for seat in state.seats)
    full = m.step(state, m.Join(PEOPLE[10], "kim"), T0)
    assert full.state == state and "full (10 seats)" in answers(full)[0]


def bot_names(state: m.GameState) -> list[str]:
    return [seat.name for seat in state.seats if seat.is_bot]


def test_a_bot_never_has_a_seated_persons_name_in_any_case() -> None:
    state = m.open_table(7, "CFIKA", "UANNA", "astrid", 1, LENGTHS).state
    state = run(state, m.Join("UBO", "Bosse Lind"), m.FillWithBots("UANNA")).state
    assert bot_names(state) == ["Cissi", "Dagge", "Ebba"]
    # a colleague called Cissi joins: that bot gives up its seat, the others keep theirs
    state = m.step(state, m.Join("UCIA", "CISSI"), T0).state
    assert bot_names(state) == ["Dagge", "Ebba"]
    state = seated(["UANNA", "UBO"], bots=True)
    assert bot_names(state) == ["Astrid", "Bosse", "Cissi"]
    # a seat free, so no bot leaves: the namesake bot takes the next free name
    state = run(state, m.Leave("UBO"), m.Join("UDAN", "bosse")).state
    assert bot_names(state) == ["Astrid", "Dagge", "Cissi"]
    # a name shared as a word of a longer name counts, and bot names stay unique
    state = run(state, m.Leave("UDAN"), m.Join("UEVA", "dagge.astrid_lind")).state
    names = bot_names(state)
    assert len(names) == len(set(names)) == 3
    assert not {"astrid", "dagge"} & {name.casefold() for name in names}, names


def test_start_deals_under_the_names_learned_for_it_and_a_namesake_bot_takes_another() -> None:
    state = seated(["UANNA", "UBO"], bots=True)
    assert bot_names(state) == ["Astrid", "Bosse", "Cissi"]
    learned = (("UBO", "Bo Lind"), ("UANNA", "Cissi Berg"), ("Astrid", "Y"), ("UNOT", "X"))
    refused = m.step(state, m.Start("UNOT", names=learned), T0)
    assert refused.state == state, "a refused start names no one"
    dealt = m.step(state, m.Start("UANNA", names=learned), T0)
    assert dealt.state.phase is m.Phase.NIGHT
    assert [(seat.key, seat.name) for seat in dealt.state.people] == [
        ("UANNA", "Cissi Berg"),
        ("UBO", "Bo Lind"),
    ]
    assert bot_names(dealt.state) == ["Astrid", "Bosse", "Dagge"], "no bot shares a name"
    unnamed = m.step(state, m.Start("UANNA"), T0).state
    assert [seat.name for seat in unnamed.seats] == [seat.name for seat in state.seats]
    assert [seat.dealt for seat in unnamed.seats] == [seat.dealt for seat in dealt.state.seats]


def test_leaving_frees_a_seat_and_the_last_person_leaving_closes_the_table() -> None:
    state = seated(["UANNA", "UBO", "UCIA"])
    state = m.step(state, m.Leave("UBO"), T0).state
    state = m.step(state, m.Join("UDAN", "dan"), T0).state
    assert [(seat.key, seat.position) for seat in state.seats] == [
        ("UANNA", 0),
        ("UCIA", 2),
        ("UDAN", 3),
    ], "Dan sat down after Cia"
    state = run(state, m.Leave("UANNA"), m.Leave("UDAN")).state
    done = m.step(state, m.Leave("UCIA"), T0)
    assert done.state.phase == m.Phase.CANCELLED and done.state.ended_by == "UCIA"
    assert isinstance(shows(done, LOBBY_BOARD)[0].view, ClosedView)


def test_a_lobby_with_only_bots_left_is_closed() -> None:
    state = seated(["UANNA", "UBO"], bots=True)
    state = run(state, m.Leave("UBO"), m.Leave("UANNA")).state
    assert state.phase == m.Phase.CANCELLED


def test_cancel_closes_the_lobby_and_later_clicks_are_told() -> None:
    state = m.step(seated(["UANNA", "UBO"]), m.Cancel("UBO"), T0).state
    assert state.phase == m.Phase.CANCELLED
    assert "is over" in answers(m.step(state, m.Join("UCIA", "cia"), T0))[0]


def test_an_unreachable_person_blocks_the_start_and_is_named_in_the_channel() -> None:
    state = seated(["UANNA", "UBO", "UCIA"])
    done = m.step(state, m.Start("UANNA", unreachable=("UCIA",)), T0)
    assert done.state == state
    (said,) = [effect for effect in done.effects if isinstance(effect, Say)]
    assert "<@UCIA>" in english(said.text) and "can't start" in english(said.text)


def test_start_deals_by_the_seed_bots_choose_and_each_person_gets_a_card() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    state = seated(people, seed=5, bots=True)
    done = m.step(state, m.Start("UBO"), T0)
    night = done.state
    expected = deal([seat.key for seat in state.seats], 5)
    assert {seat.key: seat.dealt for seat in night.seats} == expected.dealt
    assert night.center == expected.center
    assert night.deadline == T0 + timedelta(seconds=LENGTHS.night_seconds)
    assert night.awaiting() == tuple(people), "bots confirm at once"
    assert {show.surface for show in shows(done)} == {"lobby", *(f"dm:{p}" for p in people)}
    assert "already started" in answers(m.step(night, m.Start("UANNA"), T0))[0]


def test_bots_decide_from_a_seed_that_cannot_deal_the_cards_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    given: list[object] = []

    def recording(view: object, seed: object) -> None:
        given.append(seed)

    monkeypatch.setattr(m, "bot_night_choice", recording)
    state = seated(["UANNA", "UBO", "UCIA"], seed=5, bots=True)
    m.step(state, m.Start("UBO"), T0)
    assert given, "the bots were asked for their night"
    assert set(given) == {m.bots_seed(5)}
    assert m.bots_seed(5) != str(5) and m.bots_seed(5) == m.bots_seed(5)


# -- the night ------------------------------------------------------------------------------


def test_night_moves_only_the_dealt_card_allows() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    state = started(people, lambda d, c: d["UANNA"] is Card.SEER)
    refusals: list[tuple[m.Event, str]] = [
        (m.NightRob("UANNA", "UBO"), "not a move your card can make"),
        (m.NightLook("UANNA", "UANNA"), "someone other than yourself"),
        (m.NightLook("UANNA", "UNOBODY"), "Nobody sits in that seat"),
        (m.NightPeek("UANNA", 0), "not a move your card can make"),
        (m.NightConfirm("UANNA"), "choice to make"),
        (m.NightPick("UANNA", "UBO"), "Only a Troublemaker"),
        (m.NightResetPick("UANNA"), "no pick to take back"),
        (m.NightConfirm("USTRANGER"), "not seated"),
    ]
    for event, said in refusals:
        done = m.step(state, event, T0)
        assert done.state == state, event
        assert any(said in text for text in answers(done)), (event, answers(done))


def test_a_card_that_does_not_wake_only_confirms() -> None:
    people = ["UANNA", "UBO", "UCIA", "UDAN"]
    state = started(people, lambda d, c: d["UDAN"] is Card.VILLAGER)
    assert state.choice_kind("UDAN") is None
    assert "nothing to skip" in answers(m.step(state, m.NightSkip("UDAN"), T0))[0]
    done = m.step(state, m.NightConfirm("UDAN"), T0)
    assert seat_of(done.state, "UDAN").confirmed
    assert "already confirmed" in answers(m.step(done.state, m.NightConfirm("UDAN"), T0))[0]


def test_the_lone_wolf_may_peek_at_a_centre_card_and_a_pack_may_not() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    lone = started(people, lambda d, c: d["UANNA"] is Card.WEREWOLF and c.count(Card.WEREWOLF) == 1)
    assert lone.choice_kind("UANNA") == "peek"
    assert "left or the right" in answers(m.step(lone, m.NightPeek("UANNA", 2), T0))[0]
    peeked = m.step(lone, m.NightPeek("UANNA", 1), T0)
    assert seat_of(peeked.state, "UANNA").choice == Peek(1)
    pack = started(people, lambda d, c: d["UANNA"] is Card.WEREWOLF and d["UBO"] is Card.WEREWOLF)
    assert pack.choice_kind("UANNA") is None
    assert "not a move your card can make" in answers(m.step(pack, m.NightPeek("UANNA", 0), T0))[0]


def test_the_troublemaker_picks_twice_can_start_over_and_the_first_pick_is_not_public() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    state = started(people, lambda d, c: d["UANNA"] is Card.TROUBLEMAKER)
    assert "Swap two other players" in answers(m.step(state, m.NightPick("UANNA", "UANNA"), T0))[0]
    first = m.step(state, m.NightPick("UANNA", "UBO"), T0)
    assert seat_of(first.state, "UANNA").pending == "UBO"
    assert [show.surface for show in shows(first)] == ["dm:UANNA"], "the board is not redrawn"
    reset = m.step(first.state, m.NightResetPick("UANNA"), T0).state
    assert seat_of(reset, "UANNA").pending is None
    again = run(first.state, m.NightPick("UANNA", "UBO")).state
    assert "two different players" in answers(m.step(again, m.NightPick("UANNA", "UBO"), T0))[0]
    swapped = m.step(again, m.NightPick("UANNA", "UCIA"), T0).state
    assert seat_of(swapped, "UANNA").choice == Swap("UBO", "UCIA")


def test_the_night_ends_when_every_seat_has_confirmed() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    state = started(people)
    for key in people[:-1]:
        state = confirm_all_one(state, key)
        assert state.phase == m.Phase.NIGHT
    last = people[-1]
    done = m.step(state, skip_or_confirm(state, last), T0 + timedelta(seconds=3))
    assert done.state.phase == m.Phase.DAY
    assert done.state.deadline == T0 + timedelta(seconds=3 + LENGTHS.day_seconds)
    assert isinstance(shows(done, LOBBY_BOARD)[-1].view, NightOverView)
    day = shows(done, DAY_BOARD)[0].view
    assert isinstance(day, DayBoardView)
    assert day.seat_count == 3, "the day board shows the table's deck"


def skip_or_confirm(state: m.GameState, key: str) -> m.Event:
    return m.NightConfirm(key) if state.choice_kind(key) is None else m.NightSkip(key)


def confirm_all_one(state: m.GameState, key: str) -> m.GameState:
    return m.step(state, skip_or_confirm(state, key), T0).state


def test_a_late_night_move_finds_dawn_already_come() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    state = started(people, lambda d, c: d["UANNA"] is Card.SEER)
    late = T0 + timedelta(seconds=LENGTHS.night_seconds)
    done = m.step(state, m.NightLook("UANNA", "UBO"), late)
    assert done.state.phase == m.Phase.DAY
    assert seat_of(done.state, "UANNA").choice is None
    assert english(m.NIGHT_IS_OVER) in answers(done)
    told = {show.surface: show.view for show in shows(done) if show.surface.startswith("dm:")}
    assert set(told) == {f"dm:{p}" for p in people}, "each who never confirmed is told"
    assert all(isinstance(view, NightDmView) and view.late for view in told.values())


def test_the_insomniac_sees_its_dawn_card_only_when_the_night_is_over() -> None:
    people = ["UANNA", "UBO", "UCIA", "UDAN", "UEVA"]
    state = started(
        people, lambda d, c: d["UANNA"] is Card.TROUBLEMAKER and d["UBO"] is Card.INSOMNIAC
    )
    state = run(state, m.NightConfirm("UBO")).state
    insomniac_dm = [s for s in shows(m.step(state, m.Deadline(), T0)) if s.surface == "dm:UBO"]
    assert not insomniac_dm
    for key in ("UCIA", "UDAN", "UEVA"):
        state = confirm_all_one(state, key)
    state = m.step(state, m.NightPick("UANNA", "UBO"), T0).state
    done = m.step(state, m.NightPick("UANNA", "UCIA"), T0)
    (dawn,) = [show.view for show in shows(done, "dm:UBO")]
    assert isinstance(dawn, NightDmView)
    assert dawn.dawn_card == done.state.night().dawn["UBO"] == seat_of(state, "UCIA").dealt


# -- the day --------------------------------------------------------------------------------


def day_of(people: list[str]) -> m.GameState:
    state = confirm_all(started(people))
    assert state.phase == m.Phase.DAY
    return state


def test_heard_enough_toggles_and_more_than_half_of_the_people_open_the_vote() -> None:
    people = ["UANNA", "UBO", "UCIA", "UDAN"]
    state = day_of(people)
    marked = m.step(state, m.HeardEnough("UANNA"), T0)
    assert "Noted" in answers(marked)[0]
    back = m.step(marked.state, m.HeardEnough("UANNA"), T0)
    assert "Taken back" in answers(back)[0]
    state = run(marked.state, m.HeardEnough("UBO")).state
    assert state.phase == m.Phase.DAY, "two of four is not more than half"
    done = m.step(state, m.HeardEnough("UCIA"), T0)
    assert done.state.phase == m.Phase.VOTE
    (over,) = [show.view for show in shows(done, DAY_BOARD)]
    assert over == DayOverView(m.most_heard_enough(3, 4), 4)
    assert english(over.reason) == "3 of the 4 people have heard enough."
    assert answers(done) == [
        "3 of the 4 people have heard enough. Yours made it: the vote is open."
    ]
    assert "not seated" in answers(m.step(day_of(people), m.HeardEnough("USTRANGER"), T0))[0]


def test_a_heard_enough_click_delivered_again_or_older_toggles_nothing() -> None:
    people = ["UANNA", "UBO", "UCIA", "UDAN"]
    first, second = Decimal("1764590000.100000"), Decimal("1764590003.250000")
    marked = m.step(day_of(people), m.HeardEnough("UANNA", first), T0).state
    assert seat_of(marked, "UANNA").heard_enough
    again = m.step(marked, m.HeardEnough("UANNA", first), T0)
    assert again.state == marked, "the same click, redelivered, changes nothing"
    assert answers(again) == ["Noted: you have heard enough. Press again to take it back."]
    assert not shows(again, DAY_BOARD)
    older = m.step(marked, m.HeardEnough("UANNA", first - 1), T0)
    assert older.state == marked
    back = m.step(marked, m.HeardEnough("UANNA", second), T0).state
    assert not seat_of(back, "UANNA").heard_enough, "a later click takes it back"
    assert seat_of(back, "UANNA").heard_enough_at == second
    unknown = m.step(back, m.HeardEnough("UANNA"), T0).state
    assert seat_of(unknown, "UANNA").heard_enough, "a click with no time still toggles"
    assert seat_of(unknown, "UANNA").heard_enough_at == second


def test_people_keep_the_order_they_sat_down_in_when_bots_give_up_their_seats() -> None:
    state = seated(["UANNA"], bots=True)
    order = ["UANNA"]
    for user, name in [("UMANS", "måns"), ("UTOVE", "tove"), ("UCISSI", "cissi"), ("UO", "o")]:
        state = run(state, m.Join(user, name)).state  # Cissi's namesake bot gives up its seat
        order.append(user)
        assert len(state.seats) == 5
        assert [seat.key for seat in state.seats if not seat.is_bot] == order
    state = run(state, m.Join("UPER", "per")).state
    assert [seat.key for seat in state.seats][-1] == "UPER"


def test_bots_count_on_neither_side_of_heard_enough() -> None:
    state = seated(["UANNA", "UBO"], bots=True)
    state = confirm_all(m.step(state, m.Start("UANNA"), T0).state)
    bot = next(seat for seat in state.seats if seat.is_bot)
    refused = m.step(state, m.HeardEnough(bot.key), T0)
    assert refused.state == state and answers(refused) == [english(m.NOT_YOUR_DAY)], "a bot's key"
    state = m.step(state, m.HeardEnough("UANNA"), T0).state
    assert state.phase == m.Phase.DAY, "one of two people"
    state = m.step(state, m.HeardEnough("UBO"), T0).state
    assert state.phase == m.Phase.VOTE
    assert all(seat.ballot is not None for seat in state.seats if seat.is_bot)


def test_the_day_ends_at_its_deadline_whatever_comes_first() -> None:
    state = day_of(["UANNA", "UBO", "UCIA"])
    late = T0 + timedelta(seconds=LENGTHS.day_seconds)
    done = m.step(state, m.HeardEnough("UANNA"), late)
    assert done.state.phase == m.Phase.VOTE
    assert answers(done) == [english(m.DAY_OVER_VOTE_OPEN)], "not Noted: the click came too late"
    assert shows(done, DAY_BOARD)[0].view == DayOverView(m.TIME_IS_UP, 3)
    assert "day is over" not in english(m.TIME_IS_UP), "the day-over board says that already"


def test_the_day_board_names_one_person_to_speak_first_from_the_seed() -> None:
    chosen = set()
    for seed in range(40):
        state = run(seated(["UANNA", "UBO"], seed=seed, bots=True), m.Start("UANNA")).state
        day = confirm_all(state)
        assert state.deadline is not None
        (board,) = [
            show.view
            for show in shows(m.step(state, m.Deadline(), state.deadline))
            if isinstance(show.view, DayBoardView)
        ]
        assert board.first_speaker == m.first_speaker(day)
        assert board.first_speaker is not None and not board.first_speaker.is_bot
        assert board.first_speaker.key in ("UANNA", "UBO")
        chosen.add(board.first_speaker.key)
    assert chosen == {"UANNA", "UBO"}, "every person may be named"


def test_a_second_slash_varulv_is_told_what_fits_the_person_and_the_phase() -> None:
    lobby = seated(["UANNA", "UBO", "UCIA"])
    assert "press *Start*" in english(m.already_running(lobby, "UANNA"))
    assert "press *Join*" not in english(m.already_running(lobby, "UANNA"))
    assert "press *Join*" in english(m.already_running(lobby, "USTRANGER"))
    assert "running" not in english(m.already_running(lobby, "USTRANGER")) + english(
        m.already_running(lobby)
    )
    night = started(["UANNA", "UBO", "UCIA"])
    assert "check your DM" in english(m.already_running(night, "UBO"))
    stranger = english(m.already_running(night, "USTRANGER"))
    assert "DM" not in stranger and "not seated" in stranger and "next one" in stranger


# -- the vote -------------------------------------------------------------------------------


def vote_of(people: list[str]) -> m.GameState:
    state = day_of(people)
    state = run(state, *(m.HeardEnough(user) for user in people[: len(people) // 2 + 1])).state
    assert state.phase == m.Phase.VOTE
    return state


def test_ballots_refused_and_changed() -> None:
    state = vote_of(["UANNA", "UBO", "UCIA"])
    for event, said in [
        (m.CastBallot("UANNA", "UANNA"), "cannot vote for yourself"),
        (m.CastBallot("UANNA", "UNOBODY"), "names nobody seated at this table"),
        (m.CastBallot("USTRANGER", "UBO"), "no ballot"),
    ]:
        done = m.step(state, event, T0)
        assert done.state == state and said in answers(done)[0]
    state = m.step(state, m.CastBallot("UANNA", "UBO", Decimal("10.5")), T0).state
    kept = m.step(state, m.CastBallot("UANNA", None, Decimal("10.4")), T0)
    assert kept.state == state and "stays <@UBO>" in answers(kept)[0]
    changed = m.step(state, m.CastBallot("UANNA", None, Decimal("10.6")), T0)
    assert seat_of(changed.state, "UANNA").ballot == m.Ballot(None, Decimal("10.6"))
    # Named as the ballot's own button and line name it ("You voted for Nobody.").
    assert "Your ballot: Nobody." in answers(changed)[0]


def test_the_last_ballot_closes_the_vote_scores_once_and_reveals() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    state = vote_of(people)
    state = run(state, m.CastBallot("UANNA", "UBO"), m.CastBallot("UBO", None)).state
    done = m.step(state, m.CastBallot("UCIA", "UBO"), T0)
    assert done.state.phase == m.Phase.OVER and done.state.deadline is None
    assert "reveal is up" in answers(done)[0]
    (scored,) = [effect for effect in done.effects if isinstance(effect, Scored)]
    outcome = play(state.deal(), state.choices(), {"UANNA": "UBO", "UBO": None, "UCIA": "UBO"})
    assert scored.outcome == outcome == done.state.outcome()
    (reveal,) = [show.view for show in shows(done, REVEAL)]
    assert isinstance(reveal, RevealView) and reveal.outcome == outcome
    for award in scored.awards:
        assert award.points == outcome.result.points[award.key]
        assert award.named_werewolf == (award.key in outcome.result.named_werewolf)
    assert english(m.VOTE_IS_CLOSED) in answers(m.step(done.state, m.CastBallot("UANNA", None), T0))


def test_each_persons_word_at_the_end_is_a_new_message_and_their_night_message_stays() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    state = run(vote_of(people), m.CastBallot("UANNA", "UBO"), m.CastBallot("UBO", None)).state
    done = m.step(state, m.CastBallot("UCIA", "UBO"), T0)
    private = [show for show in shows(done) if dm_key(show.surface) is not None]
    assert [show.surface for show in private] == [over_surface(key) for key in people]
    outcome = done.state.outcome()
    assert outcome is not None
    for show in private:
        key = dm_key(show.surface)
        assert isinstance(show.view, GameOverDmView) and key is not None
        assert show.view.points == outcome.result.points[key]
        assert show.view.dawn is outcome.night.dawn[key]
        assert show.view.moved == outcome.night.changed_hands(key)


def test_the_vote_deadline_counts_what_was_cast_and_a_late_ballot_does_not() -> None:
    state = vote_of(["UANNA", "UBO", "UCIA"])
    state = m.step(state, m.CastBallot("UANNA", "UBO"), T0).state
    late = T0 + timedelta(seconds=LENGTHS.vote_seconds)
    done = m.step(state, m.CastBallot("UBO", "UANNA"), late)
    assert english(m.VOTE_IS_CLOSED) in answers(done)
    outcome = done.state.outcome()
    assert outcome is not None and outcome.ballots == {"UANNA": "UBO"}


def test_a_ballot_clicked_before_the_vote_opened_is_not_cast_when_the_vote_catches_up() -> None:
    # No vote board exists before the vote opens, so such a click is stale or forged: the
    # catch-up opens the vote, and the click finds it had not been open.
    day = confirm_all(started(["UANNA", "UBO", "UCIA"]))
    assert day.phase == m.Phase.DAY
    late = T0 + timedelta(seconds=LENGTHS.day_seconds)
    done = m.step(day, m.CastBallot("UANNA", "UBO"), late)
    assert done.state.phase == m.Phase.VOTE and shows(done, VOTE_BOARD)
    assert all(seat.ballot is None for seat in done.state.seats)
    assert english(m.VOTE_NOT_YET_OPEN) in answers(done)
    early = m.step(day, m.CastBallot("UANNA", "UBO"), T0)
    assert early.state == day and answers(early) == [english(m.VOTE_NOT_YET_OPEN)]


def test_named_werewolf_is_the_reason_for_the_extra_point() -> None:
    people = ["UANNA", "UBO", "UCIA", "UDAN"]
    state = started(people, lambda d, c: d["UBO"] is Card.WEREWOLF and d["UANNA"].team == "village")
    state = confirm_all(state)  # everyone skips: the cards stay where they were dealt
    state = run(state, *(m.HeardEnough(user) for user in people[:3])).state
    ballots = [m.CastBallot("UANNA", "UBO"), *(m.CastBallot(u, None) for u in people[1:])]
    done = run(state, *ballots)
    (scored,) = [effect for effect in done.effects if isinstance(effect, Scored)]
    anna = next(award for award in scored.awards if award.key == "UANNA")
    assert anna == Award("UANNA", points=1, won=False, named_werewolf=True)


# -- ending early ---------------------------------------------------------------------------


def test_stop_ends_the_game_and_tells_everyone() -> None:
    """Who may stop is slackapp.game.permissions' rule, decided before the step: a workspace
    admin who is not seated may too."""
    people = ["UANNA", "UBO", "UCIA"]
    state = started(people)
    by_an_admin = m.step(state, m.Stop("UADMIN"), T0)
    assert by_an_admin.state.phase == m.Phase.STOPPED
    done = m.step(state, m.Stop("UBO"), T0)
    assert done.state.phase == m.Phase.STOPPED and done.state.deadline is None
    assert {show.surface for show in shows(done)} == {"lobby", *(f"dm:{p}" for p in people)}
    assert not any(isinstance(e, Say) for e in done.effects), "the board says it, once"
    (board,) = [show.view for show in shows(done) if not dm_key(show.surface)]
    assert board == ClosedView(Line(Message.STOPPED_BY, user="UBO"))
    assert english(board.line) == "<@UBO> stopped this game. No one scores."
    # A night message is in a DM, beside other channels' games: it names the channel.
    for view in [show.view for show in shows(done) if dm_key(show.surface)]:
        assert isinstance(view, ClosedView)
        told = english(view.line)
        assert told == f"<@UBO> stopped the game in <#{state.channel}>. No one scores."
    assert answers(done) == ["You stopped the game: its board in the channel now says so."]
    assert not any(isinstance(effect, Scored) for effect in done.effects)


def test_stopping_a_table_still_in_its_lobby_calls_it_off_and_tells_no_one_of_a_game() -> None:
    """No game had begun: the lobby says the table was cancelled, nobody's night message is
    touched (there is none), and no one is told of points."""
    done = m.step(seated(["UANNA", "UBO", "UCIA"]), m.Stop("UANNA"), T0)
    assert done.state.phase == m.Phase.CANCELLED and done.state.ended_by == "UANNA"
    (board,) = shows(done)
    assert board.view == ClosedView(Line(Message.CANCELLED_BY, user="UANNA"))
    assert english(board.view.line) == "<@UANNA> cancelled this table."
    assert answers(done) == ["You cancelled the table: its lobby in the channel now says so."]
    assert not any(isinstance(effect, Scored) for effect in done.effects)


def test_a_channel_that_cannot_be_written_ends_the_game_and_tells_the_host_privately() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    done = m.step(started(people), m.ChannelUnwritable("not_in_channel"), T0)
    assert done.state.phase == m.Phase.STOPPED and not done.state.is_open
    (told,) = [effect for effect in done.effects if isinstance(effect, Tell)]
    assert told.user == "UANNA" and "not_in_channel" in english(told.text)
    assert not [effect for effect in done.effects if isinstance(effect, Say)]
    assert all(show.surface.startswith("dm:") for show in shows(done))
    lobby = m.step(new_table(), m.ChannelUnwritable("channel_not_found"), T0)
    assert lobby.state.phase == m.Phase.CANCELLED


def test_a_person_whose_dm_fails_is_named_once_without_a_secret() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    state = started(people)
    done = m.step(state, m.DmFailed("UBO", "account_inactive"), T0)
    (said,) = [effect for effect in done.effects if isinstance(effect, Say)]
    assert "<@UBO>" in english(said.text)
    assert not any(card.value in english(said.text) for card in Card)
    assert not seat_of(done.state, "UBO").reachable
    assert m.step(done.state, m.DmFailed("UBO", "account_inactive"), T0).effects == ()


def test_a_workspace_leaving_stops_its_game_without_a_word() -> None:
    done = m.step(started(["UANNA", "UBO", "UCIA"]), m.WorkspaceLeft(), T0)
    assert done.state.phase == m.Phase.STOPPED and done.effects == ()


# -- random event sequences -----------------------------------------------------------------

SECRET_TYPES = (Card, Outcome, m.Ballot, *get_args(Knowledge), *get_args(NightChoice))
ORDER = [m.Phase.LOBBY, m.Phase.NIGHT, m.Phase.DAY, m.Phase.VOTE, m.Phase.OVER]


def values_in(value: Any) -> Iterator[Any]:
    yield value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in dataclasses.fields(value):
            yield from values_in(getattr(value, item.name))
    elif isinstance(value, tuple | list):
        for item in value:
            yield from values_in(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from values_in(key)
            yield from values_in(item)


def is_secret(value: Any) -> bool:
    return isinstance(value, SECRET_TYPES)


def night_moves(
    who: st.SearchStrategy[str], seat: st.SearchStrategy[str], index: st.SearchStrategy[int]
) -> list[st.SearchStrategy[m.Event]]:
    """Every night move ``who`` may try: on ``seat``, or on the centre card at ``index``."""
    return [
        st.builds(m.NightPeek, who, index),
        st.builds(m.NightLook, who, st.one_of(st.none(), seat)),
        st.builds(m.NightRob, who, seat),
        st.builds(m.NightPick, who, seat),
        st.builds(m.NightResetPick, who),
        st.builds(m.NightSkip, who),
        st.builds(m.NightConfirm, who),
    ]


users = st.sampled_from([*PEOPLE[:7], "USTRANGER"])
targets = st.sampled_from([*PEOPLE[:7], "bot1", "bot2", "UNOBODY"])
events = st.one_of(
    st.builds(m.Join, users, st.just("someone")),
    st.builds(m.Leave, users),
    st.builds(m.FillWithBots, users),
    st.builds(m.Start, users),
    st.builds(m.Start, users, st.tuples(users)),
    *night_moves(users, targets, st.integers(-1, 2)),
    st.builds(m.HeardEnough, users),
    st.builds(
        m.CastBallot,
        users,
        st.one_of(st.none(), targets),
        st.one_of(st.none(), st.decimals(1, 100, places=2)),
    ),
    st.builds(m.Deadline),
    st.builds(m.DmFailed, users, st.just("account_inactive")),
)
rare = st.one_of(
    st.builds(m.Cancel, users),
    st.builds(m.Stop, users),
    st.builds(m.ChannelUnwritable, st.just("not_in_channel")),
    st.builds(m.WorkspaceLeft),
)


def likely(state: m.GameState) -> st.SearchStrategy[m.Event]:
    """Events that the state would accept, mostly: they carry a game to its end."""
    return _likely(
        state.phase,
        tuple(seat.key for seat in state.seats),
        tuple(seat.key for seat in state.people),
        tuple(state.awaiting()) if state.phase == m.Phase.NIGHT else (),
    )


@functools.cache
def _likely(
    phase: m.Phase, seats: tuple[str, ...], present: tuple[str, ...], awaiting: tuple[str, ...]
) -> st.SearchStrategy[m.Event]:
    # One strategy per situation: Hypothesis checks a strategy the first time it draws from
    # it, and building a new one at every step spent most of the test's time checking them.
    people = st.sampled_from(present or ("UANNA",))
    anyone = st.sampled_from([*seats, "UNOBODY"])
    if phase == m.Phase.LOBBY:
        newcomer = st.sampled_from([p for p in PEOPLE[:7] if p not in seats] or ["UANNA"])
        return st.one_of(
            st.builds(m.Join, newcomer, st.just("someone")),
            st.builds(m.FillWithBots, people),
            st.builds(m.Start, people),
        )
    if phase == m.Phase.NIGHT:
        waiting = st.sampled_from([key for key in awaiting if key in PEOPLE] or ["UANNA"])
        return st.one_of(
            st.builds(m.NightConfirm, waiting),
            st.builds(m.NightSkip, waiting),
            st.builds(m.NightPeek, waiting, st.integers(0, 1)),
            st.builds(m.NightLook, waiting, st.one_of(st.none(), anyone)),
            st.builds(m.NightRob, waiting, anyone),
            st.builds(m.NightPick, waiting, anyone),
        )
    if phase == m.Phase.DAY:
        return st.builds(m.HeardEnough, people)
    return st.builds(
        m.CastBallot,
        people,
        st.one_of(st.none(), anyone),
        st.one_of(st.none(), st.decimals(1, 100, places=2)),
    )


KINDS = st.sampled_from(["likely"] * 6 + ["any"] * 3 + ["rare"])
PAUSES = st.sampled_from([0, 0, 0, 1, 30, 130, 400])
LENGTHS_OF_SEQUENCES = st.integers(0, 90)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32), st.data())
def test_random_sequences_keep_the_invariants(seed: int, data: st.DataObject) -> None:
    state = m.open_table(7, "CFIKA", "UANNA", "anna", seed, LENGTHS).state
    now = T0
    scored = 0
    settled: set[str] = set()
    phases = [state.phase]
    for _ in range(data.draw(LENGTHS_OF_SEQUENCES, label="length")):
        kind = data.draw(KINDS)
        pool = {"likely": likely(state), "any": events, "rare": rare}[kind]
        event = data.draw(pool, label="event")
        now += timedelta(seconds=data.draw(PAUSES))
        before = state
        done = m.step(state, event, now)
        state = done.state

        # phases only go forward, and end in one of the three ends
        if state.phase != phases[-1]:
            phases.append(state.phase)
        open_order = [phase for phase in phases if phase in ORDER]
        assert open_order == sorted(open_order, key=ORDER.index)
        assert all(phase in ORDER for phase in phases[:-1])

        # a refusal (an answer and nothing else) changes nothing; an ended game never changes
        if done.effects and all(isinstance(effect, Answer) for effect in done.effects):
            assert state == before
        if before.is_over():
            assert state == before and not any(
                not isinstance(effect, Answer) for effect in done.effects
            )

        # seats: unique keys and positions, 1..10, people in an open lobby
        assert len({seat.key for seat in state.seats}) == len(state.seats) <= 10
        assert len({seat.position for seat in state.seats}) == len(state.seats)
        if state.phase == m.Phase.LOBBY:
            assert state.people
        if state.phase in m.TIMED_PHASES:
            assert state.deadline is not None
        else:
            assert state.deadline is None
        if state.phase == m.Phase.NIGHT:
            assert state.awaiting(), "the night ends when every seat has confirmed"

        # ballots only in the vote
        if state.phase in (m.Phase.LOBBY, m.Phase.NIGHT, m.Phase.DAY):
            assert all(seat.ballot is None for seat in state.seats)
        if before.phase != m.Phase.VOTE and state.phase == m.Phase.VOTE:
            assert all(seat.ballot is None for seat in state.seats if not seat.is_bot), (
                "a ballot before the vote opened"
            )

        # scores once, as the vote closes, with the ballots the reveal shows
        scores = [effect for effect in done.effects if isinstance(effect, Scored)]
        scored += len(scores)
        assert scored <= 1
        if scores:
            assert state.phase == m.Phase.OVER
            assert scores[0].outcome.ballots == state.ballots()
            (reveal,) = [s.view for s in shows(done, REVEAL)]
            assert isinstance(reveal, RevealView) and reveal.outcome == scores[0].outcome

        # a message's last word is never redrawn by a later step, unless the game is stopped
        for show in shows(done):
            assert show.surface not in settled or state.phase == m.Phase.STOPPED, show
        settled |= {show.surface for show in shows(done) if settles(show.view)}

        # no secret on a public surface before the reveal; a DM shows only its own seat
        revealed = False
        for effect in done.effects:
            if isinstance(effect, Show) and isinstance(effect.view, RevealView):
                revealed = True
            if isinstance(effect, Show) and dm_key(effect.surface) is not None:
                key = dm_key(effect.surface)
                seat = state.seat(key or "")
                assert seat is not None and not seat.is_bot
                if isinstance(effect.view, NightDmView):
                    assert effect.view.me.key == key and effect.view.card is seat.dealt
                # the game's end is a message of its own: the night message stays
                at_end = isinstance(effect.view, GameOverDmView)
                assert at_end == (effect.surface == over_surface(key or ""))
                continue
            if isinstance(effect, Show) and not revealed:
                assert not isinstance(effect.view, NightDmView | GameOverDmView)
                secrets = [value for value in values_in(effect.view) if is_secret(value)]
                assert not secrets, (effect, secrets)
            if isinstance(effect, Say):
                assert not any(card.value in english(effect.text) for card in Card)
    assert scored == (1 if state.phase == m.Phase.OVER else 0)
    hypothesis_event(f"ended in {state.phase}")


def test_a_whole_game_with_bots_from_lobby_to_reveal() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    state = seated(people, seed=11, bots=True)
    state = confirm_all(m.step(state, m.Start("UANNA"), T0).state)
    state = run(state, m.HeardEnough("UANNA"), m.HeardEnough("UBO")).state
    done = run(state, *(m.CastBallot(user, None) for user in people))
    assert done.state.phase == m.Phase.OVER
    outcome = done.state.outcome()
    assert outcome is not None and len(outcome.ballots) == 5


@pytest.mark.parametrize("seed", range(20))
def test_games_decided_only_by_deadlines(seed: int) -> None:
    state = run(seated(["UANNA", "UBO", "UCIA"], seed=seed), m.Start("UANNA")).state
    now = T0
    for _ in range(3):
        assert state.deadline is not None
        now = state.deadline
        state = m.step(state, m.Deadline(), now).state
    assert state.phase == m.Phase.OVER
    outcome = state.outcome()
    assert outcome is not None and outcome.ballots == {}


# -- play again ------------------------------------------------------------------------------


def revealed(people: list[str], bots: bool = False) -> m.GameState:
    state = run(seated(people, seed=3, bots=bots), m.Start(people[0])).state
    state = confirm_all(state)
    state = run(state, *(m.HeardEnough(user) for user in people)).state
    state = run(state, *(m.CastBallot(user, None) for user in people)).state
    assert state.phase == m.Phase.OVER
    return state


def again(
    last: m.GameState,
    user: str,
    name: str,
    lengths: m.Lengths | None = None,
    kept: Kept | None = None,
) -> m.Step:
    """*Play again* on ``last``, the channel's settings unchanged unless given."""
    return m.play_again(last, 8, 99, user, name, lengths or last.lengths, kept or last.kept)


def test_play_again_seats_the_same_people_with_the_same_settings_and_bots_refilled() -> None:
    people = ["UANNA", "UBO", "UCIA"]
    last = dataclasses.replace(revealed(people, bots=True), lengths=m.Lengths(45, 240, 75))
    assert m.play_again_refusal(last) is None
    done = again(last, "UCIA", "cia")
    new = done.state
    assert (new.id, new.seed, new.phase, new.channel) == (8, 99, m.Phase.LOBBY, "CFIKA")
    assert new.host == "UCIA" and new.lengths == m.Lengths(45, 240, 75) and new.bots_allowed
    assert [seat.key for seat in new.people] == people
    assert len(new.seats) == 5 and all(seat.dealt is None for seat in new.seats)
    assert all(seat.ballot is None and not seat.confirmed for seat in new.seats)
    (lobby,) = shows(done, LOBBY_BOARD)
    assert isinstance(lobby.view, LobbyView) and lobby.view.game_id == 8
    # each may leave, and the new table plays like any other
    left = m.step(new, m.Leave("UBO"), T0).state
    assert [seat.key for seat in left.people] == ["UANNA", "UCIA"]


def test_play_again_by_someone_new_seats_them_and_without_bots_adds_none() -> None:
    last = revealed(["UANNA", "UBO", "UCIA"])
    new = again(last, "UDAN", "dan").state
    assert [seat.key for seat in new.seats] == ["UANNA", "UBO", "UCIA", "UDAN"]
    assert new.host == "UDAN" and not any(seat.is_bot for seat in new.seats)


def test_play_again_takes_the_channels_settings_as_they_are_now() -> None:
    """Settings changed during the game were announced for the next table: *Play again*
    opens it with them, and refills no bot once the channel has turned bots off."""
    last = revealed(["UANNA", "UBO", "UCIA"], bots=True)
    now = Kept(bots_allowed=False, language=Language.SWEDISH)
    new = again(last, "UANNA", "anna", m.Lengths(30, 90, 45), now).state
    assert new.lengths == m.Lengths(30, 90, 45) and new.language is Language.SWEDISH
    assert not new.bots_allowed and not any(seat.is_bot for seat in new.seats)
    assert [seat.key for seat in new.seats] == ["UANNA", "UBO", "UCIA"]


def test_play_again_only_after_a_reveal() -> None:
    assert english(m.play_again_refusal(None)) == "That game no longer exists."
    for state in (seated(["UANNA", "UBO", "UCIA"]), started(["UANNA", "UBO", "UCIA"])):
        assert "reached its reveal" in english(m.play_again_refusal(state))
    stopped = m.step(started(["UANNA", "UBO", "UCIA"]), m.Stop("UANNA"), T0).state
    assert "reached its reveal" in english(m.play_again_refusal(stopped))
