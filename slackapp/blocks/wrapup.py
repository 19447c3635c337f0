"""The line a channel gets when its season ends: the winner and the season's awards."""

from __future__ import annotations

from slackapp.blocks.screen import and_list, plural
from slackapp.game.seasons import WrapUp


def wrap_up_text(wrap: WrapUp) -> str:
    mentions = and_list([f"<@{key}>" for key in wrap.winners])
    lines = [f":trophy: *{wrap.season.name} is over*: {plural(wrap.games, 'game')} played."]
    if wrap.winners:
        share = "share the season" if len(wrap.winners) > 1 else "wins the season"
        lines.append(f"{mentions} {share} with {plural(wrap.points, 'point')}. Well played!")
    else:
        lines.append("Nobody scored a point: the werewolves must have been very good at hiding.")
    for award in wrap.awards:
        holders = and_list([f"<@{key}>" for key in award.holders])
        lines.append(f"• *{award.title}*: {holders}, who {award.deed}.")
    lines.append("A new season starts now, with everyone on zero. `/varulv score` shows it.")
    return "\n".join(lines)
