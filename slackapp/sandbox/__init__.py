"""The sandbox: Varulv without a Slack workspace.

``varulv sandbox`` runs the real app against the fake Slack (:mod:`slackapp.fakeslack`) and
serves a web page where one person plays everyone at the table: the channel, each person's
DMs, and a composer for ``/varulv``. :mod:`slackapp.sandbox.run` starts it all;
:mod:`slackapp.sandbox.server` is the page and its small JSON API.
"""

from slackapp.sandbox.server import CHANNEL_ID, CHANNEL_NAME, PEOPLE, Person, SandboxPage

__all__ = ["CHANNEL_ID", "CHANNEL_NAME", "PEOPLE", "Person", "SandboxPage"]
