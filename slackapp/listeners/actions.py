"""Button clicks: lobby, night, day and vote, each translated into the machine's command.

The acting user is always the signed payload's; what the click means is the machine's to
decide.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from slack_bolt import App, BoltContext
from slack_bolt.context.respond import Respond
from slack_bolt.request import BoltRequest
from slack_sdk import WebClient

from slackapp.blocks import ids, render
from slackapp.blocks.ids import ButtonValue
from slackapp.blocks.words import Words
from slackapp.delivery.copies import Copy
from slackapp.game import machine as m
from slackapp.game.effects import DAY_BOARD, LOBBY_BOARD, VOTE_BOARD, PersonalBallotView, dm_surface
from slackapp.inbox import Inbox
from slackapp.listeners.ack import Lanes, Reply, acknowledge_then, header, run_step
from slackapp.listeners.events import publish_home_tab
from slackapp.logs import log_context
from slackapp.names import lookup_client
from slackapp.services.channel import ChannelService
from slackapp.services.game import GameService, Refused
from slackapp.services.uow import Workspace
from slackapp.shapes import display_name, slack_id


@dataclass(frozen=True)
class Click:
    """One button press, as the signed payload tells it."""

    value: ButtonValue
    user_id: str
    user_name: str
    action: str
    """The action id without its ``:N`` index."""
    action_ts: Decimal | None


def _user(body: dict[str, Any]) -> tuple[str, str]:
    """Who clicked: the signed payload's ``user``, and nothing else in it."""
    user = body.get("user")
    if not isinstance(user, dict):
        return "", ""
    user_id = slack_id(user.get("id"))
    return user_id, display_name(user.get("name") or user.get("username"), user_id)


def table_team(channels: ChannelService, asking: Workspace, channel: str) -> str:
    """The workspace whose table a click in ``channel`` is about (a shared channel's home, in
    an organisation); read inside the click's step, so a database away is answered as such."""
    return channels.table_team(asking.team_id, channel, asking.enterprise_id, asking.org_wide)


def asking_of(body: dict[str, Any], context: BoltContext) -> Workspace:
    """Where the click came from: the workspace Slack signed it for (each step checks it owns
    the game, under the game's lock) and the channel of the message it was on."""
    where = body.get("channel")
    container = body.get("container")
    channel = slack_id(where.get("id")) if isinstance(where, dict) else ""
    if not channel and isinstance(container, dict):
        channel = slack_id(container.get("channel_id"))
    team_id = str(context.team_id or "")
    return Workspace(team_id, context.enterprise_id, bool(context.is_enterprise_install), channel)


def _clicked(body: dict[str, Any]) -> dict[str, Any]:
    """The element acted on; empty when the payload has none we can read."""
    actions = body.get("actions")
    if isinstance(actions, list) and actions and isinstance(actions[0], dict):
        return actions[0]
    return {}


ACTION_TS_ALLOWANCE = Decimal(1)
"""How far a click's ``action_ts`` may lie past the request's own (whole-second) timestamp."""


def sent_at(request: BoltRequest, now: Callable[[], float] = time.time) -> Decimal:
    """When Slack sent the request: its signed ``X-Slack-Request-Timestamp`` (the server has
    checked it is within five minutes of now), or now where there is none (Socket Mode)."""
    stamp = header(request, "x-slack-request-timestamp")
    return Decimal(stamp) if stamp.isdigit() else Decimal(int(now()))


def _timestamp(raw: object, sent: Decimal) -> Decimal | None:
    """The click's ``action_ts``, no later than the request that carries it.

    The later click wins (a ballot, a *Heard enough* mark), so an ``action_ts`` forged in the
    year 2100 would win against every click after it. Slack stamps a click before it sends the
    request, so a stamp past the request's timestamp (plus the second that timestamp rounds
    away) is clamped to that bound rather than refused: the click still counts, in its place.
    """
    try:
        stamp = Decimal(str(raw))
    except ArithmeticError:
        return None
    if not stamp.is_finite() or stamp <= 0:
        return None
    return min(stamp, sent + ACTION_TS_ALLOWANCE)


def _peek_index(target: str | None) -> int:
    """A centre card's button value ("0" or "1"); anything else names no card (-1)."""
    return int(target) if target in ("0", "1") else -1


CHANNEL_SURFACES = {
    ids.JOIN: LOBBY_BOARD,
    ids.LEAVE: LOBBY_BOARD,
    ids.FILL_BOTS: LOBBY_BOARD,
    ids.START: LOBBY_BOARD,
    ids.HEARD_ENOUGH: DAY_BOARD,
    ids.VOTE: VOTE_BOARD,
}
"""The game's channel message each channel button is on."""
NIGHT_ACTIONS = frozenset(
    {
        ids.NIGHT_PEEK,
        ids.NIGHT_LOOK,
        ids.NIGHT_ROB,
        ids.NIGHT_SWAP,
        ids.NIGHT_SWAP_RESET,
        ids.NIGHT_SKIP,
        ids.NIGHT_CONFIRM,
    }
)
"""Buttons of a person's own night message, in their DM."""


