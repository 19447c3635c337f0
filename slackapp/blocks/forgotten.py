"""The answer to ``/varulv forget me``, and the name a forgotten person's seat takes."""

from __future__ import annotations

from slackapp.blocks.screen import and_list
from slackapp.blocks.words import N_, Words, words
from slackapp.game.erasure import Forgotten, StillSeated
from slackapp.game.lines import Language

ERASED_NAME = N_("a former player")
"""The name of a forgotten person's seat in each game they played, in the game's language."""
STILL_SEATED = N_(
    "You are seated at a table in {where} that has not ended, and it needs your seat until it "
    "does: nothing was erased. Press *Leave* while it is still taking seats, or ask again once "
    "it is over (`/varulv` there says who can end it sooner)."
)


def erased_name(language: Language) -> str:
    """A forgotten person's name in a game played in ``language``."""
    return words(language)._(ERASED_NAME)


def forget_me_answer(done: Forgotten | StillSeated, w: Words, organisation: bool = False) -> str:
    """What ``/varulv forget me`` tells the person, in the words of the channel where they
    asked; ``organisation``: it erased them at every table of the organisation (Varulv is
    installed on all of it)."""
    if isinstance(done, StillSeated):
        return w._(STILL_SEATED, where=", ".join(f"<#{c}>" for c in done.channels))
    return " ".join(forgotten_lines(done, w, organisation))


def forgotten_lines(done: Forgotten, w: Words, organisation: bool = False) -> list[str]:
    """What ``/varulv forget me`` erased, naming only what there was."""
    erased = []
    if done.score_channels:
        channels = w.ngettext("{count} channel", "{count} channels", done.score_channels)
        erased.append(w._("your points and wins in {channels}", channels=channels))
    if done.name:
        erased.append(w._("your name as Varulv knew it"))
    if done.regular_channels:
        channels = w.ngettext("{count} channel", "{count} channels", done.regular_channels)
        erased.append(w._("your *I usually play* marks in {channels}", channels=channels))
    if organisation and erased:
        said = w._(
            "Varulv has forgotten you in this organisation. Erased: {what}.",
            what=and_list(erased, w),
        )
    elif organisation and done.games:
        said = w._("Varulv has forgotten you in this organisation.")
    elif organisation:
        said = w._(
            "Varulv has forgotten you in this organisation: it kept nothing of yours to erase."
        )
    elif erased:
        said = w._(
            "Varulv has forgotten you in this workspace. Erased: {what}.", what=and_list(erased, w)
        )
    elif done.games:
        said = w._("Varulv has forgotten you in this workspace.")
    else:
        said = w._("Varulv has forgotten you in this workspace: it kept nothing of yours to erase.")
    lines = [said]
    if done.games:
        lines.append(
            w.ngettext(
                "In {count} finished game you are now “{erased}”: its outcome stays, with no name "
                "or id of yours.",
                "In {count} finished games you are now “{erased}”: their outcomes stay, with no "
                "name or id of yours.",
                done.games,
                erased=w._(ERASED_NAME),
            )
        )
    lines.append(
        w._(
            "Messages Slack already shows stay as Slack keeps them. A game you join from now on "
            "is remembered again."
        )
    )
    return lines
