"""Where a table can be: a channel, never a conversation between people.

Slack sends ``/varulv`` from every conversation a person can type in, a direct message with a
colleague (its id begins with ``D``, and Slack names it ``directmessage``) or a group DM (named
``mpdm-…``) included. Varulv cannot be added to either, so it could never post a lobby there,
and a channel's settings or standing table set there would have nothing to apply to. Varulv's
own direct message with a person is one too: a table there would be one person's.
"""

from __future__ import annotations

import re

DIRECT_MESSAGE_NAME = "directmessage"
"""Slack's ``channel_name`` for a direct message."""
GROUP_DM_PREFIX = "mpdm-"
"""How Slack's ``channel_name`` of a group DM begins."""
GROUP_DM_NAME = re.compile(r"mpdm-\S+--\S+-\d+")
"""Slack's whole name for a group DM, its members' handles joined by ``--`` and numbered
(``mpdm-ann--bo--cia-1``): no channel is named so by chance."""


def holds_tables(channel_id: str, channel_name: str) -> bool:
    """Whether the conversation a command was typed in can hold a table: a channel (public,
    private or shared), not a direct message or a group DM."""
    if channel_id.startswith("D"):
        return False
    if GROUP_DM_NAME.fullmatch(channel_name):  # whatever its id: a new one's may begin with C
        return False
    if channel_id.startswith("C"):  # a channel, whatever else someone named it
        return True
    # Another id (a G: a group DM, or an old private channel) goes by Slack's name for it.
    return channel_name != DIRECT_MESSAGE_NAME and not channel_name.startswith(GROUP_DM_PREFIX)
