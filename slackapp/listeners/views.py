"""Modal submissions: the ``/varulv settings`` modal."""

from __future__ import annotations

import logging
from datetime import time
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient
from sqlalchemy.exc import SQLAlchemyError

import slackapp.blocks.permissions as permissions_screen
import slackapp.blocks.schedule as schedule_screen
import slackapp.blocks.settings as settings_screen
from slackapp.blocks.words import ENGLISH, N_, Words, words
from slackapp.game.lines import Language
from slackapp.game.permissions import Change
from slackapp.game.schedule import LOBBY_MINUTES_BOUNDS, Schedule, known_zones
from slackapp.game.settings import LENGTHS, SETTINGS, ChannelChoice, choice_of
from slackapp.listeners.ack import acknowledge_then
from slackapp.logs import log_context
from slackapp.services.channel import ChannelService
from slackapp.shapes import slack_id

log = logging.getLogger(__name__)

NO_CHANNEL = N_("This form doesn't say which channel it is for. Open it again with {command}.")
NO_DATABASE = N_("Varulv can't reach its database right now. Try again.")


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


def register(app: App, channels: ChannelService) -> None:
    def save(
        ack: Ack,
        body: dict[str, Any],
        view: dict[str, Any],
        context: BoltContext,
        client: WebClient,
    ) -> None:
        """Check and store within the acknowledgement, so a wrong entry keeps the modal open."""
        team, user = str(context.team_id or ""), str(body["user"]["id"])
        channel = slack_id(view.get("private_metadata"))
        first = SETTINGS[0].name
        choice, errors = read_choice(view)
        if choice is None:
            ack(response_action="errors", errors=errors)
            return
        if not channel:  # not the modal Varulv opened: nothing to store
            no_channel = modal_words(view)._(NO_CHANNEL, command="/varulv settings")
            ack(response_action="errors", errors={first: no_channel})
            return
        with log_context(team_id=team, channel_id=channel, user_id=user):
            try:
                refused = channels.store_settings(client, team, channel, user, choice)
                if refused is not None:
                    ack(
                        response_action="errors",
                        errors={first: permissions_screen.refused(refused, modal_words(view))},
                    )
                    return
            except SQLAlchemyError:
                log.exception("could not store the channel's settings")
                ack(
                    response_action="errors",
                    errors={first: modal_words(view)._(NO_DATABASE)},
                )
                return
            log.info("channel settings changed")
        ack()

    def announce(
        body: dict[str, Any], view: dict[str, Any], context: BoltContext, client: WebClient
    ) -> None:
        """Tell the channel (through the outbox) who changed its settings, unless refused."""
        choice, _ = read_choice(view)
        team, channel = str(context.team_id or ""), slack_id(view.get("private_metadata"))
        user = _user_of(body)
        if choice is None or not channel or not user:
            return
        channels.announce_settings(client, team, channel, user, choice, context.enterprise_id)

    app.view(settings_screen.CALLBACK_ID)(acknowledge_then(app, announce, acknowledge=save))
    register_schedule(app, channels)


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


def read_schedule(
    view: dict[str, Any], words: Words = ENGLISH
) -> tuple[Schedule | None, bool, dict[str, str]]:
    """The standing table entered in the modal, whether to remove it instead, and what to say
    next to each field that is wrong."""
    values = (view.get("state") or {}).get("values") or {}
    if schedule_screen.REMOVE_IT in _picked(values, schedule_screen.REMOVE):
        return None, True, {}
    errors: dict[str, str] = {}
    days = frozenset(int(day) for day in _picked(values, schedule_screen.DAYS) if day in DAY_VALUES)
    if not days:
        errors[schedule_screen.DAYS] = words._("Pick at least one day.")
    try:
        hour, minute = str(_value(values, schedule_screen.AT).get("selected_time")).split(":")
        at = time(int(hour), int(minute))
    except ValueError:
        errors[schedule_screen.AT] = words._("Pick a time.")
    zone = str(_value(values, schedule_screen.ZONE).get("value") or "").strip()
    if zone not in known_zones():
        errors[schedule_screen.ZONE] = words._("Type a time zone's name, such as Europe/Stockholm.")
    try:
        lobby = int(str(_value(values, schedule_screen.LOBBY).get("value")).strip())
    except ValueError:
        lobby = 0
    low, high = LOBBY_MINUTES_BOUNDS
    if not low <= lobby <= high:
        errors[schedule_screen.LOBBY] = words._(
            "Type a whole number of minutes, {low} to {high}.", low=low, high=high
        )
    if errors:
        return None, False, errors
    return Schedule(days, at, zone, lobby), False, {}


def _channel_words(channels: ChannelService, team: str, channel: str) -> Words:
    """The channel's words for its schedule form; English for a form that names no channel,
    or when the database that keeps the channel's language cannot be reached."""
    if not channel:
        return ENGLISH
    try:
        return channels.channel_words(team, channel)
    except SQLAlchemyError:
        log.warning("the channel's language could not be read", exc_info=True)
        return ENGLISH


def register_schedule(app: App, channels: ChannelService) -> None:
    def save(
        ack: Ack,
        body: dict[str, Any],
        view: dict[str, Any],
        context: BoltContext,
        client: WebClient,
    ) -> None:
        """Check and store within the acknowledgement, so a wrong entry keeps the modal open."""
        team, user = str(context.team_id or ""), _user_of(body)
        channel = slack_id(view.get("private_metadata"))
        spoken = _channel_words(channels, team, channel)
        schedule, remove, errors = read_schedule(view, spoken)
        if not channel or not user:
            errors = {schedule_screen.DAYS: spoken._(NO_CHANNEL, command="/varulv schedule")}
        if errors:
            ack(response_action="errors", errors=errors)
            return
        with log_context(team_id=team, channel_id=channel, user_id=user):
            try:
                refused = channels.store_schedule(
                    client, team, channel, user, schedule, context.enterprise_id
                )
                if refused is not None:
                    text = permissions_screen.refused(refused, spoken)
                    ack(response_action="errors", errors={schedule_screen.DAYS: text})
                    return
            except SQLAlchemyError:
                log.exception("could not store the standing table")
                ack(response_action="errors", errors={schedule_screen.DAYS: spoken._(NO_DATABASE)})
                return
            log.info("standing table removed" if remove else "standing table set")
        ack()

    def announce(body: dict[str, Any], view: dict[str, Any], context: BoltContext) -> None:
        schedule, remove, errors = read_schedule(view)
        team, channel = str(context.team_id or ""), slack_id(view.get("private_metadata"))
        user = _user_of(body)
        if errors or not channel or not user or (schedule is None and not remove):
            return
        channels.announce_schedule(team, channel, user, schedule, remove, context.enterprise_id)

    app.view(schedule_screen.CALLBACK_ID)(acknowledge_then(app, announce, acknowledge=save))