def copy_clicked(body: dict[str, Any], click: Click) -> Copy | None:
    """Which copy of which of the game's messages the button was on, from the payload's
    ``container`` (None for an ephemeral message, or a button on no message of the game's)."""
    container = body.get("container")
    if not isinstance(container, dict) or container.get("is_ephemeral") is True:
        return None
    channel, ts = slack_id(container.get("channel_id")), container.get("message_ts")
    if not channel or not isinstance(ts, str) or not ts or len(ts) > 32:
        return None
    if click.action in NIGHT_ACTIONS:
        surface = dm_surface(click.user_id)
    elif click.action in CHANNEL_SURFACES:
        surface = CHANNEL_SURFACES[click.action]
    else:
        return None
    url = body.get("response_url")
    return Copy(surface, channel, ts, url if isinstance(url, str) and url else None)


def command_for(click: Click) -> m.Event | None:
    """The machine's command a click means, or None when the button names nothing it needs."""
    user, target = click.user_id, click.value.target
    simple: dict[str, Callable[[str], m.Event]] = {
        ids.LEAVE: m.Leave,
        ids.FILL_BOTS: m.FillWithBots,
        ids.CANCEL_YES: m.Cancel,
        ids.START: m.Start,
        ids.NIGHT_SWAP_RESET: m.NightResetPick,
        ids.NIGHT_SKIP: m.NightSkip,
        ids.NIGHT_CONFIRM: m.NightConfirm,
    }
    if click.action == ids.HEARD_ENOUGH:
        return m.HeardEnough(user, click.action_ts)
    if click.action in simple:
        return simple[click.action](user)
    if click.action == ids.JOIN:
        return m.Join(user, click.user_name)
    if target is None:
        return None
    match click.action:
        case ids.NIGHT_PEEK:
            return m.NightPeek(user, _peek_index(target))
        case ids.NIGHT_LOOK:
            return m.NightLook(user, None if target == ids.CENTER else target)
        case ids.NIGHT_ROB:
            return m.NightRob(user, target)
        case ids.NIGHT_SWAP:
            return m.NightPick(user, target)
        case ids.VOTE:
            return m.CastBallot(user, None if target == ids.NOBODY else target, click.action_ts)
    return None


def register(
    app: App, games: GameService, channels: ChannelService, inbox: Inbox | None = None
) -> None:
    def handle(
        body: dict[str, Any],
        respond: Respond,
        context: BoltContext,
        client: WebClient,
        request: BoltRequest,
    ) -> None:
        user_id, user_name = _user(body)
        clicked = _clicked(body)
        asking = asking_of(body, context)
        team_id = asking.team_id
        raw = clicked.get("value")
        try:
            value = ButtonValue.unpack(raw if isinstance(raw, str) else None)
        except ValueError:
            run_step(respond, lambda: games.stale(asking))
            return
        if not user_id:  # Slack names who clicked: without a person it is nobody's move
            run_step(respond, lambda: games.stale(asking, value.game_id))
            return
        click = Click(
            value=value,
            user_id=user_id,
            user_name=user_name,
            action=str(clicked.get("action_id") or "").split(":")[0],
            action_ts=_timestamp(clicked.get("action_ts"), sent_at(request)),
        )

        game_id = value.game_id

        def spoken() -> Words:  # should the step fail, it says so in the game's words
            return games.words_of(game_id, asking)

        if click.action == ids.PLAY_AGAIN:  # opens a new game rather than changing this one
            with log_context(game_id=game_id, user_id=user_id):
                run_step(
                    respond, lambda: games.play_again(game_id, user_id, user_name, asking), spoken
                )
            return
        if click.action == ids.CANCEL:  # asked first, privately, only if they may cancel
            run_step(
                respond,
                lambda: Reply.shown(games.cancel_question(game_id, user_id, asking)),
                spoken,
            )
            return
        if click.action == ids.BALLOT:  # the person's own ballot, privately
            run_step(respond, lambda: _drawn(games.ballot(game_id, user_id, asking)), spoken)
            return
        event = command_for(click)
        if event is None:
            run_step(respond, lambda: games.stale(asking, game_id))
            return
        on = copy_clicked(body, click)  # a second copy clicked becomes the message
        with log_context(team_id=team_id, game_id=game_id, user_id=user_id):
            if isinstance(event, m.Start):  # DMs opened and names asked first, as the clicker's app
                names = lookup_client(client)
                run_step(
                    respond,
                    lambda: games.start(game_id, user_id, client, asking, on, names),
                    spoken,
                )
            elif isinstance(event, m.Join):  # under the name kept for them, else the handle
                run_step(respond, lambda: games.act(game_id, event, asking, on), spoken)
            elif isinstance(event, m.Cancel):
                # The answer takes the private question's place, and no other message's.
                on_question = _on_private_message(body)
                run_step(
                    respond,
                    lambda: Reply(
                        games.cancel(game_id, event, asking), replace_original=on_question
                    ),
                    spoken,
                )
            elif isinstance(event, m.CastBallot) and _on_private_message(body):
                run_step(
                    respond,
                    lambda: _drawn(*games.cast_on_ballot(game_id, event, asking), in_place=True),
                    spoken,
                )
            else:
                run_step(respond, lambda: games.act(game_id, event, asking, on), spoken)

    lanes = Lanes(lane_of, starts, app.listener_runner.listener_executor)
    for action in ids.ALL_ACTIONS:
        app.action(ids.pattern(action))(acknowledge_then(app, handle, lanes=lanes, inbox=inbox))
    register_other(app, games, channels, inbox)


