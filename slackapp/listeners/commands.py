"""``/varulv`` and its words: (start), help, settings, schedule, stop, score, last, forget me."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_bolt.context.respond import Respond
from slack_bolt.request import BoltRequest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.views import View

import slackapp.blocks.help as help_screen
import slackapp.blocks.permissions as permissions_screen
import slackapp.blocks.schedule as schedule_screen
import slackapp.blocks.settings as settings_screen
from slackapp.blocks.words import N_, Words, words
from slackapp.config import COMMAND, COMMAND_WORDS
from slackapp.game.permissions import Change
from slackapp.game.permissions import is_admin as is_admin_profile
from slackapp.game.places import holds_tables
from slackapp.game.schedule import known_zones
from slackapp.game.settings import offered
from slackapp.inbox import REPLAYED, Inbox
from slackapp.listeners.ack import (
    UNAVAILABLE,
    Reply,
    acknowledge_then,
    acknowledge_with,
    is_retry,
    outcome,
    run_step,
    send,
    within_ack,
)
from slackapp.logs import log_context
from slackapp.permits import is_admin, profile_of
from slackapp.services.channel import ChannelService
from slackapp.services.game import GameService
from slackapp.shapes import display_name, plain_text, slack_id

log = logging.getLogger(__name__)

OPENING = ("", "start")
READING = ("help", "last", "score")
"""Words that only read: answered in the acknowledgement, as a table opened is."""
WORDS = (*OPENING, *COMMAND_WORDS)
NO_TRIGGER = N_("Slack didn't send what it takes to open the form. Try `{command}` again.")
NOT_OPENED = N_("Slack did not open the form. Try `{command}` again.")
COMMAND_SOURCE = ("team_id", "channel_id", "user_id")
"""Where a command was typed and by whom: the signed payload's fields, never the text."""
OF_A_TABLE = {
    **dict.fromkeys(OPENING, COMMAND),
    **{word: f"{COMMAND} {word}" for word in ("settings", "schedule")},
}
"""The words that open a channel's table or change it, and the command each is typed as."""


def typed(command: dict[str, Any]) -> str:
    """The words after ``/varulv`` as the person typed them, as plain text."""
    return plain_text(str(command.get("text") or ""))


def word_of(command: dict[str, Any]) -> str:
    return typed(command).lower()


def not_a_table_place(command: dict[str, Any]) -> Reply | None:
    """The answer to a word of :data:`OF_A_TABLE` typed in a direct message or a group DM,
    which holds no table; None anywhere else. English: such a conversation has no setting."""
    asked = OF_A_TABLE.get(word_of(command))
    channel, name = slack_id(command.get("channel_id")), str(command.get("channel_name") or "")
    if asked is None or holds_tables(channel, name):
        return None
    return Reply(help_screen.not_in_a_channel(asked, words()))


def answered_at_once(command: dict[str, Any], context: BoltContext) -> bool:
    """A ``/varulv`` typed now (not taken over from a process gone) that is done within
    Slack's 3 s: a table opened, committed first, or a read. Its answer rides in the
    acknowledgement, so nothing is written down first and no call is made for it."""
    word = word_of(command)
    at_once = word in OPENING or word in READING or word not in WORDS
    return at_once and context.get(REPLAYED) is None


