"""Button clicks: lobby, night, day and vote. The acting user is always the signed payload's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App
from slack_bolt.context.respond import Respond

from slackapp.blocks import ids
from slackapp.blocks.ids import ButtonValue
from slackapp.flow import day, lobby, night, vote
from slackapp.flow.table import Reply, Table
from slackapp.listeners.replies import run_step, send

Step = Callable[[Table, ButtonValue, str, str, str], Reply]
"""(table, value, user id, user name, action id) → the private reply."""

STALE = "That button doesn't belong to any game I know."


def _user(body: dict[str, Any]) -> tuple[str, str]:
    user = body.get("user") or {}
    user_id = str(user.get("id") or "")
    return user_id, str(user.get("name") or user.get("username") or user_id)


def _listen(app: App, table: Table, action: str, step: Step) -> None:
    def acknowledge(ack: Ack) -> None:
        ack()

    def handle(body: dict[str, Any], respond: Respond) -> None:
        user_id, user_name = _user(body)
        actions = body.get("actions") or [{}]
        clicked = actions[0] if isinstance(actions[0], dict) else {}
        try:
            value = ButtonValue.unpack(clicked.get("value"))
        except ValueError:
            send(respond, Reply(STALE))
            return
        action_id = str(clicked.get("action_id") or "").split(":")[0]
        run_step(respond, lambda: step(table, value, user_id, user_name, action_id))

    app.action(ids.pattern(action))(ack=acknowledge, lazy=[handle])


def _night(table: Table, value: ButtonValue, user_id: str, _name: str, action: str) -> Reply:
    return night.night_action(table, value.game_id, user_id, action, value.target)


def _vote(table: Table, value: ButtonValue, user_id: str, _name: str, _action: str) -> Reply:
    if value.target is None:
        return Reply(STALE)
    return vote.cast(table, value.game_id, user_id, value.target)


def register(app: App, table: Table) -> None:
    _listen(app, table, ids.JOIN, lambda t, v, u, n, a: lobby.join(t, v.game_id, u, n))
    _listen(app, table, ids.LEAVE, lambda t, v, u, n, a: lobby.leave(t, v.game_id, u))
    _listen(app, table, ids.FILL_BOTS, lambda t, v, u, n, a: lobby.fill_with_bots(t, v.game_id, u))
    _listen(app, table, ids.START, lambda t, v, u, n, a: lobby.start(t, v.game_id, u))
    _listen(app, table, ids.CANCEL, lambda t, v, u, n, a: lobby.cancel(t, v.game_id, u))
    for action in (
        ids.NIGHT_PEEK,
        ids.NIGHT_LOOK,
        ids.NIGHT_ROB,
        ids.NIGHT_SWAP,
        ids.NIGHT_SWAP_RESET,
        ids.NIGHT_SKIP,
        ids.NIGHT_CONFIRM,
    ):
        _listen(app, table, action, _night)
    _listen(
        app, table, ids.HEARD_ENOUGH, lambda t, v, u, n, a: day.toggle_heard_enough(t, v.game_id, u)
    )
    _listen(app, table, ids.VOTE, _vote)
