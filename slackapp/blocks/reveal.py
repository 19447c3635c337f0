"""The reveal: one message that tells the whole game, written to be read aloud.

The night as a story in its fixed order, then every seat's card at deal and at dawn, every
ballot, the tally, the dead, the winners and the points. Each part is packed into as few
sections as Slack allows, so a ten-seat game fits well inside one message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial

from slack_sdk.models.blocks import ActionsBlock, Block, DividerBlock, HeaderBlock

from slackapp.blocks import ids
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import (
    CENTRE_NAMES,
    Screen,
    and_list,
    button,
    context,
    plural,
    possessive,
    seat_name,
    section,
    sections,
)
from slackapp.game.cards import Card, Team
from slackapp.game.night import LookAtCenter, LookAtSeat, NightStep, Peek, Rob, Swap
from slackapp.game.outcome import BallotScore, Outcome, ballot_score

Namer = Callable[[str], str]
YOUR_NIGHT = "*Your night*"
WON, LOST = "won", "lost"
BALLOT_REASONS = {
    BallotScore.NAMED_WEREWOLF: "named a Werewolf",
    BallotScore.NAMED_NO_WEREWOLF: "the ballot named no Werewolf",
    BallotScore.FOR_NOBODY: "voted for nobody",
    BallotScore.NO_BALLOT: "did not vote",
}
"""The reason beside a seat's points on the reveal, by what its ballot did."""
YOUR_BALLOT_REASONS = {
    BallotScore.NAMED_WEREWOLF: "your ballot named a Werewolf",
    BallotScore.NAMED_NO_WEREWOLF: "your ballot named no Werewolf",
    BallotScore.FOR_NOBODY: "you voted for nobody",
    BallotScore.NO_BALLOT: "you did not vote",
}
"""The same reason in the person's own message at the game's end."""
REVEAL_HEADER = "The reveal: what really happened"
"""Not "Dawn breaks": that is how the day begins, on the night board."""


def reveal(
    outcome: Outcome,
    labels: Mapping[str, SeatLabel],
    channel_points_note: str | None = None,
    game_id: int | None = None,
) -> Screen:
    """``game_id``: offer *Play again*, which opens the next table with the same people."""
    name: Namer = partial(seat_name, labels)
    parts = [
        ["*The night*", *_night_story(outcome, labels)],
        ["*The cards*", *_cards(outcome, name)],
        ["*The vote*", *_ballots(outcome, name)],
        ["*The result*", *_result(outcome, name)],
        ["*Points*", *_points(outcome, name)],
    ]
    blocks: list[Block] = [HeaderBlock(text=REVEAL_HEADER)]
    for number, lines in enumerate(parts):
        if number:
            blocks.append(DividerBlock())
        blocks += sections(lines)
    if channel_points_note:
        blocks.append(context(channel_points_note))
    if game_id is not None:
        again = button("Play again", ids.PLAY_AGAIN, ids.ButtonValue(game_id).pack())
        blocks += [
            ActionsBlock(elements=[again]),
            context("Opens the next table here with the same people seated; each can *Leave*."),
        ]
    return Screen(text=f"The Varulv reveal: {_headline(outcome)}", blocks=blocks)


def dm_game_over(
    channel_id: str,
    dealt: Card,
    dawn: Card,
    points: int,
    won: bool,
    night_lines: Sequence[str] = (),
    ballot: BallotScore | None = None,
) -> Screen:
    """The line each person gets privately once the reveal is out, over their night message:
    ``night_lines`` are what that message said they saw and did, kept."""
    held = "still held it at dawn" if dealt is dawn else f"held the *{dawn}* at dawn"
    verdict = "*You won!*" if won else "*Not this time.*"
    why = "" if ballot is None else f": {WON if won else LOST}; {YOUR_BALLOT_REASONS[ballot]}"
    blocks: list[Block] = [
        section(
            f"{verdict} You were dealt the *{dealt}* and {held}. "
            f"{plural(points, 'point')} this game{why}."
        ),
    ]
    if night_lines:
        blocks += sections([YOUR_NIGHT, *night_lines])
    blocks.append(context(f"The whole story is in <#{channel_id}>."))
    return Screen(text=f"The Varulv game in <#{channel_id}> is over.", blocks=blocks)


def _headline(outcome: Outcome) -> str:
    match outcome.result.winning_team:
        case Team.VILLAGE:
            return "the village wins."
        case Team.WEREWOLF:
            return "the werewolf team wins."
    return "nobody wins."


def _night_story(outcome: Outcome, labels: Mapping[str, SeatLabel]) -> Iterator[str]:
    name: Namer = partial(seat_name, labels)
    steps = outcome.night.steps
    wolves = [step for step in steps if step.card is Card.WEREWOLF]
    if not wolves:
        yield ":wolf: No one was dealt a Werewolf."
    elif len(wolves) > 1:
        pack = and_list([name(step.seat) for step in wolves])
        yield f":wolf: {pack} woke as Werewolves and saw each other."
    for step in steps:
        if step.card is Card.WEREWOLF and len(wolves) > 1:
            continue  # told together above
        yield _step(step, outcome, labels)
    yield from _sides(outcome, name)


