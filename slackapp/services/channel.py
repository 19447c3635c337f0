"""The channel service: the steps beside a game's moves. What a channel keeps (its settings,
standing table, scores and seasons, the last game), a person's record, and forgetting a person.

Each is a short transaction of its own, and whatever it says in a channel goes through the
outbox like a game's messages, so the listeners translate payloads and call these, and never
open a transaction or post to a channel themselves (a layout test holds them to it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import NamedTuple

from slack_sdk import WebClient
from slack_sdk.models.views import View
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

import slackapp.blocks.forgotten as forgotten_screen
import slackapp.blocks.help as help_screen
import slackapp.blocks.home as home_screen
import slackapp.blocks.last as last_screen
import slackapp.blocks.notices as notices_screen
import slackapp.blocks.permissions as permissions_screen
import slackapp.blocks.schedule as schedule_screen
import slackapp.blocks.settings as settings_screen
from slackapp.blocks.addresses import NO_ADDRESSES, Addresses
from slackapp.blocks.ids import STALE
from slackapp.blocks.modals import NO_CHANNEL, NO_DATABASE
from slackapp.blocks.notices import About
from slackapp.blocks.render import labels
from slackapp.blocks.schedule import OtherTable, ScheduleForm
from slackapp.blocks.screen import Screen
from slackapp.blocks.words import ENGLISH, N_, Words, words
from slackapp.blocks.wrapup import season_name
from slackapp.db import channels, erasure, history, scores, standing
from slackapp.db.engine import transaction
from slackapp.db.models import Game, Seat, StandingTable
from slackapp.delivery.outbox import notice, refused_notice, tell_privately
from slackapp.game import machine as m
from slackapp.game.lines import Language
from slackapp.game.permissions import Asker, Change, Refusal, sees_every_standing_table
from slackapp.game.schedule import Schedule, known_zones, next_opening
from slackapp.game.seasons import standings
from slackapp.game.settings import SETTINGS, ChannelChoice, changes_asked
from slackapp.logs import log_context
from slackapp.permits import AdminFlags, checked, refusal_under_lock
from slackapp.services.uow import Kick, utc_now
from slackapp.shapes import slack_id

log = logging.getLogger(__name__)

KNOWN_ABOUT = frozenset(about.value for about in About)
"""What a notice may tell of that this Varulv has words for; one written by another version
of Varulv, which tells of something else, leaves its author untold."""
NOT_OVER = N_("That game is not over, or was not played in this channel: nothing to check.")


class StandingNow(NamedTuple):
    """A channel's standing table as its form shows it."""

    current: Schedule | None
    next_at: datetime | None
    paused: str | None
    lost_zone: str | None = None
    """The zone it was set in, when this machine no longer knows it: it opens no table."""
    elsewhere: tuple[OtherTable, ...] = ()
    """The workspace's standing tables in other channels, the first the form names."""
    more: int = 0
    """How many more there are."""


def _other_table(row: StandingTable) -> OtherTable:
    known = row.zone in known_zones()
    schedule = standing.schedule_of(row) if known else None
    return OtherTable(row.channel_id, row.owner_user_id, schedule, row.paused)


