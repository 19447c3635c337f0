"""Modal submissions: the ``/varulv settings`` and ``/varulv schedule`` modals, each read here and
handed whole to one step of the channel service."""

from __future__ import annotations

from datetime import time
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient

import slackapp.blocks.schedule as schedule_screen
import slackapp.blocks.settings as settings_screen
from slackapp.blocks.modals import NO_DATABASE
from slackapp.blocks.schedule import ScheduleForm
from slackapp.blocks.words import ENGLISH, Words, words
from slackapp.game.lines import Language
from slackapp.game.permissions import Change
from slackapp.game.schedule import LOBBY_MINUTES_BOUNDS, Schedule, known_zones
from slackapp.game.settings import LENGTHS, SETTINGS, ChannelChoice, choice_of
from slackapp.listeners.ack import within_ack
from slackapp.logs import log_context
from slackapp.services.channel import ChannelService
from slackapp.shapes import slack_id


def modal_words(view: dict[str, Any]) -> Words:
    """The words the modal was drawn in: the channel's language when it was opened (its
    language field's first choice), so that its errors need no database."""
    for block in view.get("blocks") or []:
        if isinstance(block, dict) and block.get("block_id") == settings_screen.LANGUAGE:
            shown = ((block.get("element") or {}).get("initial_option") or {}).get("value")
            if shown in {each.value for each in Language}:
                return words(Language(shown))
    return words(Language.ENGLISH)


def read_choice(view: dict[str, Any]) -> tuple[ChannelChoice | None, dict[str, str]]:
    """The settings entered in the modal, or what to say next to each field that is wrong:
    every length typed, checked at once; then the first choice that is not one of its
    setting's (only a form Varulv did not draw has one). A setting with a permission of its
    own that the modal did not offer is None."""
    w = modal_words(view)
    values = (view.get("state") or {}).get("values") or {}
    read: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for setting in LENGTHS:
        try:
            read[setting.name] = int(str(_value(values, setting.name).get("value")).strip())
        except ValueError:
            errors[setting.name] = w._(settings_screen.NOT_WHOLE)
    for setting in LENGTHS:
        if setting.name in read and not setting.allows(read[setting.name]):
            errors[setting.name] = settings_screen.out_of_bounds(setting, w)
    if errors:
        return None, errors
    for setting in SETTINGS:
        field = settings_screen.FIELDS[setting.name]
        if isinstance(field, settings_screen.Switch):
            offered = setting.change is Change.SETTINGS or setting.name in values
            ticked = field.value in _picked(values, setting.name)
            read[setting.name] = ticked if offered else None
        elif isinstance(field, settings_screen.Pick):
            chosen = _value(values, setting.name).get("selected_option") or {}
            picked = setting.picked(str(chosen.get("value") or setting.default))
            if picked is None:
                return None, {setting.name: w._(field.wrong)}
            read[setting.name] = picked
    return choice_of(read), {}


def table_team(channels: ChannelService, context: BoltContext, channel: str) -> str | None:
    """The workspace whose table the form changes (a shared channel's, in an organisation);
    None when the database that says so cannot be reached."""
    team, enterprise = str(context.team_id or ""), context.enterprise_id
    return channels.reachable_table_team(
        team, channel, enterprise, bool(context.is_enterprise_install)
    )


def register(app: App, channels: ChannelService) -> None:
    register_settings(app, channels)
    register_schedule(app, channels)


def register_settings(app: App, channels: ChannelService) -> None:
    def save(
        ack: Ack,
        body: dict[str, Any],
        view: dict[str, Any],
        context: BoltContext,
        client: WebClient,
    ) -> None:
        """Check and store within the acknowledgement, so a wrong entry keeps the modal open;
        the channel's notice waits in the outbox for the deliverer."""
        user, channel = str(body["user"]["id"]), slack_id(view.get("private_metadata"))
        team = table_team(channels, context, channel)
        if team is None:
            ack(response_action="errors", errors={SETTINGS[0].name: ENGLISH._(NO_DATABASE)})
            return
        choice, errors = read_choice(view)
        if choice is not None:
            with log_context(team_id=team, channel_id=channel, user_id=user):
                errors = channels.store_settings(
                    client, team, channel, user, choice, modal_words(view), context.enterprise_id
                )
        if errors:  # kept open, with what to show next to its fields
            ack(response_action="errors", errors=errors)
        else:
            ack()

    app.view(settings_screen.CALLBACK_ID)(within_ack(save))


def _value(values: dict[str, Any], block: str) -> dict[str, Any]:
    found = (values.get(block) or {}).get(block)
    return found if isinstance(found, dict) else {}


def _picked(values: dict[str, Any], block: str) -> list[str]:
    options = _value(values, block).get("selected_options") or []
    return [str(option.get("value")) for option in options if isinstance(option, dict)]


def _user_of(body: dict[str, Any]) -> str:
    user = body.get("user")
    return slack_id(user.get("id")) if isinstance(user, dict) else ""


DAY_VALUES = frozenset(str(day) for day in range(7))


def read_schedule(view: dict[str, Any]) -> ScheduleForm:
    """The standing table entered in the modal, whether to remove it instead, and the sentence
    for each field that is wrong."""
    values = (view.get("state") or {}).get("values") or {}
    if schedule_screen.REMOVE_IT in _picked(values, schedule_screen.REMOVE):
        return ScheduleForm(None, remove=True)
    wrong: dict[str, str] = {}
    days = frozenset(int(day) for day in _picked(values, schedule_screen.DAYS) if day in DAY_VALUES)
    if not days:
        wrong[schedule_screen.DAYS] = schedule_screen.NO_DAY
    try:
        hour, minute = str(_value(values, schedule_screen.AT).get("selected_time")).split(":")
        at = time(int(hour), int(minute))
    except ValueError:
        wrong[schedule_screen.AT] = schedule_screen.NO_TIME
    zone = str(_value(values, schedule_screen.ZONE).get("value") or "").strip()
    if zone not in known_zones():
        wrong[schedule_screen.ZONE] = schedule_screen.NO_ZONE
    try:
        lobby = int(str(_value(values, schedule_screen.LOBBY).get("value")).strip())
    except ValueError:
        lobby = 0
    low, high = LOBBY_MINUTES_BOUNDS
    if not low <= lobby <= high:
        wrong[schedule_screen.LOBBY] = schedule_screen.LOBBY_OUT_OF_BOUNDS
    if wrong:
        return ScheduleForm(None, wrong=wrong)
    return ScheduleForm(Schedule(days, at, zone, lobby))


def register_schedule(app: App, channels: ChannelService) -> None:
    def save(
        ack: Ack,
        body: dict[str, Any],
        view: dict[str, Any],
        context: BoltContext,
        client: WebClient,
    ) -> None:
        """Check and store within the acknowledgement, so a wrong entry keeps the modal open;
        the channel's notice waits in the outbox for the deliverer."""
        user, channel = _user_of(body), slack_id(view.get("private_metadata"))
        team = table_team(channels, context, channel)
        if team is None:
            ack(response_action="errors", errors={schedule_screen.DAYS: ENGLISH._(NO_DATABASE)})
            return
        form = read_schedule(view)
        with log_context(team_id=team, channel_id=channel, user_id=user):
            errors = channels.store_schedule(
                client, team, channel, user, form, context.enterprise_id
            )
        if errors:  # kept open, with what to show next to its fields
            ack(response_action="errors", errors=errors)
        else:
            ack()

    app.view(schedule_screen.CALLBACK_ID)(within_ack(save))
