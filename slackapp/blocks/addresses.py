"""The addresses the screens may link, as the deployment set them (``VARULV_SUPPORT_URL``,
``VARULV_SOURCE_URL``)."""

from __future__ import annotations

from dataclasses import dataclass

from slackapp.blocks.kit import Json, context
from slackapp.blocks.words import ENGLISH, Words


@dataclass(frozen=True)
class Addresses:
    support_url: str | None = None
    """Where people ask for help: ``/varulv help`` and the Home tab link it."""
    source_url: str | None = None
    """The project's published source, with the referee file in its release."""


NO_ADDRESSES = Addresses()


def support_context(support_url: str | None, words: Words = ENGLISH) -> list[Json]:
    """The line that links the support contact (none when the deployment set none)."""
    if not support_url:
        return []
    shown = support_url.removeprefix("mailto:")
    said = words._(
        "A question, a problem, an idea? Write to <{url}|{shown}>.", url=support_url, shown=shown
    )
    return [context(said)]
