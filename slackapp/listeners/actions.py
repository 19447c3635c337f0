"""Button clicks: lobby, night, day and vote. The acting user is always the signed payload's."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_bolt.context.respond import Respond

from slackapp.blocks import ids
from slackapp.blocks.ids import ButtonValue
from slackapp.flow import day, lobby, night, vote
from slackapp.flow.table import Reply, Table
from slackapp.listeners.background import acknowledge_then
from slackapp.listeners.replies import run_step, send
from slackapp.logs import log_context
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


Step = Callable[[Table, Click], Reply]

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


def _listen(app: App, table: Table, action: str, step: Step) -> None:
    def acknowledge(ack: Ack) -> None:
        ack()

    def handle(body: dict[str, Any], respond: Respond, context: BoltContext) -> None:
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
        team_id = str(context.team_id or "")
        with log_context(team_id=team_id, game_id=value.game_id, user_id=user_id):
            here = table.for_workspace(team_id)  # the clicker's workspace, from the signed payload
            run_step(respond, lambda: step(here, click))

    app.action(ids.pattern(action))(acknowledge_then(app, acknowledge, handle))


def _night(table: Table, click: Click) -> Reply:
    return night.night_action(
        table, click.value.game_id, click.user_id, click.action, click.value.target
    )


def _vote(table: Table, click: Click) -> Reply:
    if click.value.target is None:
        return Reply(STALE)
    return vote.cast(table, click.value.game_id, click.user_id, click.value.target, click.action_ts)


def _join(table: Table, click: Click) -> Reply:
    return lobby.join(table, click.value.game_id, click.user_id, click.user_name)


def _game_and_user(step: Callable[[Table, int, str], Reply]) -> Step:
    """Most steps need only the game and who clicked."""
    return lambda table, click: step(table, click.value.game_id, click.user_id)


NIGHT_ACTIONS = (
    ids.NIGHT_PEEK,
    ids.NIGHT_LOOK,
    ids.NIGHT_ROB,
    ids.NIGHT_SWAP,
    ids.NIGHT_SWAP_RESET,
    ids.NIGHT_SKIP,
    ids.NIGHT_CONFIRM,
)


def register(app: App, table: Table) -> None:
    _listen(app, table, ids.JOIN, _join)
    _listen(app, table, ids.LEAVE, _game_and_user(lobby.leave))
    _listen(app, table, ids.FILL_BOTS, _game_and_user(lobby.fill_with_bots))
    _listen(app, table, ids.START, _game_and_user(lobby.start))
    _listen(app, table, ids.CANCEL, _game_and_user(lobby.cancel))
    for action in NIGHT_ACTIONS:
        _listen(app, table, action, _night)
    _listen(app, table, ids.HEARD_ENOUGH, _game_and_user(day.toggle_heard_enough))
    _listen(app, table, ids.VOTE, _vote)


def register_unknown(app: App) -> None:
    """Any other button (an old message's, or a payload naming no action Varulv has) gets an
    answer instead of Bolt's 404, which Slack would show the person as an error. Registered
    last: Bolt gives a request to the first listener that matches."""

    def acknowledge(ack: Ack) -> None:
        ack()

    def answer(respond: Respond) -> None:
        send(respond, Reply(STALE))

    app.action(re.compile(".*"))(acknowledge_then(app, acknowledge, answer))
