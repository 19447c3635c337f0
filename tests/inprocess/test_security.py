"""Only Slack's signed, recent requests get in, and a request acts only for the person Slack
signed it for, whatever else its payload says."""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qsl, urlencode

from sqlalchemy import Engine, text

from slackapp.fakeslack import FakeSlack, SignedRequest, signed_headers
from slackapp.game import Card
from tests.e2e.conftest import SIGNING_SECRET
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.reliability.support import (
    new_people,
    seat_rows,
    signed,
    signed_click,
    signed_command,
)


def resigned(request: SignedRequest, body: str, secret: str = SIGNING_SECRET) -> SignedRequest:
    """The same request with another body, signed as Slack would sign it."""
    return SignedRequest(body, {**request.headers, **signed_headers(secret, body)})


def with_payload(request: SignedRequest, change: dict[str, object]) -> SignedRequest:
    """An interaction with fields of its payload replaced, and signed again (as if by Slack)."""
    form = dict(parse_qsl(request.body))
    payload = {**json.loads(form["payload"]), **change}
    return resigned(request, urlencode({**form, "payload": json.dumps(payload)}))


def forged(request: SignedRequest) -> list[tuple[str, dict[str, str]]]:
    """The ways a request can fail to be Slack's: (what, headers to send instead)."""
    stale = int(time.time()) - 6 * 60
    kept = {k: v for k, v in request.headers.items() if not k.startswith("X-Slack")}
    return [
        ("no signature", kept),
        ("another secret", {**kept, **signed_headers("not-the-secret", request.body)}),
        ("stale", {**kept, **signed_headers(SIGNING_SECRET, request.body, stale)}),
        ("from the future", {**kept, **signed_headers(SIGNING_SECRET, request.body, stale + 720)}),
        ("for another body", {**kept, **signed_headers(SIGNING_SECRET, request.body + "&x=1")}),
        ("timestamp not a number", {**request.headers, "X-Slack-Request-Timestamp": "soon"}),
        ("signature not ASCII", {**request.headers, "X-Slack-Signature": "v0=åäö"}),
        ("signature empty", {**request.headers, "X-Slack-Signature": ""}),
    ]


