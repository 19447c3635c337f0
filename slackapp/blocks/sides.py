"""The two sides and what each plays for, in the table's words (the cards keep their English
names and lines)."""

from __future__ import annotations

from slackapp.blocks.words import ENGLISH, Words
from slackapp.game.cards import Card, Team


def team_name(team: Team, words: Words = ENGLISH) -> str:
    """The side as a sentence says it: "the {team} side"."""
    return words._("village") if team is Team.VILLAGE else words._("werewolf")


def goal(team: Team, words: Words = ENGLISH) -> str:
    if team is Team.VILLAGE:
        return words._(
            "find a Werewolf and vote for it (or for Nobody, if you think both lie in the centre)"
        )
    return words._("keep every Werewolf alive through the vote, and claim some other card")


def day_goal(card: Card, words: Words = ENGLISH) -> str:
    """What the side of a dealt card plays for by day, and that the card may have moved."""
    return words._(
        "You are on the {team} side: {goal}. Your card may have moved in the night: the card "
        "you hold at dawn decides your side.",
        team=team_name(card.team, words),
        goal=goal(card.team, words),
    )


def minion_without_werewolves_goal(words: Words = ENGLISH) -> str:
    """The Minion's real goal once it has seen that no seat holds a Werewolf."""
    return words._(
        "No one at the table holds a Werewolf, so you win only if someone other than you dies: "
        "get the vote onto another player. Your card may have moved in the night: the card you "
        "hold at dawn decides your side."
    )


def minion_without_werewolves_rule(words: Words = ENGLISH) -> str:
    """The same rule in the help's card line, said of the Minion."""
    return words._(
        "If no one at the table holds a Werewolf, the Minion wins only if someone other than "
        "the Minion dies."
    )


def learned_goal(dealt: Card, held: Card, may_still_move: bool, words: Words = ENGLISH) -> str:
    """The side and goal of a seat dealt ``dealt`` that has seen it now holds ``held`` (the
    Robber's new card, the Insomniac's card at dawn); ``may_still_move``: a card that moves
    cards wakes later (:func:`slackapp.game.night.may_still_move`)."""
    team = held.team
    values = {"team": team_name(team, words), "goal": goal(team, words)}
    if team is not dealt.team:
        side = words._("You are now on the {team} side: {goal}.", **values)
    else:
        side = words._("You are still on the {team} side: {goal}.", **values)
    if may_still_move:
        later = words._(
            "A card that wakes after yours could still swap your card, and your side with it."
        )
    else:
        later = words._("No card wakes after yours: this is your card, and your side, at dawn.")
    return f"{side} {later}"
