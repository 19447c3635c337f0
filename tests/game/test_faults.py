"""A game whose deadline cannot be stepped: the rule that gives it up, the phase it ends in,
and what ending it shows, which names nothing secret."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from slackapp.blocks.render import render
from slackapp.blocks.said import said
from slackapp.blocks.words import words
from slackapp.config import Settings
from slackapp.game import faults
from slackapp.game import machine as m
from slackapp.game.cards import Card
from slackapp.game.effects import (
    DAY_BOARD,
    LOBBY_BOARD,
    VOTE_BOARD,
    ClosedView,
    Say,
    Show,
    dm_surface,
)
from slackapp.game.lines import Language, Line, Message
from slackapp.timers import SWEEP_SECONDS

T0 = datetime(2030, 5, 6, 10, 0, tzinfo=UTC)
DEADLINE = T0 - timedelta(minutes=5)
GRACE = faults.FAULT_GRACE


def after(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_a_game_is_given_up_once_its_step_has_failed_every_time_for_the_grace() -> None:
    failing = faults.failed(None, DEADLINE, T0)
    assert failing == faults.Failing(DEADLINE, T0, T0)
    assert not failing.gives_up(), "one failure, however late the deadline, ends nothing"
    for seconds in (2, 30, GRACE.total_seconds() - 1):
        failing = faults.failed(failing, DEADLINE, after(seconds))
        assert failing.since == T0
        assert not failing.gives_up(), seconds
    failing = faults.failed(failing, DEADLINE, after(GRACE.total_seconds()))
    assert failing.gives_up()


def test_a_step_not_tried_again_for_the_grace_counts_from_its_next_failure() -> None:
    """Not tried here for a while: it went through elsewhere, or was not due. A lone failure
    after that is a first one."""
    failing = faults.failed(None, DEADLINE, T0)
    assert not failing.forgotten(after(GRACE.total_seconds() - 1))
    assert failing.forgotten(after(GRACE.total_seconds()))
    again = faults.failed(failing, DEADLINE, after(10 * GRACE.total_seconds()))
    assert again.since == again.last == after(10 * GRACE.total_seconds())
    assert not again.gives_up()


def test_a_failure_at_another_deadline_counts_from_nothing() -> None:
    """The game moved on meanwhile (another process stepped it, or a click): its step at the
    next deadline has not been failing, however recently the last one failed."""
    failing = faults.failed(None, DEADLINE, T0)
    failing = faults.failed(failing, DEADLINE, after(GRACE.total_seconds() - 10))
    later = DEADLINE + timedelta(seconds=30)
    moved_on = faults.failed(failing, later, after(GRACE.total_seconds()))
    assert moved_on == faults.Failing(
        later, after(GRACE.total_seconds()), after(GRACE.total_seconds())
    )
    assert not moved_on.gives_up()


def test_the_grace_ends_before_readiness_would_say_the_deadlines_are_behind() -> None:
    """A step tried at its deadline, failing every time, is given up by the end of the grace
    and a sweep or two: before ``/readyz`` says the deadlines are behind, by default."""
    sweeps = timedelta(seconds=2 * SWEEP_SECONDS)
    assert GRACE + sweeps < timedelta(seconds=Settings.ready_behind_seconds)


@pytest.mark.parametrize(
    ("phase", "ended", "board"),
    [
        (m.Phase.NIGHT, m.Phase.STOPPED, LOBBY_BOARD),
        (m.Phase.DAY, m.Phase.STOPPED, DAY_BOARD),
        (m.Phase.VOTE, m.Phase.STOPPED, VOTE_BOARD),
        (m.Phase.LOBBY, m.Phase.CANCELLED, LOBBY_BOARD),
    ],
)
def test_a_game_given_up_ends_as_a_lost_channel_ends_it_and_says_so(
    phase: m.Phase, ended: m.Phase, board: str
) -> None:
    people = ["U0ANNA", "U0BO"]
    given_up = faults.give_up(phase, "C0GAME", people)
    assert given_up.phase == ended == m.ended_phase(phase)
    note = ClosedView(Line(Message.FAULT_ENDED))
    told = ClosedView(Line(Message.FAULT_ENDED_IN, channel="C0GAME"))
    dms = [Show(dm_surface(key), told) for key in people] if phase != m.Phase.LOBBY else []
    assert given_up.effects == (
        Show(board, note),
        *dms,
        Say(Line(Message.FAULT_CHANNEL_FREE)),
    )


@pytest.mark.parametrize("language", list(Language))
def test_what_a_game_given_up_shows_names_no_card_and_offers_a_new_game(
    language: Language,
) -> None:
    spoken = words(language)
    shown = []
    for effect in faults.give_up(m.Phase.NIGHT, "C0GAME", ["U0ANNA"]).effects:
        if isinstance(effect, Show):
            shown.append(render(effect.view, spoken).text)
        elif isinstance(effect, Say) and isinstance(effect.text, Line):
            shown.append(said(effect.text, spoken))
    assert len(shown) == 3
    for text in shown:
        assert text
        for card in Card:
            assert card.value not in text, (card, text)
    assert "/varulv" in shown[-1], "the channel is told how to start again"
    assert "<#C0GAME>" in shown[1], "a night message, in a DM, names the game's channel"


def test_a_lost_channel_still_ends_its_game_in_the_same_phases() -> None:
    assert m.ended_phase(m.Phase.LOBBY) == m.Phase.CANCELLED
    assert {m.ended_phase(phase) for phase in m.TIMED_PHASES} == {m.Phase.STOPPED}
