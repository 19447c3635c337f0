"""``/varulv help`` and ``/varulv score``: the game on one screen, and a channel's leaderboard."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from slack_sdk.models.blocks import Block, DividerBlock, HeaderBlock

from slackapp.blocks.ballot import HOW_THE_VOTE_COUNTS
from slackapp.blocks.screen import Screen, context, plural, section, sections
from slackapp.config import COMMAND, COMMAND_WORDS
from slackapp.game.cards import Card
from slackapp.game.seasons import Standing, rank_order
from slackapp.game.vote import WEREWOLF_BALLOT_POINTS, WIN_POINTS

LEADERBOARD_ROWS = 20
"""A channel message stays readable; the App Home shows fewer."""

WHAT_EACH_WORD_DOES = {
    "help": "this screen",
    "settings": "this channel's phase lengths, whether bots may fill seats, its seasons",
    "schedule": "a standing table: the lobby opens by itself on the days you choose",
    "stop": "end the game in this channel",
    "score": "this channel's leaderboard, this season and all time",
    "last": "the last game here again, with everything for anyone to check",
    "forget me": "erase your scores and name; your past games keep you anonymously",
}
COMMANDS = (
    f"`{COMMAND}` set a table in this channel",
    *(f"`{COMMAND} {word}` {WHAT_EACH_WORD_DOES[word]}" for word in COMMAND_WORDS),
)

ScoreRow = tuple[str, int, int, int]
"""(user id, games, wins, points)."""


def game_in_brief(lengths: str | None = None) -> str:
    """The game in a few lines; ``lengths`` names this channel's phase lengths, if known
    (a number stated without them would be wrong wherever a channel set its own)."""
    here = f" In this channel: {lengths}." if lengths else ""
    return (
        "*One night, one day, one vote.* "
        "At night every card wakes in turn and cards may change hands. By day you talk it "
        "out, out loud. Then everyone votes, and the card you hold *at dawn* decides your "
        f"team. Winners get {WIN_POINTS} points; a ballot on a werewolf gets "
        f"{WEREWOLF_BALLOT_POINTS}.{here}"
    )


DAWN_CARD = (
    "*The card you hold at dawn is your team*\n"
    "The card you were dealt decides what you do at night; the card in front of you when the "
    "night ends decides which side you are on, and nobody tells you if it moved. For example: "
    "Tove is dealt the Robber and takes Nils's card, a Werewolf. Tove now plays for the "
    "werewolves and wins if no Werewolf dies; Nils, who woke up holding the Robber, plays for "
    "the village without knowing it."
)

HARD_FOR = (
    "*Who this game is hard for*\n"
    "Of all the games on the shelf, this one asks the most of whoever is least comfortable "
    "arguing out loud: the day is nothing but talk, and a quiet voice is easily talked over. "
    "So at dawn Varulv names one person to speak first and suggests one round of claims, each "
    "person in turn saying which card they hold and what they saw, before the free talk. "
    "Nobody has to fight for the first word, and everyone is heard once."
)


THE_VOTE = (
    "*The vote*\n"
    "Everyone casts one sealed ballot, for another player or for Nobody, and may change it "
    f"until the vote closes. {HOW_THE_VOTE_COUNTS} There is no minimum of two votes: if every "
    "seat gets one ballot and no one votes for Nobody, every seat dies. To spare everyone, "
    "vote for Nobody."
)


def card_lines() -> list[str]:
    """The seven cards, each with its team and its one line of rules."""
    return [f"*{card}* ({card.team} team): {card.line}" for card in Card]


def help_screen(lengths: str | None = None) -> Screen:
    blocks: list[Block] = [
        HeaderBlock(text="How to play Varulv"),
        section(game_in_brief(lengths)),
        section(DAWN_CARD),
        section(HARD_FOR),
        section(THE_VOTE),
        DividerBlock(),
        *sections(["*The cards*", *card_lines()]),
        DividerBlock(),
        section("\n".join(["*Commands*", *COMMANDS])),
    ]
    return Screen(text="How to play Varulv", blocks=blocks)


def leaderboard(
    channel_id: str,
    rows: Sequence[ScoreRow],
    season: tuple[str, Sequence[Standing]] | None = None,
) -> Screen:
    """The channel's board: this season's (its name and standings), then all time."""
    blocks: list[Block] = [HeaderBlock(text="Varulv leaderboard")]
    if not rows:
        blocks.append(
            section(f"No games finished in <#{channel_id}> yet. Type `/varulv` to set a table!")
        )
        return Screen(text="The Varulv leaderboard", blocks=blocks)
    if season is not None:
        name, standings = season
        lines = list(season_ranking(standings, LEADERBOARD_ROWS)) or ["_No games yet._"]
        blocks += sections([f"*This season: {name}*", *lines])
    blocks += sections([f"*All time in <#{channel_id}>*", *ranking(rows, LEADERBOARD_ROWS)])
    if len(rows) > LEADERBOARD_ROWS:
        blocks.append(context(f"Top {LEADERBOARD_ROWS} of {len(rows)} players."))
    return Screen(text="The Varulv leaderboard", blocks=blocks)


def season_ranking(standings: Sequence[Standing], limit: int) -> Iterator[str]:
    """Rows by rank; people level on points and wins share their place."""
    for standing in standings[:limit]:
        yield (
            f"{standing.rank}. <@{standing.key}>: *{plural(standing.points, 'point')}*, "
            f"{plural(standing.wins, 'win')} in {plural(standing.games, 'game')}"
        )


def ranking(rows: Sequence[ScoreRow], limit: int, you: str | None = None) -> Iterator[str]:
    """Ranked rows by points, then wins, ties sharing a place; ``you`` is marked so a viewer
    finds themself."""
    ordered = sorted(rows, key=lambda row: rank_order(row[0], row[2], row[3]))
    place = 0
    for number, (user_id, games, wins, points) in enumerate(ordered[:limit], start=1):
        previous = ordered[number - 2] if number > 1 else None
        if previous is None or (previous[3], previous[2]) != (points, wins):
            place = number  # equal points and wins share a place: 1, 2, 2, 4
        mark = " ← you" if user_id == you else ""
        yield (
            f"{place}. <@{user_id}>: *{plural(points, 'point')}*, "
            f"{plural(wins, 'win')} in {plural(games, 'game')}{mark}"
        )
