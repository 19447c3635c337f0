"""A refusal points a person only at what they may do: a second ``/varulv`` during a game names
``/varulv stop`` to those the stop would let end it (its host, whoever set the channel's
standing table, anyone in a channel open to everyone) and names them to the others, and a full
table points no one at *Join*, in English and in Swedish."""

from __future__ import annotations

import re

import pytest

from slackapp.blocks.said import said
from slackapp.blocks.words import words
from slackapp.game import machine as m
from slackapp.game.cards import MAX_SEATS
from slackapp.game.effects import Answer
from slackapp.game.lines import Language, Line, Message
from slackapp.game.permissions import Asker, Change, Channel, may
from tests.game.test_machine import T0, confirm_all, seated, started

PEOPLE = ["UANNA", "UBO", "UCIA"]


@pytest.mark.parametrize("language", list(Language))
@pytest.mark.parametrize("phase", ["night", "day"])
def test_in_a_closed_channel_only_the_host_is_pointed_at_stop(
    language: Language, phase: str
) -> None:
    state = started(PEOPLE)
    if phase == "day":
        state = confirm_all(state)
    assert state.phase.value == phase and state.host == "UANNA"
    w = words(language)
    host = said(m.already_running(state, "UANNA"), w)
    assert "`/varulv stop`" in host
    for other in ("UBO", "USTRANGER"):  # seated, and not seated: neither may stop it
        told = said(m.already_running(state, other), w)
        assert "/varulv stop" not in told, told
        assert "<@UANNA>" in told, "whoever can end it is named"
    stranger = said(m.already_running(state, "USTRANGER"), w)
    if language is Language.SWEDISH:
        assert "Du är inte med i det, men kan vara med i nästa." in stranger
        assert "där är det" not in stranger
        assert "Du är värd för det och kan avbryta det med `/varulv stop`." in host
        # An admin typing /varulv is not told that the host alone may end the game.
        assert "<@UANNA> är värd för det. Hen och arbetsytans admins kan avbryta det." in stranger
    else:
        assert "As its host, you can end it with `/varulv stop`." in host
        assert "Its host, <@UANNA>, and the workspace's admins can end it." in stranger


@pytest.mark.parametrize("language", list(Language))
def test_in_a_channel_open_to_everyone_anyone_is_pointed_at_stop(language: Language) -> None:
    state = started(PEOPLE)
    w = words(language)
    for other in ("UBO", "USTRANGER"):  # seated, and not seated: in an open channel both may
        told = said(m.already_running(state, other, open_to_everyone=True), w)
        if language is Language.SWEDISH:
            assert told.endswith(" Vem som helst i kanalen kan avbryta det med `/varulv stop`.")
        else:
            assert told.endswith(" Anyone in this channel can end it with `/varulv stop`."), told
    host = said(m.already_running(state, "UANNA", open_to_everyone=True), w)
    assert host == said(m.already_running(state, "UANNA"), w), "the host is told as the host"


@pytest.mark.parametrize("language", list(Language))
def test_whoever_set_the_standing_table_is_named_and_pointed_at_stop(language: Language) -> None:
    state = started(PEOPLE)
    w = words(language)
    owner = said(m.already_running(state, "UOWNER", standing_owner="UOWNER"), w)
    stranger = said(m.already_running(state, "USTRANGER", standing_owner="UOWNER"), w)
    assert "/varulv stop" not in stranger
    if language is Language.SWEDISH:
        assert owner.endswith(
            " Du satte upp kanalens stående bord och kan avbryta det med `/varulv stop`."
        )
        assert stranger.endswith(
            " <@UANNA> är värd för det. Hen, arbetsytans admins och <@UOWNER>, som satte upp "
            "kanalens stående bord, kan avbryta det."
        )
    else:
        assert owner.endswith(
            " You set this channel's standing table, so you can end it with `/varulv stop`."
        )
        assert stranger.endswith(
            " Its host, <@UANNA>, <@UOWNER>, who set this channel's standing table, and the "
            "workspace's admins can end it."
        )
    # The host set the standing table too: named once, as the host.
    hosts_both = said(m.already_running(state, "USTRANGER", standing_owner="UANNA"), w)
    assert hosts_both == said(m.already_running(state, "USTRANGER"), w)


@pytest.mark.parametrize("open_to_everyone", [False, True], ids=["closed", "open"])
@pytest.mark.parametrize("standing_owner", [None, "UANNA", "UBO", "UOWNER"])
def test_the_line_says_exactly_whom_the_stop_lets_end_the_game(
    open_to_everyone: bool, standing_owner: str | None
) -> None:
    """What ``/varulv stop`` would decide for each person (not an admin), against what
    ``/varulv`` told them: pointed at the stop when it would end the game, else told by name
    everyone it would let, and no one else."""
    state = started(PEOPLE)
    channel = Channel(open_to_everyone, has_standing_table=standing_owner is not None)

    def lets(user: str) -> bool:
        asker = Asker(
            hosts_the_game=user == state.host, set_the_standing_table=user == standing_owner
        )
        return may(Change.STOP, asker, channel)

    everyone = [*PEOPLE, "UOWNER", "USTRANGER"]
    for language in Language:
        for user in everyone:
            told = said(
                m.already_running(state, user, open_to_everyone, standing_owner), words(language)
            )
            assert ("`/varulv stop`" in told) == lets(user), (user, told)
            if not lets(user):
                named = set(re.findall(r"<@(\w+)>", told))
                assert named == {other for other in everyone if lets(other)}, (user, told)


@pytest.mark.parametrize("language", list(Language))
def test_a_stop_that_found_another_game_does_not_send_the_person_round_again(
    language: Language,
) -> None:
    told = said(Line(Message.ANOTHER_GAME_NOW), words(language))
    assert "/varulv stop" not in told and told


@pytest.mark.parametrize("language", list(Language))
def test_a_full_table_points_no_one_at_join(language: Language) -> None:
    w = words(language)
    join = w._("Join")
    full = seated(PEOPLE_AT_A_FULL_TABLE)
    assert len(full.seats) == MAX_SEATS and not any(seat.is_bot for seat in full.seats)
    stranger = "USTRANGER"
    start = said(answers_of(m.step(full, m.Start(stranger), T0)), w)
    command = said(m.already_running(full, stranger), w)
    for told in (start, command):
        assert f"*{join}*" not in told, told
    assert start == w._("You are not seated at this table, and every seat is taken.")
    assert command == w._("A table is already open in this channel, and every seat is taken.")
    # with a free seat, both say where to sit down
    open_table = seated(PEOPLE_AT_A_FULL_TABLE[:4])
    assert f"*{join}*" in said(answers_of(m.step(open_table, m.Start(stranger), T0)), w)
    assert f"*{join}*" in said(m.already_running(open_table, stranger), w)


PEOPLE_AT_A_FULL_TABLE = [f"UPERSON{number}" for number in range(MAX_SEATS)]


def answers_of(step: m.Step) -> Line:
    (answer,) = [effect.line for effect in step.effects if isinstance(effect, Answer)]
    return answer
