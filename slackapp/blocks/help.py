"""``/varulv help`` and ``/varulv score``: the game on one screen, and a channel's leaderboard."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from slack_sdk.models.blocks import Block, DividerBlock, HeaderBlock

from slackapp.blocks.screen import Screen, context, plural, section, sections
from slackapp.game.cards import Card
from slackapp.game.seasons import Standing
from slackapp.game.vote import WEREWOLF_BALLOT_POINTS, WIN_POINTS

LEADERBOARD_ROWS = 20
"""A channel message stays readable; the App Home shows fewer."""

COMMANDS = (
    "`/varulv` set a table in this channel",
    "`/varulv help` this screen",
    "`/varulv settings` this channel's phase lengths, whether bots may fill seats, its seasons",
    "`/varulv schedule` a standing table: the lobby opens by itself on the days you choose",
    "`/varulv stop` end the game in this channel",
    "`/varulv score` this channel's leaderboard, this season and all time",
    "`/varulv last` the last game here again, with everything for anyone to check",
)

ScoreRow = tuple[str, int, int, int]
"""(user id, games, wins, points)."""


def game_in_brief(day_minutes: int = 5) -> str:
    return (
        f"*One night, one day of {plural(day_minutes, 'minute')}, one vote.* "
        "At night every card wakes in turn and cards may change hands. By day you talk it "
        "out, out loud. Then everyone votes, and the card you hold *at dawn* decides your "
        f"team. Winners get {WIN_POINTS} points; a ballot on a werewolf gets "
        f"{WEREWOLF_BALLOT_POINTS}."
    )


def card_lines() -> list[str]:
    """The seven cards, each with its team and its one line of rules."""
    return [f"*{card}* ({card.team} team): {card.line}" for card in Card]


def help_screen(day_minutes: int = 5) -> Screen:
    blocks: list[Block] = [
        HeaderBlock(text="How to play Varulv"),
        section(game_in_brief(day_minutes)),
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
    """Numbered rows by points, then wins; ``you`` is marked so a viewer finds themself."""
    ordered = sorted(rows, key=lambda row: (-row[3], -row[2], row[1]))
    for place, (user_id, games, wins, points) in enumerate(ordered[:limit], start=1):
        mark = " ← you" if user_id == you else ""
        yield (
            f"{place}. <@{user_id}>: *{plural(points, 'point')}*, "
            f"{plural(wins, 'win')} in {plural(games, 'game')}{mark}"
        )
