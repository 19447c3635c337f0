"""The reveal: one message that tells the whole game, written to be read aloud.

The night as a story in its fixed order, then every seat's card at deal and at dawn, every
ballot, the tally, the dead, the winners and the points. Each part is packed into as few
sections as Slack allows, so a ten-seat game fits well inside one message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial

from slackapp.blocks import ids
from slackapp.blocks.kit import Json, actions, button, context, divider, header, section
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.screen import Screen, and_list, seat_name, sections
from slackapp.blocks.sides import team_name
from slackapp.blocks.words import ENGLISH, N_, Words
from slackapp.game.cards import Card, Team
from slackapp.game.night import LookAtCenter, LookAtSeat, NightStep, Peek, Rob, Swap
from slackapp.game.outcome import BallotScore, Outcome, ballot_score
from slackapp.game.vote import Verdict, verdict

Namer = Callable[[str], str]


def _ballot_reason(score: BallotScore, w: Words) -> str:
    """The reason beside a seat's points on the reveal, by what its ballot did."""
    return {
        BallotScore.NAMED_WEREWOLF: w._("named a Werewolf"),
        BallotScore.NAMED_NO_WEREWOLF: w._("the ballot named no Werewolf"),
        BallotScore.FOR_NOBODY: w._("voted for nobody"),
        BallotScore.NO_BALLOT: w._("did not vote"),
    }[score]


def _your_ballot_reason(score: BallotScore, w: Words) -> str:
    """The same reason in the person's own message at the game's end."""
    return {
        BallotScore.NAMED_WEREWOLF: w._("your ballot named a Werewolf"),
        BallotScore.NAMED_NO_WEREWOLF: w._("your ballot named no Werewolf"),
        BallotScore.FOR_NOBODY: w._("you voted for nobody"),
        BallotScore.NO_BALLOT: w._("you did not vote"),
    }[score]


def _won(won: bool, w: Words) -> str:
    return w._("won") if won else w._("lost")


REVEAL_HEADER = N_("The reveal: what really happened")
"""Not "Dawn breaks": that is how the day begins, on the night board."""


def reveal(
    outcome: Outcome,
    labels: Mapping[str, SeatLabel],
    channel_points_note: str | None = None,
    game_id: int | None = None,
    words: Words = ENGLISH,
) -> Screen:
    """``game_id``: offer *Play again*, which opens the next table with the same people."""
    w = words
    name: Namer = partial(seat_name, labels)
    parts = [
        [w._("*The night*"), *_night_story(outcome, labels, w)],
        [w._("*The cards*"), *_cards(outcome, name, w)],
        [w._("*The vote*"), *_ballots(outcome, name, w)],
        [w._("*The result*"), *_result(outcome, name, w)],
        [w._("*Points*"), *_points(outcome, name, w)],
    ]
    blocks: list[Json] = [header(w._(REVEAL_HEADER))]
    for number, lines in enumerate(parts):
        if number:
            blocks.append(divider())
        blocks += sections(lines)
    if channel_points_note:
        blocks.append(context(channel_points_note))
    if game_id is not None:
        again = button(w._("Play again"), ids.PLAY_AGAIN, ids.ButtonValue(game_id).pack())
        blocks += [
            actions([again]),
            context(
                w._("Opens the next table here with the same people seated; each can *Leave*.")
            ),
        ]
    return Screen(
        text=w._("The Varulv reveal: {headline}", headline=_headline(outcome, w)), blocks=blocks
    )


def dm_game_over(
    channel_id: str,
    dealt: Card,
    dawn: Card,
    points: int,
    won: bool,
    ballot: BallotScore | None = None,
    words: Words = ENGLISH,
    *,
    moved: bool = False,
) -> Screen:
    """The line each person gets privately once the reveal is out, below their night message
    (which still says what they saw and did). ``moved``: their card changed hands in the night,
    so it was not "still" theirs at dawn even when the same kind came back."""
    w = words
    if dealt is dawn and not moved:
        held = w._("You were dealt the *{dealt}* and still held it at dawn.", dealt=dealt)
    else:
        held = w._(
            "You were dealt the *{dealt}* and held the *{dawn}* at dawn.", dealt=dealt, dawn=dawn
        )
    verdict = w._("*You won!*") if won else w._("*Not this time.*")
    if ballot is None:
        scored = w.ngettext("{count} point this game.", "{count} points this game.", points)
    else:
        scored = w.ngettext(
            "{count} point this game: {result}; {why}.",
            "{count} points this game: {result}; {why}.",
            points,
            result=_won(won, w),
            why=_your_ballot_reason(ballot, w),
        )
    blocks: list[Json] = [section(f"{verdict} {held} {scored}")]
    blocks.append(context(w._("The whole story is in <#{channel}>.", channel=channel_id)))
    return Screen(
        text=w._("The Varulv game in <#{channel}> is over.", channel=channel_id), blocks=blocks
    )


def _headline(outcome: Outcome, w: Words) -> str:
    match outcome.result.winning_team:
        case Team.VILLAGE:
            return w._("the village wins.")
        case Team.WEREWOLF:
            return w._("the werewolf team wins.")
    return w._("nobody wins.")


