"""``/varulv help`` and ``/varulv score``: the game on one screen, and a channel's leaderboard."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from slackapp.blocks.addresses import support_context
from slackapp.blocks.ballot import HOW_THE_VOTE_COUNTS
from slackapp.blocks.kit import Json, context, divider, header, section
from slackapp.blocks.screen import Screen, sections
from slackapp.blocks.sides import minion_without_werewolves_rule, team_name
from slackapp.blocks.words import ENGLISH, N_, Words
from slackapp.config import COMMAND, COMMAND_WORDS
from slackapp.game.cards import Card
from slackapp.game.seasons import Standing, rank_order
from slackapp.game.vote import WEREWOLF_BALLOT_POINTS, WIN_POINTS

LEADERBOARD_ROWS = 20
"""A channel message stays readable; the App Home shows fewer."""

WHAT_EACH_WORD_DOES = {
    "help": N_("this screen"),
    "settings": N_(
        "this channel's phase lengths, whether bots may fill seats, its seasons, its language "
        "and who may change its table"
    ),
    "schedule": N_("a standing table: the lobby opens by itself on the days you choose"),
    "stop": N_("end the game in this channel"),
    "score": N_("this channel's leaderboard, this season and all time"),
    "last": N_("the last game here again, with everything for anyone to check"),
    "forget me": N_("erase your scores and name; your past games keep you anonymously"),
}


def unknown_word(typed: str, words: Words = ENGLISH) -> str:
    """The answer to ``/varulv`` followed by a word it does not know, echoed as typed, and
    the words it does know (which stay as they are typed, in every language)."""
    known = ", ".join(f"`{COMMAND} {word}`" for word in COMMAND_WORDS)
    unknown = words._("I don't know `{command}`.", command=f"{COMMAND} {typed}")
    usage = words._("Try `{command}` to open a table, or {words}.", command=COMMAND, words=known)
    return f"{unknown} {usage}"


def not_in_a_channel(command: str, words: Words = ENGLISH) -> str:
    """The answer to ``command`` (a table opened, or its settings or standing table) typed in
    a direct message or a group DM, which can hold no table."""
    return words._(
        "Varulv plays in channels, not in direct messages: type `{command}` in a channel, and "
        "add Varulv there first with `/invite @Varulv` if it isn't in it yet.",
        command=command,
    )


def commands(words: Words = ENGLISH) -> list[str]:
    return [
        f"`{COMMAND}` " + words._("set a table in this channel"),
        *(f"`{COMMAND} {word}` " + words._(WHAT_EACH_WORD_DOES[word]) for word in COMMAND_WORDS),
    ]


ScoreRow = tuple[str, int, int, int]
"""(user id, games, wins, points)."""


def game_in_brief(lengths: str | None = None, words: Words = ENGLISH) -> str:
    """The game in a few lines; ``lengths`` names this channel's phase lengths, if known
    (a number stated without them would be wrong wherever a channel set its own)."""
    w = words
    brief = w._(
        "*One night, one day, one vote.* At night every card wakes in turn and cards may change "
        "hands. By day you talk it out, out loud. Then everyone votes, and the card you hold "
        "*at dawn* decides your team. Winners get {win} points; a ballot on a werewolf gets "
        "{ballot}.",
        win=WIN_POINTS,
        ballot=WEREWOLF_BALLOT_POINTS,
    )
    if lengths:
        here = w._("In this channel: {lengths}.", lengths=lengths)
        return f"{brief} {here}"
    return brief


DAWN_CARD = N_(
    "*The card you hold at dawn is your team*\n"
    "The card you were dealt decides what you do at night; the card in front of you when the "
    "night ends decides which side you are on, and nobody tells you if it moved. For example: "
    "Tove is dealt the Robber and takes Nils's card, a Werewolf. Tove now plays for the "
    "werewolves and wins if no Werewolf dies; Nils, who woke up holding the Robber, plays for "
    "the village without knowing it."
)

HARD_FOR = N_(
    "*Who this game is hard for*\n"
    "Of all the games on the shelf, this one asks the most of whoever is least comfortable "
    "arguing out loud: the day is nothing but talk, and a quiet voice is easily talked over. "
    "So at dawn Varulv names one person to speak first and suggests one round of claims, each "
    "person in turn saying which card they hold and what they saw, before the free talk. "
    "Nobody has to fight for the first word, and everyone is heard once."
)


def the_vote(words: Words = ENGLISH) -> str:
    return words._(
        "*The vote*\nEveryone casts one sealed ballot, for another player or for Nobody, and "
        "may change it until the vote closes. {how} There is no minimum of two votes: if every "
        "seat gets one ballot and no one votes for Nobody, every seat dies. To spare everyone, "
        "vote for Nobody.",
        how=words._(HOW_THE_VOTE_COUNTS),
    )


def card_lines(words: Words = ENGLISH) -> list[str]:
    """The seven cards, each with its team and its one line of rules (the names and lines
    stay in English in every language)."""
    lines = []
    for card in Card:
        line = words._(
            "*{card}* ({team} team): {line}",
            card=card,
            team=team_name(card.team, words),
            line=card.line,
        )
        if card is Card.MINION:
            line = f"{line} {minion_without_werewolves_rule(words)}"
        lines.append(line)
    return lines


def help_screen(
    lengths: str | None = None, words: Words = ENGLISH, support_url: str | None = None
) -> Screen:
    w = words
    title = w._("How to play Varulv")
    blocks: list[Json] = [
        header(title),
        section(game_in_brief(lengths, w)),
        section(w._(DAWN_CARD)),
        section(w._(HARD_FOR)),
        section(the_vote(w)),
        divider(),
        *sections([w._("*The cards*"), *card_lines(w)]),
        divider(),
        section("\n".join([w._("*Commands*"), *commands(w)])),
        *support_context(support_url, w),
    ]
    return Screen(text=title, blocks=blocks)


def leaderboard(
    channel_id: str,
    rows: Sequence[ScoreRow],
    season: tuple[str, Sequence[Standing]] | None = None,
    words: Words = ENGLISH,
) -> Screen:
    """The channel's board: this season's (its name and standings), then all time."""
    w = words
    title = w._("The Varulv leaderboard")
    blocks: list[Json] = [header(w._("Varulv leaderboard"))]
    if not rows:
        blocks.append(
            section(
                w._(
                    "No games finished in <#{channel}> yet. Type `/varulv` to set a table!",
                    channel=channel_id,
                )
            )
        )
        return Screen(text=title, blocks=blocks)
    if season is not None:
        name, standings = season
        lines = list(season_ranking(standings, LEADERBOARD_ROWS, w)) or [w._("_No games yet._")]
        blocks += sections([w._("*This season: {name}*", name=name), *lines])
    blocks += sections(
        [
            w._("*All time in <#{channel}>*", channel=channel_id),
            *ranking(rows, LEADERBOARD_ROWS, words=w),
        ]
    )
    if len(rows) > LEADERBOARD_ROWS:
        blocks.append(
            context(w._("Top {top} of {count} players.", top=LEADERBOARD_ROWS, count=len(rows)))
        )
    return Screen(text=title, blocks=blocks)


def record_line(points: int, wins: int, games: int, words: Words = ENGLISH) -> str:
    """``*3 points*, 1 win in 2 games``."""
    w = words
    return w._(
        "*{points}*, {wins} in {games}",
        points=w.ngettext("{count} point", "{count} points", points),
        wins=w.ngettext("{count} win", "{count} wins", wins),
        games=w.ngettext("{count} game", "{count} games", games),
    )


def season_ranking(
    standings: Sequence[Standing], limit: int, words: Words = ENGLISH
) -> Iterator[str]:
    """Rows by rank; people level on points and wins share their place."""
    for standing in standings[:limit]:
        line = record_line(standing.points, standing.wins, standing.games, words)
        yield f"{standing.rank}. <@{standing.key}>: {line}"


def ranking(
    rows: Sequence[ScoreRow], limit: int, you: str | None = None, words: Words = ENGLISH
) -> Iterator[str]:
    """Ranked rows by points, then wins, ties sharing a place; ``you`` is marked so a viewer
    finds themself."""
    ordered = sorted(rows, key=lambda row: rank_order(row[0], row[2], row[3]))
    place = 0
    for number, (user_id, games, wins, points) in enumerate(ordered[:limit], start=1):
        previous = ordered[number - 2] if number > 1 else None
        if previous is None or (previous[3], previous[2]) != (points, wins):
            place = number  # equal points and wins share a place: 1, 2, 2, 4
        mark = " " + words._("← you") if user_id == you else ""
        yield f"{place}. <@{user_id}>: {record_line(points, wins, games, words)}{mark}"
