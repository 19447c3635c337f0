"""Button clicks: lobby, night, day and vote, each translated into the machine's command.

The acting user is always the signed payload's; what the click means is the machine's to
decide.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from slack_bolt import App, BoltContext
from slack_bolt.context.respond import Respond
from slack_sdk import WebClient

from slackapp.blocks import ids
from slackapp.blocks.ids import ButtonValue
from slackapp.game import machine as m
from slackapp.listeners.ack import Reply, acknowledge_then, run_step, send
from slackapp.logs import log_context
from slackapp.shapes import display_name, slack_id
from slackapp.steps import Steps


@dataclass(frozen=True)
class Click:
    """One button press, as the signed payload tells it."""

    value: ButtonValue
    user_id: str
    user_name: str
    action: str
    """The action id without its ``:N`` index."""
    action_ts: Decimal | None


STALE = "That button doesn't belong to any game I know."


def _user(body: dict[str, Any]) -> tuple[str, str]:
    """Who clicked: the signed payload's ``user``, and nothing else in it."""
    user = body.get("user")
    if not isinstance(user, dict):
        return "", ""
    user_id = slack_id(user.get("id"))
    return user_id, display_name(user.get("name") or user.get("username"), user_id)


def _clicked(body: dict[str, Any]) -> dict[str, Any]:
    """The element acted on; empty when the payload has none we can read."""
    actions = body.get("actions")
    if isinstance(actions, list) and actions and isinstance(actions[0], dict):
        return actions[0]
    return {}


def _timestamp(raw: object) -> Decimal | None:
    try:
        stamp = Decimal(str(raw))
    except ArithmeticError:
        return None
    return stamp if stamp.is_finite() and 0 < stamp < 10**11 else None


def _peek_index(target: str | None) -> int:
    """A centre card's button value ("0" or "1"); anything else names no card (-1)."""
    return int(target) if target in ("0", "1") else -1


def command_for(click: Click) -> m.Event | None:
    """The machine's command a click means, or None when the button names nothing it needs."""
    user, target = click.user_id, click.value.target
    simple: dict[str, Callable[[str], m.Event]] = {
        ids.LEAVE: m.Leave,
        ids.FILL_BOTS: m.FillWithBots,
        ids.CANCEL: m.Cancel,
        ids.START: m.Start,
        ids.NIGHT_SWAP_RESET: m.NightResetPick,
        ids.NIGHT_SKIP: m.NightSkip,
        ids.NIGHT_CONFIRM: m.NightConfirm,
        ids.HEARD_ENOUGH: m.HeardEnough,
    }
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


def register(app: App, steps: Steps) -> None:
    def handle(
        body: dict[str, Any], respond: Respond, context: BoltContext, client: WebClient
    ) -> None:
        user_id, user_name = _user(body)
        clicked = _clicked(body)
        raw = clicked.get("value")
        try:
            value = ButtonValue.unpack(raw if isinstance(raw, str) else None)
        except ValueError:
            send(respond, Reply(STALE))
            return
        click = Click(
            value=value,
            user_id=user_id,
            user_name=user_name,
            action=str(clicked.get("action_id") or "").split(":")[0],
            action_ts=_timestamp(clicked.get("action_ts")),
        )
        event = command_for(click)
        if event is None:
            send(respond, Reply(STALE))
            return
        team_id = str(context.team_id or "")
        with log_context(team_id=team_id, game_id=value.game_id, user_id=user_id):
            if isinstance(event, m.Start):  # the cards' DMs are opened first, as the clicker's app
                run_step(respond, lambda: steps.start(value.game_id, user_id, client))
            else:
                run_step(respond, lambda: steps.act(value.game_id, event))

    for action in ids.ALL_ACTIONS:
        app.action(ids.pattern(action))(acknowledge_then(app, handle))


def register_unknown(app: App) -> None:
    """Any other button (an old message's, or a payload naming no action Varulv has) gets an
    answer instead of Bolt's 404, which Slack would show the person as an error. Registered
    last: Bolt gives a request to the first listener that matches."""

    def answer(respond: Respond) -> None:
        send(respond, Reply(STALE))

    app.action(re.compile(".*"))(acknowledge_then(app, answer))
