"""The App Home tab: the cards, how a game goes, your record and your channels' boards."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from slack_sdk.models.blocks import ActionsBlock, Block, DividerBlock, HeaderBlock
from slack_sdk.models.views import View

from slackapp.blocks import ids
from slackapp.blocks.help import DAWN_CARD, HARD_FOR, ScoreRow, card_lines, ranking
from slackapp.blocks.screen import button, context, plural, section, sections
from slackapp.game.seasons import Standing
from slackapp.game.vote import WEREWOLF_BALLOT_POINTS, WIN_POINTS

HOME_BOARD_ROWS = 10
HOME_BOARDS = 15
"""Slack allows 100 blocks in a view; each board takes up to five (its season, its rows and
*I usually play*)."""


def how_a_game_goes() -> list[str]:
    """The steps, with no phase length: each channel sets its own (``/varulv settings``)."""
    return [
        "1. Someone types `/varulv` in a channel. 3 to 10 seats; bots fill up to 5.",
        "2. *Night*: Varulv sends you your card in a DM. Act if it wakes, then confirm.",
        "3. *Day*: talk, out loud, until the day's time is up. Varulv names who speaks first; "
        "press “Heard enough” when you're done: the vote opens early once more than half of "
        "the people (bots are not counted) have.",
        "4. *Vote*: one sealed ballot each, for another player or for nobody.",
        "5. *Reveal*: the card you hold at dawn decides your team. Winners get "
        f"{WIN_POINTS} points, a ballot on a werewolf {WEREWOLF_BALLOT_POINTS}.",
    ]


@dataclass(frozen=True)
class ChannelSeason:
    name: str
    standings: Sequence[Standing]
    regular: bool
    """The viewer marked *I usually play* there."""


def home_view(
    user_id: str,
    record: tuple[int, int, int],
    boards: Sequence[tuple[str, Sequence[ScoreRow]]],
    seasons: Mapping[str, ChannelSeason] | None = None,
) -> View:
    """``record`` is the viewer's (games, wins, points); ``boards`` (channel id, rows) pairs,
    all time; ``seasons`` each board channel's season now, and whether the viewer usually
    plays there."""
    games, wins, points = record
    blocks: list[Block] = [
        HeaderBlock(text="Varulv"),
        section("One night of werewolf for a fika break: one night, one day, one vote."),
        section(
            f"*Your record*\n{plural(games, 'game')}, {plural(wins, 'win')}, "
            f"{plural(points, 'point')}"
            if games
            else "*Your record*\nNo games yet. Type `/varulv` in a channel to set a table."
        ),
        DividerBlock(),
        section("\n".join(["*How a game goes*", *how_a_game_goes()])),
        context("`/varulv settings` sets a channel's phase lengths, and whether bots may sit in."),
        section(HARD_FOR),
        section(DAWN_CARD),
        DividerBlock(),
        *sections(["*The cards*", *card_lines()]),
    ]
    if boards:
        blocks += [DividerBlock(), HeaderBlock(text="Leaderboards")]
    for channel_id, rows in boards[:HOME_BOARDS]:
        # This season first, then all time: the order `/varulv score` shows them in.
        season = (seasons or {}).get(channel_id)
        if season is not None:
            blocks += _season_blocks(user_id, channel_id, season)
        else:
            blocks.append(section(f"*<#{channel_id}>*"))
        lines = list(ranking(rows, HOME_BOARD_ROWS, you=user_id)) or ["_No games finished yet._"]
        blocks += sections(["*All time*", *lines])
    if len(boards) > HOME_BOARDS:
        blocks.append(context(f"And {plural(len(boards) - HOME_BOARDS, 'more channel')}."))
    return View(type="home", blocks=blocks)


def _season_blocks(user_id: str, channel_id: str, season: ChannelSeason) -> list[Block]:
    """The viewer's place this season, and their *I usually play* toggle for the channel."""
    mine = next((row for row in season.standings if row.key == user_id), None)
    where = f"place {mine.rank} with {plural(mine.points, 'point')}" if mine else "no games yet"
    words = "I usually play here ✓" if season.regular else "I usually play here"
    label = f"I usually play in this channel: its standing table mentions me ({words})"
    toggle = button(words, ids.USUALLY_PLAY, ids.ButtonValue(0, channel_id).pack(), label=label)
    return [
        section(f"*<#{channel_id}>*\nThis season ({season.name}): you, {where}."),
        ActionsBlock(elements=[toggle]),
    ]