def register(
    app: App, games: GameService, channels: ChannelService, inbox: Inbox | None = None
) -> None:
    def answer_now(ack: Ack, command: dict[str, Any], request: BoltRequest) -> None:
        """Done before the acknowledgement, which carries the answer: Slack's 3 s are enough
        for a new table's two statements or a read; should the database take longer, Slack
        tells the person the command failed."""
        acknowledge_with(ack, answer(command, request))

    def table_team(command: dict[str, Any], request: BoltRequest) -> str | None:
        """The workspace whose table the command is about (a shared channel's home, in an
        organisation); None when the database that says so cannot be reached. A direct
        message or a group DM holds no table, so it is given no home: the asker's own."""
        team, channel = slack_id(command.get("team_id")), slack_id(command.get("channel_id"))
        if not holds_tables(channel, str(command.get("channel_name") or "")):
            return team
        enterprise = slack_id(command.get("enterprise_id")) or None
        org_wide = bool(request.context.is_enterprise_install)
        return channels.reachable_table_team(team, channel, enterprise, org_wide)

    def answer(command: dict[str, Any], request: BoltRequest) -> Reply:
        team, channel, user = (slack_id(command.get(key)) for key in COMMAND_SOURCE)
        if not (team and channel and user):
            log.warning("a /varulv without a readable team, channel or user was ignored")
            return Reply()
        if (nowhere := not_a_table_place(command)) is not None:
            return nowhere
        table = table_team(command, request)
        if table is None:
            return Reply(UNAVAILABLE)
        team = table
        word = word_of(command)

        def spoken() -> Words:  # should the step fail, it says so in the channel's words
            return channels.channel_words(team, channel)

        with log_context(team_id=team, channel_id=channel, user_id=user):
            if word in WORDS:
                log.info("command", extra={"word": word or "start"})
            if word in OPENING:
                trigger = command.get("trigger_id")
                return outcome(
                    lambda: games.open_table(
                        team,
                        channel,
                        user,
                        display_name(command.get("user_name"), user),  # unless a name is kept
                        is_retry(request),
                        trigger[:255] if isinstance(trigger, str) else "",
                        slack_id(command.get("enterprise_id")) or None,
                    ),
                    spoken,
                )
            if word == "help":
                return outcome(lambda: Reply.shown(channels.help_for(team, channel)), spoken)
            if word == "last":
                return outcome(lambda: Reply.shown(channels.last(team, channel)), spoken)
            if word == "score":
                return outcome(lambda: Reply.shown(channels.score(team, channel)), spoken)
            unknown = typed(command)[:40]  # echoed as typed: "Dance" stays "Dance"
            return outcome(lambda: channels.unknown_word(team, channel, unknown))

    def handle(
        command: dict[str, Any], respond: Respond, client: WebClient, request: BoltRequest
    ) -> None:
        word = word_of(command)
        if word in OPENING or word in READING or word not in WORDS:
            send(respond, answer(command, request))  # taken over, written down by an older one
            return
        team, channel, user = (slack_id(command.get(key)) for key in COMMAND_SOURCE)
        if not (team and channel and user):
            log.warning("a /varulv without a readable team, channel or user was ignored")
            return
        if (nowhere := not_a_table_place(command)) is not None:
            send(respond, nowhere)
            return
        table = table_team(command, request)
        if table is None:
            send(respond, Reply(UNAVAILABLE))
            return
        own_team, team = team, table
        retry = is_retry(request)

        def spoken() -> Words:  # should the step fail, it says so in the channel's words
            return channels.channel_words(team, channel)

        with log_context(team_id=team, channel_id=channel, user_id=user):
            log.info("command", extra={"word": word})
            if word == "settings":
                _open_settings(channels, client, team, channel, user, command, respond)
            elif word == "schedule":
                _open_schedule(channels, client, team, channel, user, command, respond, own_team)
            elif word == "stop":
                run_step(
                    respond,
                    lambda: games.stop_if_allowed(client, team, channel, user, retry),
                    spoken,
                )
            elif word == "forget me":
                enterprise = slack_id(command.get("enterprise_id")) or None
                org_wide = bool(request.context.is_enterprise_install) and enterprise is not None

                def forget() -> str:
                    teams = channels.teams_of(own_team, user, enterprise, org_wide)
                    return channels.forget_me(teams, user, team, channel, org_wide)

                run_step(respond, forget, spoken)

    app.command(COMMAND, matchers=[answered_at_once])(within_ack(answer_now))
    app.command(COMMAND)(acknowledge_then(app, handle, inbox=inbox))


def _open_settings(
    channels: ChannelService,
    client: WebClient,
    team: str,
    channel: str,
    user: str,
    command: dict[str, Any],
    respond: Respond,
) -> None:
    """Open the modal with the channel's current settings (Slack allows 3 s from the command),
    to those who may change them; an admin may also open the channel's table to everyone."""
    admin = is_admin(client, user)
    refused = channels.refusal(client, team, channel, user, Change.SETTINGS, admin)
    choice = channels.settings_now(team, channel)
    spoken = words(choice.language)
    if refused is not None:
        send(respond, Reply(permissions_screen.refused(refused, spoken)))
        return
    view = settings_screen.settings_modal(channel, choice, offered(admin))
    trigger = command.get("trigger_id")
    if not isinstance(trigger, str) or not trigger:  # Slack opens a form only with one
        send(respond, Reply(spoken._(NO_TRIGGER, command="/varulv settings")))
        return
    _open_form(client, trigger, view, "/varulv settings", respond, spoken)


def person_zone(profile: dict[str, Any] | None) -> str:
    """The person's own time zone from their Slack profile, or UTC when Slack won't say."""
    zone = None if profile is None else profile.get("tz")
    return zone if isinstance(zone, str) and zone in known_zones() else "UTC"


def _open_schedule(
    channels: ChannelService,
    client: WebClient,
    team: str,
    channel: str,
    user: str,
    command: dict[str, Any],
    respond: Respond,
    own_team: str,
) -> None:
    """Open the standing table's form, filled with the channel's schedule if it has one, to
    those who may change it. ``team`` keeps the channel's table; ``own_team`` is the asker's."""
    profile = profile_of(client, user)  # one users.info: the admin flags and the time zone
    admin = profile is not None and is_admin_profile(profile)
    refused = channels.refusal(client, team, channel, user, Change.SCHEDULE, admin)
    spoken = channels.channel_words(team, channel)
    if refused is not None:
        send(respond, Reply(permissions_screen.refused(refused, spoken)))
        return
    trigger = command.get("trigger_id")
    if not isinstance(trigger, str) or not trigger:
        send(respond, Reply(spoken._(NO_TRIGGER, command="/varulv schedule")))
        return
    now = channels.schedule_now(team, channel, person_zone(profile), admin, asked_from=own_team)
    zone = now.current.zone if now.current else person_zone(profile)
    view = schedule_screen.schedule_modal(
        channel,
        now.current,
        now.next_at,
        now.paused,
        zone,
        spoken,
        lost_zone=now.lost_zone,
        elsewhere=now.elsewhere,
        more=now.more,
    )
    _open_form(client, trigger, view, "/varulv schedule", respond, spoken)


def _open_form(
    client: WebClient,
    trigger: str,
    view: View,
    command: str,
    respond: Respond,
    spoken: Words,
) -> None:
    """Open the form ``command`` asked for, or say privately that Slack would not."""
    try:
        client.views_open(trigger_id=trigger, view=view)
    except SlackApiError as error:
        log.warning("could not open the form of %s: %s", command, error.response.get("error"))
        send(respond, Reply(spoken._(NOT_OPENED, command=command)))
