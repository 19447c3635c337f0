"""Slack's side of *Start*: the seated people's private message channels, opened before the
step, with no lock held, at Slack's pace for ``conversations.open`` (``slackapp.turns``).

The game service receives one of these and asks it for the channels; it never calls Slack
itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from slack_sdk.errors import SlackApiError

from slackapp.delivery.slack import TRANSIENT_ERRORS
from slackapp.turns import OpensDirectMessages, Turns, open_direct_message


class DirectMessages:
    """Opens private message channels for *Start*, taking turns at Slack's limits."""

    def __init__(self, turns: Turns | None = None) -> None:
        self.turns = Turns() if turns is None else turns
        """Turns at Slack's limits for ``conversations.open`` at *Start*, in this process."""

    def open(
        self,
        client: OpensDirectMessages,
        people: Iterable[str],
        channels: dict[str, str],
        unreachable: list[str],
    ) -> None:
        """A private message channel with each of ``people`` not in ``channels`` or
        ``unreachable`` yet: its id goes into ``channels``, or the person into ``unreachable``
        when Slack will not open one with them. Slack being busy raises: the click fails and
        nothing changed."""
        for user in people:
            if user in channels or user in unreachable:
                continue
            try:
                opened = open_direct_message(self.turns, client, user)
                channels[user] = str(opened["channel"]["id"])
            except SlackApiError as error:
                if error.response.get("error") in TRANSIENT_ERRORS:
                    raise  # not the person's settings: the click fails, Slack is busy
                unreachable.append(user)
