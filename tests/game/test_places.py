"""Where a table can be, by what Slack's slash command says of the conversation."""

from __future__ import annotations

import pytest

from slackapp.game.places import holds_tables


@pytest.mark.parametrize(
    ("channel", "name"),
    [
        ("C0FIKA", "fika"),
        ("G0SECRET", "privategroup"),
        ("C0SHARED", "fika-nordics"),
        ("C0NAMED", "mpdm-fans"),  # a channel given a group DM's kind of name
        ("C0DIRECT", "directmessage"),  # or a DM's
    ],
)
def test_channels_hold_tables(channel: str, name: str) -> None:
    assert holds_tables(channel, name)


@pytest.mark.parametrize(
    ("channel", "name"),
    [
        ("D0TWO", "directmessage"),
        ("D0TWO", ""),
        ("G0GROUP", "mpdm-ann--bo--cia-1"),
        ("C0GROUP", "mpdm-ann--bo--cia-1"),  # a group DM with an id of the channels' kind
    ],
)
def test_direct_messages_and_group_dms_hold_none(channel: str, name: str) -> None:
    assert not holds_tables(channel, name)