def test_unsigned_or_stale_requests_are_refused_before_anything_happens(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, bo = new_people(fake, 2)
    table = Table(fake, app, db)
    table.command(anna)
    lobby = table.lobby()
    attempts = {
        "/varulv": signed_command(fake, bo, f"{table.channel}X"),
        "Join": signed_click(fake, bo, lobby, lobby.button("Join").action_id),
        "App Home": signed(fake, lambda: fake.app_home_opened(bo)),
    }
    since = len(fake.calls)
    for name, request in attempts.items():
        for how, headers in forged(request):
            answer = app.send_raw(request.body.encode(), headers)
            assert answer.status_code == 401, f"{name}, {how}: {answer.status_code}"

    assert fake.calls[since:] == [], "no Web API call, no reply: nothing was done"
    assert [seat["user_id"] for seat in table.seats()] == [anna], "bo never joined"
    with db.connect() as connection:
        opened = connection.execute(
            text("SELECT count(*) FROM games WHERE channel_id = :c"), {"c": f"{table.channel}X"}
        ).scalar_one()
    assert opened == 0
    assert fake.home_view(bo) is None
    # The same requests, signed by Slack just now, do get in.
    for request in attempts.values():
        assert app.send(request).status_code == 200
    table.wait(lambda: len(table.seats()) == 2 or None, "bo to join")


def test_a_payload_acts_only_for_the_user_slack_signed_it_for(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, bo, cia = new_people(fake, 3)
    stranger = new_people(fake, 1)[0]
    table = Table(fake, app, db)
    table.seat_people(anna, [bo, cia])
    table.arrange_deal(
        lambda dealt, center: dealt[anna] is Card.ROBBER and dealt[bo] is Card.WEREWOLF
    )
    table.start(anna)
    anna_dm, bo_dm = table.dm(anna), table.dm(bo)
    rob_bo = next(b for b in anna_dm.buttons() if b.text == fake.user_name(bo))

    # bo presses the Robber's button from anna's message, naming anna everywhere but in "user".
    as_bo = signed_click(fake, bo, anna_dm, rob_bo.action_id)
    claims_to_be_anna = with_payload(
        as_bo,
        {
            "user_id": anna,
            "user": {"id": bo, "name": fake.user_name(anna), "username": fake.user_name(anna)},
            "container": {
                "type": "message",
                "channel_id": anna_dm.channel,
                "message_ts": anna_dm.ts,
            },
        },
    )
    assert app.send(claims_to_be_anna).status_code == 200
    table.ephemeral(bo, "not a move your card can make")
    # The stranger, with anna's name: not seated, so nothing.
    as_stranger = with_payload(
        signed_click(fake, stranger, anna_dm, rob_bo.action_id),
        {"user": {"id": stranger, "name": fake.user_name(anna)}, "user_id": anna},
    )
    assert app.send(as_stranger).status_code == 200
    table.ephemeral(stranger, "not seated")
    # A payload with no user at all names nobody, even if it says anna elsewhere.
    nobody = with_payload(as_bo, {"user": None, "user_id": anna})
    assert app.send(nobody).status_code == 200

    table.play_night([cia])  # a later step, so the earlier ones are surely done
    seats = seat_rows(db, table.game_id())
    assert not seats[anna]["confirmed"] and seats[anna]["night_choice"] is None, "anna untouched"
    assert not seats[bo]["confirmed"], "bo's card cannot rob"
    assert fake.message(anna_dm.channel, anna_dm.ts).buttons(), "anna may still choose"
    assert fake.message(bo_dm.channel, bo_dm.ts).buttons()

    # Slash commands: the form's user_id decides, not the user_name.
    stop_as_anna = signed_command(fake, stranger, table.channel, "stop")
    form = dict(parse_qsl(stop_as_anna.body))
    renamed = resigned(stop_as_anna, urlencode({**form, "user_name": fake.user_name(anna) or ""}))
    assert app.send(renamed).status_code == 200
    table.ephemeral(stranger, "can stop this game")
    assert table.game()["phase"] == "night"


def from_workspace(
    request: SignedRequest,
    user: str,
    team: str,
    enterprise: str | None = None,
    org_wide: bool = False,
) -> SignedRequest:
    """A click as Slack signs it for ``user`` of workspace ``team`` (of an Enterprise Grid
    organisation, when ``enterprise``; ``org_wide``: Varulv is installed on all of it)."""
    change: dict[str, object] = {
        "team": {"id": team, "domain": team.lower()},
        "user": {"id": user, "name": user.lower(), "team_id": team},
        "is_enterprise_install": org_wide,
    }
    if enterprise is not None:
        change["enterprise"] = {"id": enterprise, "name": "The Org"}
    return with_payload(request, change)


OTHER_TEAM = "T0OTHERTEAM"
ELSEWHERE = "belongs to another workspace"


def test_a_click_signed_for_another_workspace_never_acts_on_this_ones_table(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, bo, cia = new_people(fake, 3)
    stranger = new_people(fake, 1)[0]
    table = Table(fake, app, db)
    lobby = table.seat_people(anna, [bo, cia])
    for label in ("Join", "Start", "Cancel"):
        button = next(b for b in lobby.buttons() if b.text == label)
        from_elsewhere = from_workspace(
            signed_click(fake, stranger, lobby, button.action_id), stranger, OTHER_TEAM
        )
        before = len(fake.ephemerals(stranger))
        assert app.send(from_elsewhere).status_code == 200

        def answered(before: int = before) -> bool | None:
            return len(fake.ephemerals(stranger)) > before or None

        table.wait(answered, label)
        assert ELSEWHERE in fake.ephemerals(stranger)[-1].rendered_text, label
    assert stranger not in seat_rows(db, table.game_id()), "no seat for the other workspace"
    assert not [
        call
        for call in fake.calls
        if call.method == "conversations.open" and call.params.get("users") == stranger
    ]
    assert table.game()["phase"] == "lobby", "nobody from elsewhere started or cancelled it"
    table.start(anna)  # the table's own workspace is not held up by it
    table.play_night([anna, bo, cia])
    table.heard_enough([anna, bo])
    table.wait_for_phase("vote")
    table.vote({anna: "Nobody", bo: "Nobody", cia: "Nobody"})
    reveal = table.reveal()
    again = reveal.button("Play again")
    from_elsewhere = from_workspace(
        signed_click(fake, stranger, reveal, again.action_id), stranger, OTHER_TEAM
    )
    before = len(fake.ephemerals(stranger))
    assert app.send(from_elsewhere).status_code == 200
    table.wait(lambda: len(fake.ephemerals(stranger)) > before or None, "the answer")
    assert ELSEWHERE in fake.ephemerals(stranger)[-1].rendered_text
    with db.connect() as connection:
        games = connection.scalar(
            text("SELECT count(*) FROM games WHERE channel_id = :c"), {"c": table.channel}
        )
    assert games == 1, "no new table from another workspace's Play again"


def test_an_organisation_wide_install_lets_its_workspaces_play_together_and_no_one_else(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, sister, per_workspace, other_org = new_people(fake, 4)
    table = Table(fake, app, db)
    opening = signed_command(fake, anna, table.channel)
    form = dict(parse_qsl(opening.body))
    in_the_org = {"enterprise_id": "E0ORG", "is_enterprise_install": "true"}
    opened = resigned(opening, urlencode({**form, **in_the_org}))
    assert app.send(opened).status_code == 200
    lobby = table.lobby()
    assert table.game()["enterprise_id"] == "E0ORG"
    team = table.game()["team_id"]
    join = next(b for b in lobby.buttons() if b.text == "Join").action_id

    def click(user: str, team: str, enterprise: str, org_wide: bool) -> None:
        request = signed_click(fake, user, lobby, join)
        sent = from_workspace(request, user, team, enterprise, org_wide)
        assert app.send(sent).status_code == 200

    click(sister, "T0SISTER", "E0ORG", True)  # another workspace of the org: one install
    table.wait(lambda: sister in seat_rows(db, table.game_id()) or None, "the sister seated")
    click(per_workspace, "T0SISTER", "E0ORG", False)  # installed per workspace: not this one
    table.ephemeral(per_workspace, ELSEWHERE)
    click(other_org, team, "E0OTHERORG", True)  # the same team id, signed for another org
    table.ephemeral(other_org, ELSEWHERE)
    assert set(seat_rows(db, table.game_id())) == {anna, sister}