def _night_story(outcome: Outcome, labels: Mapping[str, SeatLabel], w: Words) -> Iterator[str]:
    name: Namer = partial(seat_name, labels)
    steps = outcome.night.steps
    wolves = [step for step in steps if step.card is Card.WEREWOLF]
    if not wolves:
        yield w._(":wolf: No one was dealt a Werewolf.")
    elif len(wolves) > 1:
        pack = and_list([name(step.seat) for step in wolves], w)
        yield w._(":wolf: {pack} woke as Werewolves and saw each other.", pack=pack)
    for step in steps:
        if step.card is Card.WEREWOLF and len(wolves) > 1:
            continue  # told together above
        yield _step(step, outcome, labels, w)
    yield from _sides(outcome, name, w)


def _sides(outcome: Outcome, name: Namer, w: Words) -> Iterator[str]:
    """What the night did to the teams: each exchange that moved someone to the other side,
    then, when several did, who was on the werewolf side at dawn."""
    moves = outcome.night.moves
    changing = [move for move in moves if move.changes_sides]
    if moves and not changing:
        yield w._("_No one changed sides in the night: the cards that moved stayed on their team._")
    for move in changing:
        first, second = name(move.first), name(move.second)
        went = w._(
            "so {first} went over to the {first_team} side and {second} to the {second_team} side",
            first=first,
            second=second,
            first_team=team_name(move.first_card.team, w),
            second_team=team_name(move.second_card.team, w),
        )
        if move.by == move.first:  # the Robber took the card
            yield w._(
                "_{first} took the {took} from {second}, {went}, holding the {left}._",
                first=first,
                took=move.first_card,
                second=second,
                went=went,
                left=move.second_card,
            )
        else:
            yield w._(
                "_{by}'s swap gave {first} the {first_card} and {second} the {second_card}, "
                "{went}._",
                by=name(move.by),
                first=first,
                first_card=move.first_card,
                second=second,
                second_card=move.second_card,
                went=went,
            )
    if len(changing) > 1:
        dawn = outcome.night.dawn
        wolves = [name(seat) for seat in outcome.deal.seats if dawn[seat].team is Team.WEREWOLF]
        if not wolves:
            yield w._("_So at dawn no one at the table was on the werewolf side._")
        else:
            yield w._(
                "_So at dawn the werewolf side was {wolves}; everyone else played for the "
                "village._",
                wolves=and_list(wolves, w),
            )


def _step(step: NightStep, outcome: Outcome, labels: Mapping[str, SeatLabel], w: Words) -> str:
    """One seat's turn, named by the card it was dealt, with what it did and saw."""
    who = seat_name(labels, step.seat)
    centre = outcome.night.center
    match step.card, step.choice:
        case Card.WEREWOLF, Peek(index):
            if index == 0:
                return w._(
                    ":wolf: {who} woke as the lone Werewolf and peeked at the left centre "
                    "card: *{card}*.",
                    who=who,
                    card=centre[index],
                )
            return w._(
                ":wolf: {who} woke as the lone Werewolf and peeked at the right centre card: "
                "*{card}*.",
                who=who,
                card=centre[index],
            )
        case Card.WEREWOLF, _:
            return w._(":wolf: {who} woke as the lone Werewolf and did not peek.", who=who)
        case Card.MINION, _:
            wolves = outcome.deal.dealt_werewolves()
            if not wolves:
                return w._(
                    ":smiling_imp: {who}, the Minion, woke to find no werewolf at the table.",
                    who=who,
                )
            seen = and_list([seat_name(labels, wolf) for wolf in wolves], w)
            return w._(
                ":smiling_imp: {who}, the Minion, saw the werewolves: {seen}.", who=who, seen=seen
            )
        case Card.SEER, LookAtSeat(seat):
            return w._(
                ":crystal_ball: {who}, the Seer, looked at {seat}'s card: *{card}*.",
                who=who,
                seat=seat_name(labels, seat),
                card=outcome.deal.dealt[seat],
            )
        case Card.SEER, LookAtCenter():
            return w._(
                ":crystal_ball: {who}, the Seer, looked at both centre cards: *{left}* and "
                "*{right}*.",
                who=who,
                left=centre[0],
                right=centre[1],
            )
        case Card.SEER, _:
            return w._(":crystal_ball: {who}, the Seer, did not look.", who=who)
        case Card.ROBBER, Rob(seat):
            return w._(
                ":moneybag: {who}, the Robber, took {seat}'s card: the *{card}*.",
                who=who,
                seat=seat_name(labels, seat),
                card=outcome.deal.dealt[seat],
            )
        case Card.ROBBER, _:
            return w._(":moneybag: {who}, the Robber, robbed no one.", who=who)
        case Card.TROUBLEMAKER, Swap(first, second):
            return w._(
                ":twisted_rightwards_arrows: {who}, the Troublemaker, swapped {first}'s and "
                "{second}'s cards.",
                who=who,
                first=seat_name(labels, first),
                second=seat_name(labels, second),
            )
        case Card.TROUBLEMAKER, _:
            return w._(
                ":twisted_rightwards_arrows: {who}, the Troublemaker, swapped no cards.", who=who
            )
        case Card.INSOMNIAC, _:
            woke = outcome.night.dawn[step.seat]
            if woke is Card.INSOMNIAC:
                return w._(
                    ":owl: {who}, the Insomniac, woke at the end of the night still the Insomniac.",
                    who=who,
                )
            return w._(
                ":owl: {who}, the Insomniac, woke at the end of the night as the *{card}*.",
                who=who,
                card=woke,
            )
    # only reached if a new waking card is added
    return w._("{who}, the {card}, woke.", who=who, card=step.card)


