"""The line a channel gets when its season ends: the winner and the season's awards."""

from __future__ import annotations

from babel.dates import get_month_names

from slackapp.blocks.screen import and_list
from slackapp.blocks.words import ENGLISH, Words
from slackapp.game.seasons import Season, SeasonAward, SeasonLength, WrapUp


def season_name(season: Season, words: Words = ENGLISH) -> str:
    """``December 2026``, ``October to December 2026``: the months named in the words' own
    language (Babel knows every language's month names)."""
    months = get_month_names("wide", context="stand-alone", locale=words.language.value)
    first = months[season.first_month]
    if season.length is SeasonLength.MONTH:
        return f"{first} {season.year}"
    last = months[season.first_month + 2]
    return words._("{first} to {last} {year}", first=first, last=last, year=season.year)


def _award(award: SeasonAward, w: Words) -> tuple[str, str]:
    """The award's title and deed; the rules name them in English."""
    match award.title:
        case "Wolf hunter":
            deed = w.ngettext(
                "named a werewolf on {count} ballot",
                "named a werewolf on {count} ballots",
                award.count,
            )
            return w._("Wolf hunter"), deed
        case "Changeling":
            deed = w.ngettext(
                "won {count} game after their card moved in the night",
                "won {count} games after their card moved in the night",
                award.count,
            )
            return w._("Changeling"), deed
        case "Pack leader":
            deed = w.ngettext(
                "won {count} game for the werewolves",
                "won {count} games for the werewolves",
                award.count,
            )
            return w._("Pack leader"), deed
    return award.title, award.deed


def wrap_up_text(wrap: WrapUp, words: Words = ENGLISH) -> str:
    w = words
    mentions = and_list([f"<@{key}>" for key in wrap.winners], w)
    lines = [
        w.ngettext(
            ":trophy: *{season} is over*: {count} game played.",
            ":trophy: *{season} is over*: {count} games played.",
            wrap.games,
            season=season_name(wrap.season, w),
        )
    ]
    if wrap.winners:
        if len(wrap.winners) > 1:
            won = w.ngettext(
                "{winners} share the season with {count} point. Well played!",
                "{winners} share the season with {count} points. Well played!",
                wrap.points,
                winners=mentions,
            )
        else:
            won = w.ngettext(
                "{winners} wins the season with {count} point. Well played!",
                "{winners} wins the season with {count} points. Well played!",
                wrap.points,
                winners=mentions,
            )
        lines.append(won)
    else:
        lines.append(
            w._("Nobody scored a point: the werewolves must have been very good at hiding.")
        )
    for award in wrap.awards:
        holders = and_list([f"<@{key}>" for key in award.holders], w)
        title, deed = _award(award, w)
        lines.append(
            w._("• *{title}*: {holders}, who {deed}.", title=title, holders=holders, deed=deed)
        )
    lines.append(w._("A new season starts now, with everyone on zero. `/varulv score` shows it."))
    return "\n".join(lines)