def _sides(outcome: Outcome, name: Namer) -> Iterator[str]:
    """What the night did to the teams: each exchange that moved someone to the other side,
    then, when several did, who was on the werewolf side at dawn."""
    moves = outcome.night.moves
    changing = [move for move in moves if move.changes_sides]
    if moves and not changing:
        yield "_No one changed sides in the night: the cards that moved stayed on their team._"
    for move in changing:
        first, second = name(move.first), name(move.second)
        went = (
            f"so {first} went over to the {move.first_card.team} side and {second} to the "
            f"{move.second_card.team} side"
        )
        if move.by == move.first:  # the Robber took the card
            yield (
                f"_{first} took the {move.first_card} from {second}, {went}, holding the "
                f"{move.second_card}._"
            )
        else:
            yield (
                f"_{name(move.by)}'s swap gave {first} the {move.first_card} and {second} the "
                f"{move.second_card}, {went}._"
            )
    if len(changing) > 1:
        dawn = outcome.night.dawn
        wolves = [name(seat) for seat in outcome.deal.seats if dawn[seat].team is Team.WEREWOLF]
        if not wolves:
            yield "_So at dawn no one at the table was on the werewolf side._"
        else:
            yield (
                f"_So at dawn the werewolf side was {and_list(wolves)}; everyone else played "
                "for the village._"
            )


def _step(step: NightStep, outcome: Outcome, labels: Mapping[str, SeatLabel]) -> str:
    """One seat's turn, named by the card it was dealt, with what it did and saw."""
    who = seat_name(labels, step.seat)
    centre = outcome.night.center
    match step.card, step.choice:
        case Card.WEREWOLF, Peek(index):
            return (
                f":wolf: {who} woke as the lone Werewolf and peeked at the "
                f"{CENTRE_NAMES[index]} centre card: *{centre[index]}*."
            )
        case Card.WEREWOLF, _:
            return f":wolf: {who} woke as the lone Werewolf and chose not to peek."
        case Card.MINION, _:
            wolves = outcome.deal.dealt_werewolves()
            if not wolves:
                return f":smiling_imp: {who}, the Minion, woke to find no werewolf at the table."
            seen = and_list([seat_name(labels, wolf) for wolf in wolves])
            return f":smiling_imp: {who}, the Minion, saw the werewolves: {seen}."
        case Card.SEER, LookAtSeat(seat):
            return (
                f":crystal_ball: {who}, the Seer, looked at {possessive(labels, seat)} card: "
                f"*{outcome.deal.dealt[seat]}*."
            )
        case Card.SEER, LookAtCenter():
            return (
                f":crystal_ball: {who}, the Seer, looked at both centre cards: "
                f"*{centre[0]}* and *{centre[1]}*."
            )
        case Card.SEER, _:
            return f":crystal_ball: {who}, the Seer, chose not to look."
        case Card.ROBBER, Rob(seat):
            return (
                f":moneybag: {who}, the Robber, took {possessive(labels, seat)} card: "
                f"the *{outcome.deal.dealt[seat]}*."
            )
        case Card.ROBBER, _:
            return f":moneybag: {who}, the Robber, chose not to rob anyone."
        case Card.TROUBLEMAKER, Swap(first, second):
            swapped = f"{possessive(labels, first)} and {possessive(labels, second)}"
            return f":twisted_rightwards_arrows: {who}, the Troublemaker, swapped {swapped} cards."
        case Card.TROUBLEMAKER, _:
            return f":twisted_rightwards_arrows: {who}, the Troublemaker, chose not to swap."
        case Card.INSOMNIAC, _:
            woke = outcome.night.dawn[step.seat]
            return f":owl: {who}, the Insomniac, woke at the end of the night as the *{woke}*."
    return f"{who}, the {step.card}, woke."  # only reached if a new waking card is added


def _cards(outcome: Outcome, name: Namer) -> Iterator[str]:
    for seat in outcome.deal.seats:
        dealt, dawn = outcome.deal.dealt[seat], outcome.night.dawn[seat]
        if dealt is dawn:
            yield f"{name(seat)}: *{dawn}* all night"
        else:
            yield f"{name(seat)}: {dealt} → *{dawn}*"
    left, right = outcome.night.center
    yield f"Centre: *{left}* (left) and *{right}* (right)"


def _ballots(outcome: Outcome, name: Namer) -> Iterator[str]:
    for seat in outcome.deal.seats:
        if seat not in outcome.ballots:
            yield f"{name(seat)} did not vote"
            continue
        target = outcome.ballots[seat]
        yield f"{name(seat)} → {'nobody' if target is None else name(target)}"
    counts = sorted(outcome.tally.votes.items(), key=lambda item: -item[1])
    tally = [f"{name(seat)} {count}" for seat, count in counts]
    if outcome.tally.nobody:
        tally.append(f"nobody {outcome.tally.nobody}")
    yield f"Tally: {', '.join(tally) if tally else 'no ballots'}"


def _result(outcome: Outcome, name: Namer) -> Iterator[str]:
    dead = outcome.tally.dead
    if not dead:
        yield "No one died."
    for seat in dead:
        yield f":skull: {name(seat)} died, holding the *{outcome.night.dawn[seat]}*."
    result = outcome.result
    winners = and_list([name(seat) for seat in result.winners]) or "no one at the table"
    match result.winning_team:
        case Team.VILLAGE:
            yield f":trophy: *The village wins:* {winners}."
        case Team.WEREWOLF:
            yield f":trophy: *The werewolf team wins:* {winners}."
        case None:
            yield "*Nobody wins.*"


def _points(outcome: Outcome, name: Namer) -> Iterator[str]:
    """Every seat's points with their reason, zero included: its win or loss, and its ballot."""
    winners = set(outcome.result.winners)
    for seat in outcome.deal.seats:
        points = outcome.result.points[seat]
        result = WON if seat in winners else LOST
        because = f"{result}; {BALLOT_REASONS[ballot_score(outcome, seat)]}"
        yield f"{name(seat)}: *{plural(points, 'point')}* ({because})"