def lane_of(body: dict[str, Any]) -> int | None:
    """The game a click is about, from its button's value (None when there is none)."""
    raw = _clicked(body).get("value")
    try:
        return ButtonValue.unpack(raw if isinstance(raw, str) else None).game_id or None
    except ValueError:
        return None


def starts(body: dict[str, Any]) -> bool:
    """Whether a click is a *Start*, which waits for Slack's turns to open its people's DMs."""
    return str(_clicked(body).get("action_id") or "").split(":")[0] == ids.START


def register_other(
    app: App, games: GameService, channels: ChannelService, inbox: Inbox | None = None
) -> None:
    """Buttons that are not a move: "I usually play" and the game for the referee."""

    def clicked(
        body: dict[str, Any], respond: Respond, context: BoltContext
    ) -> tuple[str, ButtonValue] | None:
        user_id, _ = _user(body)
        raw = _clicked(body).get("value")
        try:
            value = ButtonValue.unpack(raw if isinstance(raw, str) else None)
        except ValueError:
            value = None
        if value is None or not user_id:
            asking = asking_of(body, context)
            run_step(respond, lambda: games.stale(asking))
            return None
        return user_id, value

    def usually_play(
        body: dict[str, Any], respond: Respond, context: BoltContext, client: WebClient
    ) -> None:
        got = clicked(body, respond, context)
        if got is None:
            return
        user_id, value = got
        asking = asking_of(body, context)
        channel = asking.channel_id or slack_id(value.target)
        run_step(
            respond,
            lambda: channels.toggle_regular(
                table_team(channels, asking, channel),
                user_id,
                value.game_id,
                value.target,
                asking.channel_id,
            ),
            lambda: games.words_of(value.game_id, asking),
        )
        if not value.game_id:  # pressed on the Home tab: show it with the change
            teams = channels.teams_of(
                asking.team_id, user_id, asking.enterprise_id, asking.org_wide
            )
            publish_home_tab(channels, client, teams, user_id)

    def game_json(body: dict[str, Any], respond: Respond, context: BoltContext) -> None:
        got = clicked(body, respond, context)
        if got is None:
            return
        asking, game_id = asking_of(body, context), got[1].game_id
        # Only where the game was played: a channel's games are for those who can read it.
        where = body.get("channel")
        channel = slack_id(where.get("id")) if isinstance(where, dict) else ""
        with log_context(team_id=asking.team_id, game_id=game_id, user_id=got[0]):
            run_step(
                respond,
                lambda: channels.game_json(table_team(channels, asking, channel), channel, game_id),
                lambda: channels.channel_words(table_team(channels, asking, channel), channel),
            )

    app.action(ids.pattern(ids.USUALLY_PLAY))(acknowledge_then(app, usually_play, inbox=inbox))
    app.action(ids.pattern(ids.GAME_JSON))(acknowledge_then(app, game_json, inbox=inbox))


def _drawn(
    view: PersonalBallotView | Refused, answer: str | None = None, in_place: bool = False
) -> Reply:
    """The person's own ballot as their private answer, with what the step said (``answer``);
    once the vote is closed, only what it said, or why they have none. ``in_place``: drawn
    again over the ballot clicked."""
    if isinstance(view, Refused):
        return Reply(answer or view.text, replace_original=in_place)
    screen = render.personal_ballot(view, answer)
    return Reply(screen.text, screen.as_dicts(), replace_original=in_place)


def _on_private_message(body: dict[str, Any]) -> bool:
    """Whether the button was on an ephemeral message (as the question to cancel is)."""
    container = body.get("container")
    return isinstance(container, dict) and container.get("is_ephemeral") is True


def register_unknown(app: App, games: GameService, inbox: Inbox | None = None) -> None:
    """Any other button (an old message's, or a payload naming no action Varulv has) gets an
    answer instead of Bolt's 404, which Slack would show the person as an error, in the
    language of the channel it was clicked in. Registered last: Bolt gives a request to the
    first listener that matches."""

    def answer(body: dict[str, Any], respond: Respond, context: BoltContext) -> None:
        asking = asking_of(body, context)
        run_step(respond, lambda: games.stale(asking))

    app.action(re.compile(".*"))(acknowledge_then(app, answer, inbox=inbox))
