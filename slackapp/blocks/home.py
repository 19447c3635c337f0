"""The App Home tab: the cards, how a game goes, your record and your channels' boards."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from slack_sdk.models.views import View

from slackapp.blocks import ids
from slackapp.blocks.addresses import support_context
from slackapp.blocks.help import DAWN_CARD, HARD_FOR, ScoreRow, card_lines, ranking
from slackapp.blocks.kit import Json, actions, button, context, divider, header, section
from slackapp.blocks.screen import sections
from slackapp.blocks.words import ENGLISH, Words
from slackapp.game.seasons import Standing
from slackapp.game.vote import WEREWOLF_BALLOT_POINTS, WIN_POINTS

HOME_BOARD_ROWS = 10
HOME_BOARDS = 15
"""Slack allows 100 blocks in a view; each board takes up to five (its season, its rows and
*I usually play*)."""


def how_a_game_goes(words: Words = ENGLISH) -> list[str]:
    """The steps, with no phase length: each channel sets its own (``/varulv settings``)."""
    w = words
    return [
        w._("1. Someone types `/varulv` in a channel. 3 to 10 seats; bots fill up to 5."),
        w._("2. *Night*: Varulv sends you your card in a DM. Act if it wakes, then confirm."),
        w._(
            "3. *Day*: talk, out loud, until the day's time is up. Varulv names who speaks "
            "first; press “Heard enough” when you're done: the vote opens early once more than "
            "half of the people (bots are not counted) have."
        ),
        w._("4. *Vote*: one sealed ballot each, for another player or for Nobody."),
        w._(
            "5. *Reveal*: the card you hold at dawn decides your team. Winners get {win} "
            "points, a ballot on a werewolf {ballot}.",
            win=WIN_POINTS,
            ballot=WEREWOLF_BALLOT_POINTS,
        ),
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
    words: Words = ENGLISH,
    support_url: str | None = None,
) -> View:
    """``record`` is the viewer's (games, wins, points); ``boards`` (channel id, rows) pairs,
    all time; ``seasons`` each board channel's season now, and whether the viewer usually
    plays there. ``words``: the language of the viewer's newest table. ``support_url``: where
    to ask for help, linked when set."""
    w = words
    games, wins, points = record
    if games:
        mine = ", ".join(
            [
                w.ngettext("{count} game", "{count} games", games),
                w.ngettext("{count} win", "{count} wins", wins),
                w.ngettext("{count} point", "{count} points", points),
            ]
        )
        heading = w._("*Your record*")
        your_record = f"{heading}\n{mine}"
    else:
        your_record = w._(
            "*Your record*\nNo games yet. Type `/varulv` in a channel to set a table."
        )
    blocks: list[Json] = [
        header("Varulv"),
        section(w._("One night of werewolf for a fika break: one night, one day, one vote.")),
        section(your_record),
        divider(),
        section("\n".join([w._("*How a game goes*"), *how_a_game_goes(w)])),
        context(
            w._(
                "`/varulv settings` sets a channel's phase lengths, whether bots may sit in, "
                "its leaderboard seasons and its language."
            )
        ),
        section(w._(HARD_FOR)),
        section(w._(DAWN_CARD)),
        divider(),
        *sections([w._("*The cards*"), *card_lines(w)]),
        *support_context(support_url, w),
    ]
    if boards:
        blocks += [divider(), header(w._("Leaderboards"))]
    for channel_id, rows in boards[:HOME_BOARDS]:
        # This season first, then all time: the order `/varulv score` shows them in.
        season = (seasons or {}).get(channel_id)
        if season is not None:
            blocks += _season_blocks(user_id, channel_id, season, w)
        else:
            blocks.append(section(f"*<#{channel_id}>*"))
        lines = list(ranking(rows, HOME_BOARD_ROWS, you=user_id, words=w)) or [
            w._("_No games finished yet._")
        ]
        blocks += sections([w._("*All time*"), *lines])
    if len(boards) > HOME_BOARDS:
        more = len(boards) - HOME_BOARDS
        blocks.append(
            context(w.ngettext("And {count} more channel.", "And {count} more channels.", more))
        )
    return View(type="home", blocks=blocks)


def _season_blocks(user_id: str, channel_id: str, season: ChannelSeason, w: Words) -> list[Json]:
    """The viewer's place this season, and their *I usually play* toggle for the channel."""
    mine = next((row for row in season.standings if row.key == user_id), None)
    if mine:
        where = w.ngettext(
            "place {rank} with {count} point",
            "place {rank} with {count} points",
            mine.points,
            rank=mine.rank,
        )
    else:
        where = w._("no games yet")
    said = w._("I usually play here ✓") if season.regular else w._("I usually play here")
    # What a screen reader says: the visible words first, then what pressing does, whole
    # within Slack's 75 characters in every language.
    if season.regular:
        label = w._("{said}: the standing table mentions me; press to undo", said=said)
    else:
        label = w._("{said}: press to be mentioned when the standing table opens", said=said)
    toggle = button(said, ids.USUALLY_PLAY, ids.ButtonValue(0, channel_id).pack(), label=label)
    this_season = w._("This season ({name}): you, {where}.", name=season.name, where=where)
    return [
        section(f"*<#{channel_id}>*\n{this_season}"),
        actions([toggle]),
    ]


def reinstall_view(answer: str) -> View:
    """The Home tab in a workspace whose token Slack will no longer refresh: ``answer`` says
    Varulv must be reinstalled, and where (English, as it is given before any language is
    read: ``slackapp.authorize.reinstall_answer``)."""
    return View(type="home", blocks=[header("Varulv"), section(answer)])


def reinstall_modal(answer: str, words: Words = ENGLISH) -> View:
    """A modal submitted in a workspace whose token Slack will no longer refresh, turned into
    ``answer`` (in the channel's words): Varulv must be reinstalled, and where."""
    return View(
        type="modal",
        title="Varulv",
        close=words._("Close"),
        blocks=[section(answer)],
    )