def _cards(outcome: Outcome, name: Namer, w: Words) -> Iterator[str]:
    for seat in outcome.deal.seats:
        dealt, dawn = outcome.deal.dealt[seat], outcome.night.dawn[seat]
        if dealt is dawn and not outcome.night.changed_hands(seat):
            yield w._("{seat}: *{card}* all night", seat=name(seat), card=dawn)
        else:
            yield f"{name(seat)}: {dealt} → *{dawn}*"
    left, right = outcome.night.center
    yield w._("Centre: *{left}* (left) and *{right}* (right)", left=left, right=right)


def _ballots(outcome: Outcome, name: Namer, w: Words) -> Iterator[str]:
    nobody = w._("nobody")
    for seat in outcome.deal.seats:
        if seat not in outcome.ballots:
            yield w._("{seat} did not vote", seat=name(seat))
            continue
        target = outcome.ballots[seat]
        yield f"{name(seat)} → {nobody if target is None else name(target)}"
    counts = sorted(outcome.tally.votes.items(), key=lambda item: -item[1])
    tally = [f"{name(seat)} {count}" for seat, count in counts]
    if outcome.tally.nobody:
        tally.append(f"{nobody} {outcome.tally.nobody}")
    yield w._("Tally: {tally}", tally=", ".join(tally) if tally else w._("no ballots"))


def _result(outcome: Outcome, name: Namer, w: Words) -> Iterator[str]:
    dead = outcome.tally.dead
    if not dead:
        yield w._("No one died.")
    for seat in dead:
        yield w._(
            ":skull: {seat} died, holding the *{card}*.",
            seat=name(seat),
            card=outcome.night.dawn[seat],
        )
    why = _why_they_died(outcome, name, w)
    if why:
        yield why
    result = outcome.result
    winners = and_list([name(seat) for seat in result.winners], w) or w._("no one at the table")
    match result.winning_team:
        case Team.VILLAGE:
            yield w._(":trophy: *The village wins:* {winners}.", winners=winners)
        case Team.WEREWOLF:
            yield w._(":trophy: *The werewolf team wins:* {winners}.", winners=winners)
        case None:
            yield w._("*Nobody wins.*")


def _why_they_died(outcome: Outcome, name: Namer, w: Words) -> str | None:
    """One sentence when the count's rule, not a clear majority, decided who died: single
    votes, a tie, or Nobody holding level with the most."""
    counted = outcome.tally
    dead = counted.dead
    match verdict(counted):
        case Verdict.ONE_VOTE:
            return w._(
                "One vote was enough: {seat} had the only vote and Nobody had none.",
                seat=name(dead[0]),
            )
        case Verdict.SINGLE_VOTES if len(dead) == len(outcome.deal.seats):
            return w._("Every seat had one vote and Nobody none: all tied, so all died.")
        case Verdict.SINGLE_VOTES:
            return w._(
                "{dead} had one vote each, no one had more and Nobody had none: all tied, so "
                "all died.",
                dead=and_list([name(seat) for seat in dead], w),
            )
        case Verdict.TIE:
            tied = and_list([name(seat) for seat in dead], w)
            top = counted.votes[dead[0]]
            if len(dead) == 2:
                return w._(
                    "{dead} tied on {count} votes each, more than Nobody had, so both died.",
                    dead=tied,
                    count=top,
                )
            return w._(
                "{dead} tied on {count} votes each, more than Nobody had, so all of them died.",
                dead=tied,
                count=top,
            )
        case Verdict.NOBODY_HELD:
            return w.ngettext(
                "Nobody had {count} vote, at least as many as any player: no one dies unless "
                "someone has more votes than Nobody.",
                "Nobody had {count} votes, at least as many as any player: no one dies unless "
                "someone has more votes than Nobody.",
                counted.nobody,
            )
    return None


def _points(outcome: Outcome, name: Namer, w: Words) -> Iterator[str]:
    """Every seat's points with their reason, zero included: its win or loss, and its ballot."""
    winners = set(outcome.result.winners)
    for seat in outcome.deal.seats:
        points = outcome.result.points[seat]
        yield w.ngettext(
            "{seat}: *{count} point* ({result}; {why})",
            "{seat}: *{count} points* ({result}; {why})",
            points,
            seat=name(seat),
            result=_won(seat in winners, w),
            why=_ballot_reason(ballot_score(outcome, seat), w),
        )
