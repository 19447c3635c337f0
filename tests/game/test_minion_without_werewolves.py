"""A Minion dealt at a table where both Werewolves lie in the centre: it learns at night that
no seat holds one, is told its real goal (someone other than itself must die), and wins when
the vote kills another player, all through the phase machine."""

from __future__ import annotations

import pytest

from slackapp.blocks.help import help_screen
from slackapp.blocks.render import render
from slackapp.blocks.sides import (
    goal,
    minion_without_werewolves_goal,
    minion_without_werewolves_rule,
)
from slackapp.blocks.words import words
from slackapp.game import machine as m
from slackapp.game.cards import Card, Team
from slackapp.game.effects import GameOverDmView, NightDmView, View, dm_key
from slackapp.game.lines import Language
from tests.game.test_machine import (
    PEOPLE,
    T0,
    confirm_all,
    run,
    seated,
    seed_where,
    shows,
    started,
)
from tests.test_the_vote_explained import text_of as screen_text

SIX = PEOPLE[:6]


def text_of(view: View, language: Language) -> str:
    return screen_text(render(view, words(language)))


def no_werewolf_seated(dealt: dict[str, Card], centre: tuple[Card, Card]) -> bool:
    return centre == (Card.WEREWOLF, Card.WEREWOLF) and Card.MINION in dealt.values()


def night_dms(step: m.Step) -> dict[str, NightDmView]:
    return {
        key: show.view
        for show in shows(step)
        if (key := dm_key(show.surface)) is not None and isinstance(show.view, NightDmView)
    }


@pytest.mark.parametrize("language", list(Language))
def test_the_minion_alone_is_told_its_real_goal_and_wins_when_another_dies(
    language: Language,
) -> None:
    dealing = m.step(seated(SIX, seed_where(SIX, no_werewolf_seated)), m.Start(SIX[0]), T0)
    state = dealing.state
    dealt = state.deal().dealt
    (minion,) = [key for key in SIX if dealt[key] is Card.MINION]
    w = words(language)

    # the night message the machine shows at the deal, and again once the Minion confirms
    for step in (dealing, m.step(state, m.NightConfirm(minion), T0)):
        minion_view = night_dms(step)[minion]
        assert minion_view.minion_without_werewolves
        said = text_of(minion_view, language)
        assert minion_without_werewolves_goal(w) in said
        assert goal(Team.WEREWOLF, w) not in said, "never 'keep every Werewolf alive'"
        assert w._("No one at the table was dealt a Werewolf.") in said

    # every other seat's day wording stays its card's own
    night = confirm_all(state)
    assert night.phase == m.Phase.DAY

    # the vote kills someone other than the Minion: the Minion, and only it, wins
    victim = next(key for key in SIX if key != minion)
    voters = [key for key in SIX if key != victim]
    state = run(night, *(m.HeardEnough(key) for key in SIX[:4])).state
    assert state.phase == m.Phase.VOTE
    done = run(
        state,
        *(m.CastBallot(key, victim) for key in voters),
        m.CastBallot(victim, minion),
    )
    outcome = done.state.outcome()
    assert outcome is not None and outcome.tally.dead == (victim,)
    assert outcome.result.winners == (minion,)
    assert outcome.result.winning_team is Team.WEREWOLF
    (over,) = [
        show.view
        for show in shows(done)
        if dm_key(show.surface) == minion and isinstance(show.view, GameOverDmView)
    ]
    assert over.won and w._("*You won!*") in text_of(over, language)


def test_every_other_seat_keeps_its_own_side_and_a_minion_that_saw_wolves_keeps_its_goal() -> None:
    state = started(SIX, no_werewolf_seated)
    for key in SIX:
        view = night_dms(m.step(state, m.NightConfirm(key), T0)).get(key)
        if view is None or view.card is Card.MINION:
            continue
        assert not view.minion_without_werewolves
        assert minion_without_werewolves_goal() not in text_of(view, Language.ENGLISH)
    seated = started(
        SIX, lambda dealt, centre: Card.MINION in dealt.values() and Card.WEREWOLF in dealt.values()
    )
    (minion,) = [key for key in SIX if seated.deal().dealt[key] is Card.MINION]
    view = night_dms(m.step(seated, m.NightConfirm(minion), T0))[minion]
    assert not view.minion_without_werewolves
    said = text_of(view, Language.ENGLISH)
    assert goal(Team.WEREWOLF) in said and minion_without_werewolves_goal() not in said


@pytest.mark.parametrize("language", list(Language))
def test_the_help_says_the_minions_goal_without_werewolves(language: Language) -> None:
    w = words(language)
    text = "\n".join(
        block["text"]["text"]
        for block in help_screen(words=w).as_dicts()
        if block.get("text") and isinstance(block["text"], dict)
    )
    minion_line = next(line for line in text.splitlines() if line.startswith("*Minion*"))
    assert minion_without_werewolves_rule(w) in minion_line
    if language is Language.SWEDISH:
        assert "Har ingen vid bordet en Werewolf vinner Minion bara om" in text