class ChannelService:
    """What a channel keeps and what a person asks of their own record, each a short
    transaction of its own; whatever it says in a channel goes through the outbox."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        lengths: m.Lengths,
        deliverer: Kick,
        now: Callable[[], datetime] = utc_now,
        addresses: Addresses = NO_ADDRESSES,
    ) -> None:
        self.sessions = sessions
        self.lengths = lengths
        """A channel's phase lengths, until it sets its own."""
        self.deliverer = deliverer
        """Kicked once a channel's message is in the outbox."""
        self.now = now
        self.addresses = addresses
        """What the screens may link: the support contact, the published source."""

    def table_team(
        self, team_id: str, channel_id: str, enterprise_id: str | None, org_wide: bool
    ) -> str:
        """The workspace whose table a request in a channel is about: the asker's own, or,
        where Varulv is installed on the whole organisation, the channel's home, so a channel
        its workspaces share has one table, one set of settings and one leaderboard."""
        return channels.table_team(self.sessions, team_id, channel_id, enterprise_id, org_wide)

    def reachable_table_team(
        self, team_id: str, channel_id: str, enterprise_id: str | None, org_wide: bool
    ) -> str | None:
        """``table_team``, or None when the database that says so cannot be reached: the
        request is then answered that it is (an outage is logged once, logs.DatabaseOutage)."""
        try:
            return self.table_team(team_id, channel_id, enterprise_id, org_wide)
        except SQLAlchemyError:
            log.exception("could not find the channel's table")
            return None

    def tell_channel(
        self,
        team_id: str,
        channel_id: str,
        text: str,
        enterprise_id: str | None = None,
        about: About | None = None,
        by: str | None = None,
    ) -> None:
        """Say ``text`` in the channel through the outbox, so it is sent, retried and paced like
        every other message: a notice, an outbox stream of its own, which needs no game.
        ``about``: the change it tells of, made ``by`` that person, who is told privately should
        the channel refuse Varulv (:meth:`notice_refused`)."""
        with transaction(self.sessions) as session:
            connection = session.connection()
            told = about.value if about else ""
            stream = notice(connection, team_id, enterprise_id, channel_id, text, told, by)
        self.deliverer.kick(stream)

    def notice_refused(self, stream: int, error: str, paused_for: str | None = None) -> None:
        """Slack refused the channel's notice of ``stream`` for good, ``error`` saying why (the
        channel refuses Varulv: nobody added it there, say): whoever made the change it told of
        is told privately, in the channel's language, that the change stands, the channel was
        not told, and how to add Varulv. Nothing for a game's stream, which the game's own
        step answers, nor for a notice whose author was told already. ``paused_for``: who set
        the channel's standing table, when the refusal paused it; they hear so too."""
        with transaction(self.sessions) as session:
            connection = session.connection()
            refused = refused_notice(connection, stream)
            if refused is None or refused.about not in KNOWN_ABOUT:
                return
            team_id, enterprise_id, channel, about, by = refused
            chosen = channels.choice_in(session, team_id, channel, self.lengths)
            spoken = words(chosen.language)
            told = notices_screen.unheard(About(about), channel, error, spoken)
            if paused_for is not None and About(about) is not About.SCHEDULE:
                if paused_for == by:
                    told = f"{told} {notices_screen.paused_too(spoken)}"
                else:
                    paused = notices_screen.table_paused(channel, error, spoken)
                    tell_privately(connection, stream, team_id, enterprise_id, paused_for, paused)
            tell_privately(connection, stream, team_id, enterprise_id, by, told)
        with log_context(team_id=team_id, channel_id=channel, user_id=by):
            log.info(
                "the channel refused its notice: who changed it is told", extra={"error": error}
            )
        self.deliverer.kick(stream)

    def refusal(
        self,
        client: WebClient,
        team_id: str,
        channel_id: str,
        user_id: str,
        change: Change,
        admin: bool | AdminFlags | None = None,
    ) -> Refusal | None:
        """None when the person may make ``change`` in the channel; otherwise who can."""
        return checked(self.sessions, client, team_id, channel_id, user_id, change, admin)[0]

    def settings_refusal(
        self,
        client: WebClient,
        team_id: str,
        channel_id: str,
        user_id: str,
        choice: ChannelChoice,
        admin: AdminFlags | None = None,
    ) -> Refusal | None:
        """Whether the person may save the settings modal as submitted: the settings themselves,
        and each setting with a permission of its own (the channel's openness) that it changes."""
        asked = changes_asked(choice, self.settings_now(team_id, channel_id))
        admin = admin or AdminFlags(client, user_id)
        if asked:
            admin()
        refused = self.refusal(client, team_id, channel_id, user_id, Change.SETTINGS, admin)
        for change in asked:
            if refused is None:
                refused = self.refusal(client, team_id, channel_id, user_id, change, admin)
        return refused

    def store_settings(
        self,
        client: WebClient,
        team_id: str,
        channel_id: str,
        user_id: str,
        choice: ChannelChoice,
        spoken: Words = ENGLISH,
        enterprise_id: str | None = None,
    ) -> dict[str, str]:
        """The ``/varulv settings`` form as submitted, drawn in ``spoken``: store the channel's
        settings if the person may, and tell the channel who changed them (through the
        outbox). What to show next to the form's first field instead, when it names no channel
        or is refused; empty once stored."""
        first = SETTINGS[0].name
        if not channel_id:  # not the modal Varulv opened: nothing to store
            return {first: spoken._(NO_CHANNEL, command="/varulv settings")}
        try:
            stored = self.write_settings(client, team_id, channel_id, user_id, choice)
        except SQLAlchemyError:
            log.exception("could not store the channel's settings")
            return {first: spoken._(NO_DATABASE)}
        if isinstance(stored, Refusal):
            return {first: permissions_screen.refused(stored, spoken)}
        log.info("channel settings changed")
        opened = Change.OPENNESS in changes_asked(choice, stored)
        opened_now = choice.open_to_everyone if opened else None
        text = settings_screen.changed_notice(user_id, choice, opened_now)
        self._told(text, team_id, channel_id, enterprise_id, About.SETTINGS, user_id)
        return {}

    def write_settings(
        self,
        client: WebClient,
        team_id: str,
        channel_id: str,
        user_id: str,
        choice: ChannelChoice,
    ) -> Refusal | ChannelChoice:
        """Store the channel's settings (and, from an admin's form, whether the channel is open to
        everyone), if the person may: decided under the channel's lock, in the transaction that
        stores them. The next game to open there uses them. The settings it replaced, or why
        the person may not."""
        admin = AdminFlags(client, user_id)
        refused = self.settings_refusal(client, team_id, channel_id, user_id, choice, admin)
        if refused is not None:
            return refused
        with transaction(self.sessions) as session:
            refused = refusal_under_lock(
                session, team_id, channel_id, user_id, Change.SETTINGS, admin
            )
            now = channels.choice_in(session, team_id, channel_id, self.lengths)
            for change in changes_asked(choice, now):
                if refused is None:
                    refused = refusal_under_lock(
                        session, team_id, channel_id, user_id, change, admin
                    )
            if refused is not None:
                return refused
            channels.write_choice(session, team_id, channel_id, user_id, choice)
        return now

    def store_schedule(
        self,
        client: WebClient,
        team_id: str,
        channel_id: str,
        user_id: str,
        form: ScheduleForm,
        enterprise_id: str | None = None,
    ) -> dict[str, str]:
        """The ``/varulv schedule`` form as submitted: set the channel's standing table (with the
        workspace's Grid organisation, which the tables it opens keep), or remove it, if the
        person may, and tell the channel (through the outbox). What to show next to the form's
        fields instead when it is wrong or refused, in the channel's words; empty once saved."""
        spoken = self.form_words(team_id, channel_id)
        wrong = schedule_screen.form_errors(form, spoken)
        if not channel_id or not user_id:
            wrong = {schedule_screen.DAYS: spoken._(NO_CHANNEL, command="/varulv schedule")}
        if wrong:
            return wrong
        try:
            refused = self.write_schedule(client, team_id, channel_id, user_id, form, enterprise_id)
        except SQLAlchemyError:
            log.exception("could not store the standing table")
            return {schedule_screen.DAYS: spoken._(NO_DATABASE)}
        if refused is not None:
            return {schedule_screen.DAYS: permissions_screen.refused(refused, spoken)}
        log.info("standing table removed" if form.remove else "standing table set")
        if form.schedule is None:
            text = schedule_screen.removed_notice(user_id, spoken)
        else:
            first = next_opening(form.schedule, self.now())
            text = schedule_screen.set_notice(user_id, form.schedule, first, spoken)
        about = About.UNSCHEDULED if form.schedule is None else About.SCHEDULE
        self._told(text, team_id, channel_id, enterprise_id, about, user_id)
        return {}

    def form_words(self, team_id: str, channel_id: str) -> Words:
        """The channel's words for its schedule form; English for a form that names no channel,
        or when the database that keeps the channel's language cannot be reached."""
        if not channel_id:
            return ENGLISH
        try:
            return self.channel_words(team_id, channel_id)
        except SQLAlchemyError:
            log.warning("the channel's language could not be read", exc_info=True)
            return ENGLISH

    def write_schedule(
        self,
        client: WebClient,
        team_id: str,
        channel_id: str,
        user_id: str,
        form: ScheduleForm,
        enterprise_id: str | None = None,
    ) -> Refusal | None:
        """Set the channel's standing table, or remove it, if the person may: decided under the
        channel's lock, in the transaction that writes it. The one who sets it owns it."""
        admin = AdminFlags(client, user_id)
        refused = self.refusal(client, team_id, channel_id, user_id, Change.SCHEDULE, admin)
        if refused is not None:
            return refused
        with transaction(self.sessions) as session:
            refused = refusal_under_lock(
                session, team_id, channel_id, user_id, Change.SCHEDULE, admin
            )
            if refused is not None:
                return refused
            if form.schedule is not None:
                standing.save(
                    session, team_id, channel_id, user_id, form.schedule, self.now(), enterprise_id
                )
            else:
                standing.remove(session, team_id, channel_id)
        return None

    def _told(
        self,
        text: str,
        team_id: str,
        channel_id: str,
        enterprise_id: str | None,
        about: About,
        by: str,
    ) -> None:
        """A change already stored is told to the channel: should the notice fail to reach the
        outbox, the change stands all the same, and the failure is logged."""
        try:
            self.tell_channel(team_id, channel_id, text, enterprise_id, about, by)
        except SQLAlchemyError:
            log.exception("the channel could not be told of a change")

    def settings_now(self, team_id: str, channel_id: str) -> ChannelChoice:
        return channels.channel_choice(self.sessions, team_id, channel_id, self.lengths)

    def schedule_now(
        self,
        team_id: str,
        channel_id: str,
        zone: str,
        admin: bool,
        asked_from: str,
    ) -> StandingNow:
        """The channel's standing table as set, for its form. A schedule whose own zone this
        machine no longer knows is given in ``zone`` (the person's), the lost one named.
        The workspace's other standing tables too, for one who sees them (``admin``: Slack's
        admin flags; ``asked_from``: the asker's own workspace)."""
        elsewhere: tuple[OtherTable, ...] = ()
        more = 0
        sees_all = sees_every_standing_table(Asker(is_admin=admin), asked_from == team_id)
        with transaction(self.sessions) as session:
            if sees_all:
                shown = schedule_screen.ELSEWHERE_SHOWN
                others, total = standing.elsewhere(session, team_id, channel_id, shown)
                elsewhere = tuple(_other_table(other) for other in others)
                more = total - len(elsewhere)
            row = standing.get(session, team_id, channel_id)
            if row is None:
                return StandingNow(None, None, None, elsewhere=elsewhere, more=more)
            if row.zone in known_zones():
                current = standing.schedule_of(row)
                return StandingNow(current, row.next_at, row.paused, None, elsewhere, more)
            lost = row.zone  # e.g. a zone the time zone database dropped
        return StandingNow(standing.schedule_of(row, zone), None, None, lost, elsewhere, more)

    def toggle_regular(
        self, team_id: str, user_id: str, game_id: int, target: str | None, where: str = ""
    ) -> str:
        """*I usually play*: on a lobby the button names its game; on the App Home, the channel.
        ``where``: the channel it was clicked in, whose language says a button names nothing."""
        with transaction(self.sessions) as session:
            if game_id:
                game = session.get(Game, game_id)
                channel = game.channel_id if game is not None and game.team_id == team_id else ""
            else:
                channel = slack_id(target)
            if not channel:
                return self.channel_words(team_id, where)._(STALE) if where else STALE
            marked = standing.toggle_regular(session, team_id, channel, user_id)
            scheduled = standing.get(session, team_id, channel) is not None
        spoken = self.channel_words(team_id, channel)
        return schedule_screen.regular_toggled(channel, marked, scheduled, spoken)

    def game_json(self, team_id: str, channel: str, game_id: int) -> str:
        """A finished game as the referee's input, only in the channel where it was played."""
        with transaction(self.sessions) as session:
            game = history.finished(session, team_id, game_id)
        if game is None or game.state.channel != channel:
            return self.channel_words(team_id, channel)._(NOT_OVER) if channel else NOT_OVER
        spoken = words(game.state.language)
        return last_screen.game_json(game.referee_input(), spoken, self.addresses.source_url)

    def forget_me(
        self,
        teams: Sequence[str],
        user_id: str,
        team_id: str = "",
        channel_id: str = "",
        organisation: bool = False,
    ) -> str:
        """``/varulv forget me``: the person erased from what ``teams`` keep (``teams_of``:
        every table of the ``organisation``, where Varulv is installed on all of it), answered
        in the language of the channel's table where it was typed."""
        spoken = self.channel_words(team_id, channel_id) if channel_id else ENGLISH
        with transaction(self.sessions) as session:
            done = erasure.forget_me(session, teams, user_id, forgotten_screen.erased_name)
        return forgotten_screen.forget_me_answer(done, spoken, organisation)

    def channel_words(self, team_id: str, channel_id: str) -> Words:
        """The words of the channel's language (``/varulv settings``)."""
        return words(self.settings_now(team_id, channel_id).language)

    def unknown_word(self, team_id: str, channel_id: str, typed: str) -> str:
        """``/varulv`` followed by a word it does not know, answered in the channel's language."""
        return help_screen.unknown_word(typed, self.channel_words(team_id, channel_id))

    def help_for(self, team_id: str, channel_id: str) -> Screen:
        """Help with this channel's phase lengths, in its language: a number stated for every
        channel would be wrong wherever one set its own."""
        chosen = self.settings_now(team_id, channel_id)
        spoken = words(chosen.language)
        lengths = settings_screen.lengths(chosen, spoken)
        return help_screen.help_screen(lengths, spoken, self.addresses.support_url)

    def score(self, team_id: str, channel_id: str) -> Screen:
        rows = scores.leaderboard(self.sessions, team_id, channel_id)
        spoken = self.channel_words(team_id, channel_id)
        with transaction(self.sessions) as session:
            season, played = history.current_season(session, team_id, channel_id, self.now())
        named = season_name(season, spoken)
        return help_screen.leaderboard(channel_id, rows, (named, standings(played)), spoken)

    def last(self, team_id: str, channel_id: str) -> Screen | str:
        spoken = self.channel_words(team_id, channel_id)
        with transaction(self.sessions) as session:
            game = history.last_finished(session, team_id, channel_id)
        if game is None:
            return spoken._(last_screen.NONE_YET)
        by_key = {label.key: label for label in labels(game.state.names)}
        spoken = words(game.state.language)
        source = self.addresses.source_url
        return last_screen.last_reveal(game.game_id, game.outcome, by_key, spoken, source)

    def teams_of(
        self, team_id: str, user_id: str, enterprise_id: str | None, org_wide: bool
    ) -> list[str]:
        """The workspaces whose tables hold a person's own record: their own, and, where Varulv
        is installed on the whole organisation, every workspace of it that keeps a channel's
        table or a game that seats them (a table in a shared channel may be kept under
        another)."""
        if not (org_wide and enterprise_id):
            return [team_id]
        others = channels.teams_of_organisation(self.sessions, enterprise_id, user_id)
        return [team_id, *sorted(set(others) - {team_id})]

    def home_tab(self, teams: Sequence[str], user_id: str) -> View:
        """The person's App Home, in the language of the last table they sat at: their record
        over the tables ``teams`` keep, and each channel's season now."""
        record, boards = scores.record_of(self.sessions, teams, user_id)
        with transaction(self.sessions) as session:
            newest = session.scalars(
                select(Game.language)
                .join(Seat, Seat.game_id == Game.id)
                .where(Game.team_id.in_(teams), Seat.user_id == user_id)
                .order_by(Game.id.desc())
                .limit(1)
            ).first()
        spoken = words(Language(newest or Language.ENGLISH))
        places = [(team, channel) for team, channel, _ in boards]
        seasons = self.channel_seasons(teams, user_id, places, spoken)
        shown = [(channel, rows) for _, channel, rows in boards]
        support = self.addresses.support_url
        return home_screen.home_view(user_id, record, shown, seasons, spoken, support)

    def channel_seasons(
        self,
        teams: Sequence[str],
        user_id: str,
        places: list[tuple[str, str]],
        spoken: Words = ENGLISH,
    ) -> dict[str, home_screen.ChannelSeason]:
        """Each channel's season now, and whether the person usually plays there: ``places``
        are (the workspace keeping its table, the channel)."""
        shown = {}
        with transaction(self.sessions) as session:
            regular_in = set(standing.channels_of_regular(session, teams, user_id))
            for team, channel in places[: home_screen.HOME_BOARDS]:
                season, played = history.current_season(session, team, channel, self.now())
                shown[channel] = home_screen.ChannelSeason(
                    season_name(season, spoken), standings(played), channel in regular_in
                )
        return shown
