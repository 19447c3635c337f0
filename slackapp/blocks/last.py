"""``/varulv last``: the channel's last reveal again, privately, with the whole game to check."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from slackapp.blocks import ids
from slackapp.blocks.checking import fingerprint_recipe, get_the_referee
from slackapp.blocks.kit import actions, button, context, escaped
from slackapp.blocks.labels import SeatLabel
from slackapp.blocks.reveal import reveal
from slackapp.blocks.screen import Screen
from slackapp.blocks.words import ENGLISH, N_, Words
from slackapp.game.outcome import Outcome

NONE_YET = N_("No game has been played to the end in this channel yet.")


def last_reveal(
    game_id: int,
    outcome: Outcome,
    labels: Mapping[str, SeatLabel],
    words: Words = ENGLISH,
    source_url: str | None = None,
) -> Screen:
    w = words
    shown = reveal(outcome, labels, words=w)
    value = ids.ButtonValue(game_id).pack()
    blocks = [
        *shown.blocks,
        actions(
            [
                button(
                    w._("The whole game, for the referee"),
                    ids.GAME_JSON,
                    value,
                    label=w._("The whole game as the referee's JSON input"),
                )
            ]
        ),
        context(
            w._(
                "Anyone can check it, without this app: {how}",
                how=get_the_referee(w, source_url),
            )
        ),
    ]
    return Screen(text=w._("The last game here. {reveal}", reveal=shown.text), blocks=blocks)


def game_json(
    data: Mapping[str, Any], words: Words = ENGLISH, source_url: str | None = None
) -> str:
    """The referee's input as a message: plain text holds far more than a block may. Its JSON
    is written into mrkdwn as it reads (a name may hold ``<``, ``>`` or ``&``), so Slack shows
    it exactly and a copy of it is the game."""
    w = words
    written = json.dumps(data, indent=1, ensure_ascii=False)
    shown = data.get("fingerprint")
    night = data.get("night_fingerprint")
    said = w._("The whole game, as the referee reads it.")
    if shown and night:
        checks = w._(
            "It carries the salt that checks the two fingerprints the channel saw: the "
            "deal's, `{fingerprint}`, and the night's, `{night}`.",
            fingerprint=shown,
            night=night,
        )
        said = f"{said} {checks} {fingerprint_recipe(w)}"
    how = w._(
        "To check it: {how} (Its key `center` is the centre.)",
        how=get_the_referee(w, source_url),
    )
    return f"{said} {how}\n```\n{escaped(written)}\n```"
