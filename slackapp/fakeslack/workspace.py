"""What the fake workspace holds: people, channels, messages, views and the call log.

Every method takes one lock, so the HTTP server's threads, the app's threads
and the test can all read and write at once. Readers get frozen snapshots.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from slackapp.fakeslack import blocks as block_kit
from slackapp.fakeslack.models import JSON, Button, Call, Identity, Message

T = TypeVar("T")

RECORDING_WAIT_SECONDS = 5.0
"""How long reading the call log waits for calls being answered to be logged."""
WAIT_SECONDS = 60.0
"""How long ``wait_for`` waits unless told: only how long a failing wait takes to say so (a
busy machine may be slow, never wrong)."""

DEFAULT_ZONE = "Europe/Stockholm"
"""A member's time zone unless given one."""

ROLES = ("admin", "owner", "primary_owner")
"""A workspace's roles above a member's, lowest first."""

DM_CHANNEL_NAME = "directmessage"
"""The channel name Slack puts in payloads from a direct message."""


class Workspace:
    """The state a chat client would show, plus what the app asked of Slack."""

    def __init__(
        self,
        identity: Identity,
        *,
        channels: Mapping[str, str] | None = None,
        users: Mapping[str, str] | None = None,
    ) -> None:
        self.identity = identity
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._version = 0
        self._unrecorded = 0
        """Web API calls being answered and not yet in the log."""
        self._last_ts_micros = 0
        self._users: dict[str, str] = {identity.bot_user_id: identity.bot_name}
        self._profiles: dict[str, tuple[str | None, str | None]] = {}
        self._roles: dict[str, str] = {}
        self._zones: dict[str, str] = {}
        self._channels: dict[str, str] = dict(channels or {"C0001": "general"})
        self._without_bot: dict[str, bool] = {}
        """Channels nobody added the bot to, each with whether it is private."""
        self._archived: set[str] = set()
        self._dms: dict[str, str] = {}
        self._messages: dict[str, list[Message]] = {}
        self._views: dict[str, JSON] = {}
        self._view_serial = itertools.count(1)
        self._home: dict[str, str] = {}
        self._modals: dict[str, list[str]] = {}
        self._calls: list[Call] = []
        for user_id, name in (users or {}).items():
            self.add_user(user_id, name)

    # -- people and conversations ------------------------------------------------

    def add_user(
        self,
        user_id: str,
        name: str | None = None,
        *,
        display_name: str | None = None,
        real_name: str | None = None,
        tz: str | None = None,
    ) -> None:
        """Make ``user_id`` a member (users.info knows them); keeps an existing name.

        ``name`` is the legacy handle payloads carry as ``user_name``; ``display_name`` and
        ``real_name`` are the profile's (by default the handle, and the handle capitalised);
        ``tz`` the profile's time zone (by default Europe/Stockholm).
        """
        with self._lock:
            if tz is not None:
                self._zones[user_id] = tz
            if name or user_id not in self._users:
                self._users[user_id] = name or user_id.lower()
            if display_name is not None or real_name is not None:
                shown, real = self._profiles.get(user_id, (None, None))
                self._profiles[user_id] = (
                    shown if display_name is None else display_name,
                    real if real_name is None else real_name,
                )

    def set_role(self, user_id: str, role: str | None) -> None:
        """Make a member a workspace ``admin``, an ``owner`` or the ``primary_owner`` (None: a
        member like any other), as users.info's flags then say."""
        if role not in (None, *ROLES):
            raise ValueError(f"unknown role {role!r}")
        with self._lock:
            self.add_user(user_id)
            if role is None:
                self._roles.pop(user_id, None)
            else:
                self._roles[user_id] = role

    def role_flags(self, user_id: str) -> dict[str, bool]:
        """users.info's ``is_admin``, ``is_owner`` and ``is_primary_owner``: as in Slack, an
        owner is an admin too, and the primary owner is both."""
        with self._lock:
            rank = ROLES.index(self._roles[user_id]) + 1 if user_id in self._roles else 0
        return {"is_admin": rank >= 1, "is_owner": rank >= 2, "is_primary_owner": rank >= 3}

    def zone_of(self, user_id: str) -> str:
        """The member's time zone, as users.info gives it."""
        with self._lock:
            return self._zones.get(user_id, DEFAULT_ZONE)

    def profile_names(self, user_id: str) -> tuple[str, str] | None:
        """The member's profile (display name, real name) as users.info gives them; a display
        name may be empty, as in Slack, where people who set none are shown by real name."""
        with self._lock:
            handle = self._users.get(user_id)
            if handle is None:
                return None
            shown, real = self._profiles.get(user_id, (None, None))
            return (handle if shown is None else shown, handle.title() if real is None else real)

    def shown_name(self, user_id: str) -> str:
        """The name Slack shows for a mention of the member: the profile's display name, else
        the real name (the id itself for someone not in the workspace)."""
        names = self.profile_names(user_id)
        if names is None:
            return user_id
        shown, real = names
        return shown or real

    def shown_text(self, message: Message) -> str:
        """The message as a reader sees it, mentions shown as names (see ``blocks.shown_text``)."""
        return block_kit.shown_text(message.blocks, message.text, self.shown_name)

    def members(self) -> list[str]:
        """Every member's id, the bot's included, in the order they joined."""
        with self._lock:
            return list(self._users)

    def user_name(self, user_id: str) -> str | None:
        """The member's handle, or None for someone not in the workspace."""
        with self._lock:
            return self._users.get(user_id)

    def add_channel(
        self, channel_id: str, name: str, *, bot_in: bool = True, private: bool = False
    ) -> None:
        """Create a channel, the bot a member of it unless ``bot_in`` is False: then, as in
        Slack, people type slash commands there all the same, but the bot's posts are refused
        (see :meth:`bot_refused`) until someone adds it (:meth:`invite_bot`)."""
        with self._lock:
            self._channels[channel_id] = name
            if bot_in:
                self._without_bot.pop(channel_id, None)
            else:
                self._without_bot[channel_id] = private

    def invite_bot(self, channel_id: str) -> None:
        """``/invite @Varulv`` in the channel: the bot is a member of it from now on."""
        with self._lock:
            self._without_bot.pop(channel_id, None)

    def archive_channel(self, channel_id: str) -> None:
        """Archive a channel: nobody may post in it any more, Varulv included."""
        with self._lock:
            self._archived.add(channel_id)

    def bot_refused(self, channel_id: str) -> str | None:
        """Slack's error for the bot writing in a channel it may not write in: an archived one
        is ``is_archived``; one it is not a member of, if private (it cannot even see it),
        ``channel_not_found``, if public ``not_in_channel``; None where it may (or the channel
        is unknown)."""
        with self._lock:
            if channel_id in self._archived:
                return "is_archived"
            private = self._without_bot.get(channel_id)
        if private is None:
            return None
        return "channel_not_found" if private else "not_in_channel"

    @property
    def default_channel(self) -> str:
        """The first configured channel, where slash commands run unless told otherwise."""
        with self._lock:
            return next(iter(self._channels))

    def channel_name(self, channel_id: str) -> str | None:
        """A channel's name, ``directmessage`` for DMs, None when unknown."""
        with self._lock:
            if channel_id in self._dms.values():
                return DM_CHANNEL_NAME
            return self._channels.get(channel_id)

    def dm_channel(self, user_id: str) -> str:
        """The stable id of the bot's DM with ``user_id``, created on first use."""
        with self._lock:
            if user_id not in self._dms:
                self._dms[user_id] = f"D{len(self._dms) + 1:08d}"
            return self._dms[user_id]

    def channels(self) -> dict[str, str]:
        """Every channel the bot is in, id to name (DMs not included)."""
        with self._lock:
            return {c: name for c, name in self._channels.items() if c not in self._without_bot}

    def dm_channels(self) -> dict[str, str]:
        """Every DM with the bot so far, user id to channel id."""
        with self._lock:
            return dict(self._dms)

    def conversation(self, channel_or_user: str) -> str:
        """A channel id, with a user id turned into that user's DM (as chat.postMessage does)."""
        if channel_or_user[:1] in ("U", "W"):
            return self.dm_channel(channel_or_user)
        return channel_or_user

    # -- messages ----------------------------------------------------------------

    def next_ts(self) -> str:
        """A fresh message timestamp: the clock, nudged so it always increases."""
        with self._lock:
            micros = max(time.time_ns() // 1000, self._last_ts_micros + 1)
            self._last_ts_micros = micros
            return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"

    def add_message(self, message: Message) -> Message:
        """Append ``message`` to its conversation."""
        with self._lock:
            self._messages.setdefault(message.channel, []).append(message)
            self._touch()
            return message

    def get_message(self, channel: str, ts: str) -> Message | None:
        """The message with ``ts`` in ``channel`` (ephemeral ones included)."""
        with self._lock:
            stored = self._messages.get(self.conversation(channel), [])
            return next((m for m in stored if m.ts == ts), None)

    def message(self, channel: str, ts: str) -> Message:
        """The current version of a message; LookupError when it does not exist."""
        found = self.get_message(channel, ts)
        if found is None:
            raise LookupError(f"no message {ts} in {channel}")
        return found

    def replace_message(self, channel: str, ts: str, **changes: Any) -> Message:
        """Swap the stored message for an edited copy in the same place; KeyError if absent."""
        with self._lock:
            stored = self._messages.get(self.conversation(channel), [])
            for index, message in enumerate(stored):
                if message.ts == ts:
                    stored[index] = dataclasses.replace(message, **changes)
                    self._touch()
                    return stored[index]
            raise KeyError(f"no message {ts} in {channel}")

    def remove_message(self, channel: str, ts: str) -> None:
        """Take the message out of its conversation (chat.delete); KeyError if absent."""
        with self._lock:
            stored = self._messages.get(self.conversation(channel), [])
            for index, message in enumerate(stored):
                if message.ts == ts:
                    del stored[index]
                    self._touch()
                    return
            raise KeyError(f"no message {ts} in {channel}")

    def messages(self, channel: str, *, viewer: str | None = None) -> list[Message]:
        """The channel (or a user id's DM) as ``viewer`` sees it: ephemerals only their own."""
        with self._lock:
            stored = self._messages.get(self.conversation(channel), [])
            return [m for m in stored if m.ephemeral_to in (None, viewer)]

    def dm_messages(self, user_id: str) -> list[Message]:
        """The bot's DM with ``user_id``, as that user sees it."""
        return self.messages(user_id, viewer=user_id)

    def ephemerals(self, user_id: str, channel: str | None = None) -> list[Message]:
        """Ephemeral messages only ``user_id`` can see, optionally in one conversation."""
        with self._lock:
            channels = [self.conversation(channel)] if channel else list(self._messages)
            return [
                m for c in channels for m in self._messages.get(c, []) if m.ephemeral_to == user_id
            ]

    def latest(self, channel: str, *, viewer: str | None = None) -> Message | None:
        """The newest message ``viewer`` sees in ``channel``, or None when it is empty."""
        seen = self.messages(channel, viewer=viewer)
        return seen[-1] if seen else None

    def find_message(
        self, channel: str, containing: str = "", *, viewer: str | None = None
    ) -> Message | None:
        """The newest message whose rendered text contains ``containing``."""
        for message in reversed(self.messages(channel, viewer=viewer)):
            if containing in message.rendered_text or containing in message.text:
                return message
        return None

    def find_button(
        self, where: str | Message, label: str, *, viewer: str | None = None
    ) -> tuple[Message, Button]:
        """A button labelled ``label`` (text or action_id) and the message holding it.

        ``where`` is a message, or a channel / user id to search newest first.
        """
        if isinstance(where, Message):
            return where, where.button(label)
        for message in reversed(self.messages(where, viewer=viewer)):
            try:
                return message, message.button(label)
            except LookupError:
                continue
        raise LookupError(f"no button {label!r} in any message in {where}")

    # -- views -------------------------------------------------------------------

    def new_view_id(self) -> str:
        """A fresh view id, shaped like Slack's."""
        with self._lock:
            return f"V{next(self._view_serial):010d}"

    def view(self, view_id: str) -> JSON | None:
        """A published or open view by id (a copy)."""
        with self._lock:
            return copy.deepcopy(self._views.get(view_id))

    def store_view(self, view: JSON) -> None:
        """Save a new version of a view under its id."""
        with self._lock:
            self._views[view["id"]] = copy.deepcopy(view)
            self._touch()

    def set_home(self, user_id: str, view: JSON) -> None:
        """Publish ``view`` as ``user_id``'s Home tab."""
        with self._lock:
            self._home[user_id] = view["id"]
            self.store_view(view)

    def home_view(self, user_id: str) -> JSON | None:
        """The Home tab ``user_id`` sees, or None before the app publishes one."""
        with self._lock:
            view_id = self._home.get(user_id)
            return self.view(view_id) if view_id else None

    def home_view_id(self, user_id: str) -> str | None:
        """The id of ``user_id``'s Home tab view, kept across publishes like Slack does."""
        with self._lock:
            return self._home.get(user_id)

    def push_modal(self, user_id: str, view: JSON) -> None:
        """Open ``view`` on top of ``user_id``'s modal stack."""
        with self._lock:
            self._modals.setdefault(user_id, []).append(view["id"])
            self.store_view(view)

    def close_modal(self, user_id: str) -> None:
        """Close the top modal the user has open."""
        with self._lock:
            stack = self._modals.get(user_id, [])
            del stack[-1:]
            self._touch()

    def modals(self, user_id: str) -> list[JSON]:
        """The modal stack ``user_id`` has open, bottom first."""
        with self._lock:
            return [copy.deepcopy(self._views[v]) for v in self._modals.get(user_id, [])]

    # -- the call log ------------------------------------------------------------

    def answering(self) -> None:
        """A Web API call is about to change the workspace. Until :meth:`record` logs it, the
        log waits for it: whoever sees what a call did (a message posted) finds it logged."""
        with self._lock:
            self._unrecorded += 1

    def record(self, call: Call | None, *, answered: int = 0) -> None:
        """Log one request the app made (None: one that failed in the stand-in); ``answered``:
        how many :meth:`answering` it announced."""
        with self._lock:
            if call is not None:
                self._calls.append(call)
            self._unrecorded -= answered
            self._touch()

    @property
    def calls(self) -> list[Call]:
        """Every request the app made, oldest first, once those being answered are logged (a
        call held at the stand-in for longer than ``RECORDING_WAIT_SECONDS`` is left out)."""
        with self._changed:
            self._changed.wait_for(lambda: self._unrecorded == 0, RECORDING_WAIT_SECONDS)
            return list(self._calls)

    def calls_to(self, method: str) -> list[Call]:
        """The requests to one Web API method (or ``response_url``)."""
        return [c for c in self.calls if c.method == method]

    @property
    def version(self) -> int:
        """A counter bumped by every change, for cheap "anything new?" checks."""
        with self._lock:
            return self._version

    # -- waiting -----------------------------------------------------------------

    def wait_for(
        self, predicate: Callable[[], T | None], timeout: float = WAIT_SECONDS, what: str = ""
    ) -> T:
        """Return ``predicate()`` as soon as it is truthy; TimeoutError after ``timeout``.

        Woken by every change to the workspace, so tests never sleep blindly.
        The predicate runs without the lock, so it may call the app.
        """
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                seen = self._version
            result = predicate()
            if result:
                return result
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"timed out after {timeout}s waiting for {what or predicate}")
            with self._changed:
                if self._version == seen:
                    self._changed.wait(min(remaining, 0.05))

    def wait_for_message(
        self,
        channel: str,
        containing: str = "",
        *,
        viewer: str | None = None,
        timeout: float = WAIT_SECONDS,
    ) -> Message:
        """The newest message in ``channel`` containing ``containing``, once it exists."""
        return self.wait_for(
            lambda: self.find_message(channel, containing, viewer=viewer),
            timeout,
            what=f"a message containing {containing!r} in {channel}",
        )

    def _touch(self) -> None:
        # Called with the lock held: wakes everyone in wait_for.
        self._version += 1
        self._changed.notify_all()
