"""Signed requests whose payloads Slack would never send: each is refused (400) or answered with
a clear private message, and none changes anything or reaches the database as it came."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from sqlalchemy import Engine, text

from slackapp.blocks import ids
from slackapp.fakeslack import FakeSlack, SignedRequest, signed_headers
from tests import faults
from tests.e2e.conftest import SIGNING_SECRET
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.reliability.support import new_people, signed, signed_command


def resigned(request: SignedRequest, body: str) -> SignedRequest:
    return SignedRequest(body, {**request.headers, **signed_headers(SIGNING_SECRET, body)})


def with_form(request: SignedRequest, **change: str) -> SignedRequest:
    form = dict(parse_qsl(request.body, keep_blank_values=True))
    return resigned(request, urlencode({**form, **change}))


def with_payload(request: SignedRequest, change: Any) -> SignedRequest:
    """The interaction with its payload changed by ``change(payload)``, signed again."""
    form = dict(parse_qsl(request.body))
    payload = json.loads(form["payload"])
    change(payload)
    return resigned(request, urlencode({**form, "payload": json.dumps(payload)}))


def with_event(request: SignedRequest, **change: Any) -> SignedRequest:
    envelope = json.loads(request.body)
    envelope["event"].update(change)
    return resigned(request, json.dumps(envelope))


def channel_settings(db: Engine) -> list[Any]:
    with db.connect() as connection:
        return list(connection.execute(text("SELECT * FROM channel_settings ORDER BY 1, 2")))


def test_a_control_character_in_a_name_or_a_command_is_cleaned_before_it_is_stored(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """A NUL in a payload is refused at the door (test_unstorable_characters.py); users.info
    is not a payload, and other control characters are cleaned where they are kept."""
    anna, bo = new_people(fake, 2)
    fake.add_user(anna, display_name="an\x00na\x1b")  # the name users.info gives
    table = Table(fake, app, db)
    opening = with_form(signed_command(fake, anna, table.channel), user_name="an\x07na\x1b")
    assert app.send(opening).status_code == 200
    table.lobby()
    assert [seat["display_name"] for seat in table.seats()] == ["anna"]
    help_command = with_form(signed_command(fake, bo, table.channel), text="he\x07lp")
    assert app.send(help_command).status_code == 200
    table.ephemeral(bo, "least comfortable arguing out loud")  # help, after the ack
    faults.fail_next(fake, "users.info", "missing_scope")  # so the payload's name is all there is

    lobby = table.lobby()
    join = signed(fake, lambda: fake.click(bo, lobby, lobby.button("Join").action_id))

    def nul_name(payload: dict[str, Any]) -> None:
        payload["user"]["name"] = payload["user"]["username"] = "\x07"

    assert app.send(with_payload(join, nul_name)).status_code == 200
    table.wait(lambda: len(table.seats()) == 2 or None, "bo to join")
    assert table.seats()[1]["display_name"] == bo, "a name of nothing is the person's id"
    assert not [m for m in fake.ephemerals(bo) if "database" in m.rendered_text]


def trailing_line_break(payload: dict[str, Any]) -> None:
    payload["actions"][0]["action_id"] = ids.JOIN + "\n"  # `$` in a pattern matched it


def bell_target(payload: dict[str, Any]) -> None:
    payload["actions"][0]["value"] += ":\x07"


@pytest.mark.parametrize(
    "change", [trailing_line_break, bell_target], ids=["line break", "control character"]
)
def test_a_click_whose_action_id_or_value_is_off_by_a_control_character_is_stale(
    fake: FakeSlack, app: InProcessApp, db: Engine, change: Any
) -> None:
    anna, bo = new_people(fake, 2)
    table = Table(fake, app, db)
    table.command(anna)
    lobby = table.lobby()
    join = signed(fake, lambda: fake.click(bo, lobby, lobby.button("Join").action_id))
    assert app.send(with_payload(join, change)).status_code == 200
    table.ephemeral(bo, "doesn't belong to any game")
    assert [seat["user_id"] for seat in table.seats()] == [anna]


@pytest.mark.parametrize(
    ("who", "status"),
    [(None, 200), ({}, 200), ({"id": ""}, 200), ({"id": "not an id"}, 400), ("U0ANNA", 400)],
    ids=["user null", "user empty", "id empty", "id not an id", "user a string"],
)
def test_a_click_that_names_no_person_changes_nothing(
    fake: FakeSlack, app: InProcessApp, db: Engine, who: Any, status: int
) -> None:
    """Slack names who clicked in every payload; a click that names nobody (forged, or from a
    newer payload shape) is no person's move, not a seat for someone without a name. The server
    refuses at the door what it cannot route (400); the rest is answered privately."""
    anna, bo = new_people(fake, 2)
    table = Table(fake, app, db)
    table.command(anna)
    lobby = table.lobby()
    join = signed(fake, lambda: fake.click(bo, lobby, lobby.button("Join").action_id))
    answer = app.send(with_payload(join, lambda payload: payload.update(user=who)))
    assert answer.status_code == status
    if status == 200:
        table.ephemeral(bo, "doesn't belong to any game")
    assert [seat["user_id"] for seat in table.seats()] == [anna]


@pytest.mark.parametrize("action", [ids.CANCEL_YES, ids.CANCEL])
def test_a_cancel_answer_never_takes_the_place_of_a_night_message(
    fake: FakeSlack, app: InProcessApp, db: Engine, action: str
) -> None:
    """Found by the fuzzing: a *Yes, cancel* click that came with a night message (the
    question's action id on another message's payload) had its refusal replace that message,
    and the person lost their card and its buttons. Only the private question is replaced."""
    anna, bo, cy = new_people(fake, 3)
    table = Table(fake, app, db)
    table.seat_people(anna, [bo, cy])
    table.start(anna)
    dm = table.dm(bo)
    click = signed(fake, lambda: fake.click(bo, dm, dm.buttons()[0].action_id))

    def as_cancel(payload: dict[str, Any]) -> None:
        payload["actions"][0]["action_id"] = action

    assert app.send(with_payload(click, as_cancel)).status_code == 200
    assert table.dm(bo).blocks == dm.blocks
    assert table.game()["phase"] == "night"
    table.ephemeral(bo, "")  # answered privately instead


def settings_submission(fake: FakeSlack, table: Table, user: str) -> SignedRequest:
    fake.set_role(user, "admin")  # who may change the table is not what these test
    table.command(user, "settings")
    table.wait(lambda: next(iter(fake.modals(user)), None), "the settings modal")
    entered: dict[str | tuple[str, str], str] = {
        "night_seconds": "45",
        "day_seconds": "90",
        "vote_seconds": "60",
    }
    return signed(fake, lambda: fake.view_submission(user, entered))


@pytest.mark.parametrize(
    "how",
    [
        lambda payload: payload.update(user=None),
        lambda payload: payload.update(user={"name": "anna"}),
        lambda payload: payload["view"].update(state={"values": [1, 2]}),
        lambda payload: payload["view"]["state"].update(values={"night_seconds": 5}),
        lambda payload: next(iter(payload["view"]["state"]["values"].values())).update(
            night_seconds={"selected_options": [None, 3]}
        ),
    ],
    ids=["user null", "user without id", "values a list", "a block not an object", "odd options"],
)
def test_a_settings_submission_of_the_wrong_shape_is_refused(
    fake: FakeSlack, app: InProcessApp, db: Engine, how: Any
) -> None:
    (anna,) = new_people(fake, 1)
    table = Table(fake, app, db)
    before = channel_settings(db)
    answer = app.send(with_payload(settings_submission(fake, table, anna), how))
    assert answer.status_code == 400
    assert channel_settings(db) == before


def season(picked: Any) -> Any:
    """The settings submission with its season's ``selected_option`` set to ``picked``."""
    return lambda payload: payload["view"]["state"]["values"]["season"]["season"].update(
        selected_option=picked
    )


FORGED_SUBMISSIONS = {
    "season a string": season("x"),
    "season a number": season(5),
    "season a list of null": season([None]),
    "season a list of an object": season([{}]),
    "season without a value": season({"text": "month"}),
    "season's value a number": season({"value": 5}),
    "view without a type": lambda payload: payload["view"].pop("type"),
    "view of no type": lambda payload: payload["view"].update(type=None),
    "a field the modal has not": lambda payload: payload["view"]["state"]["values"].update(
        extra={"extra": {"type": "plain_text_input", "value": "1"}}
    ),
    "a number of another element": lambda payload: payload["view"]["state"]["values"][
        "night_seconds"
    ]["night_seconds"].update(type="radio_buttons"),
    "a time that is a list": lambda payload: payload["view"]["state"]["values"]["night_seconds"][
        "night_seconds"
    ].update(selected_time=[1]),
}


@pytest.mark.parametrize("how", list(FORGED_SUBMISSIONS.values()), ids=list(FORGED_SUBMISSIONS))
def test_a_forged_settings_submission_is_refused_before_bolt_reads_it(
    fake: FakeSlack, app: InProcessApp, db: Engine, how: Any
) -> None:
    (anna,) = new_people(fake, 1)
    table = Table(fake, app, db)
    before = channel_settings(db)
    errors = len(app.errors_logged())
    answer = app.send(with_payload(settings_submission(fake, table, anna), how))
    assert answer.status_code == 400, answer.text
    app.settle()
    assert channel_settings(db) == before
    assert app.errors_logged()[errors:] == []


@pytest.mark.parametrize("metadata", ["", "C0\x07", "x" * 5000, "not a channel", "C0FIKA\n"])
def test_a_settings_submission_for_no_channel_says_so_in_the_form(
    fake: FakeSlack, app: InProcessApp, db: Engine, metadata: str
) -> None:
    (anna,) = new_people(fake, 1)
    table = Table(fake, app, db)
    before = channel_settings(db)

    def change(payload: dict[str, Any]) -> None:
        payload["view"]["private_metadata"] = metadata

    answer = app.send(with_payload(settings_submission(fake, table, anna), change))
    assert answer.status_code == 200
    assert answer.json()["response_action"] == "errors"
    assert "which channel" in json.dumps(answer.json()["errors"])
    app.settle()
    assert channel_settings(db) == before


def test_settings_without_a_trigger_id_get_a_clear_reply(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    (anna,) = new_people(fake, 1)
    fake.set_role(anna, "admin")
    table = Table(fake, app, db)
    command = signed_command(fake, anna, table.channel, "settings")
    form = dict(parse_qsl(command.body, keep_blank_values=True))
    del form["trigger_id"]
    assert app.send(resigned(command, urlencode(form))).status_code == 200
    table.ephemeral(anna, "Try `/varulv settings` again")
    assert fake.modals(anna) == []


@pytest.mark.parametrize("word", ["settings", "schedule"])
def test_a_form_slack_would_not_open_gets_a_clear_reply(
    fake: FakeSlack, app: InProcessApp, db: Engine, word: str
) -> None:
    """Slack refuses a trigger used too late (``expired_trigger_id``): the person is told the
    form did not open and to try again, and nothing opens."""
    (anna,) = new_people(fake, 1)
    fake.set_role(anna, "admin")
    table = Table(fake, app, db)
    lifetime = fake.grants.trigger_ttl
    fake.grants.trigger_ttl = -1.0  # the command's trigger is born expired
    try:
        command = signed_command(fake, anna, table.channel, word)
    finally:
        fake.grants.trigger_ttl = lifetime
    assert app.send(command).status_code == 200
    table.ephemeral(anna, f"Slack did not open the form. Try `/varulv {word}` again.")
    assert fake.modals(anna) == []


@pytest.mark.parametrize("tokens", [[], "bot", 5, {"bot": "U1"}, {"oauth": [1]}])
def test_a_tokens_revoked_event_of_the_wrong_shape_is_refused(
    fake: FakeSlack, app: InProcessApp, db: Engine, tokens: Any
) -> None:
    (anna,) = new_people(fake, 1)
    table = Table(fake, app, db)
    table.command(anna)
    table.lobby()
    revoked = signed(
        fake, lambda: fake.event({"type": "tokens_revoked", "tokens": {}, "event_ts": "1.0"})
    )
    answer = app.send(with_event(revoked, tokens=tokens))
    assert answer.status_code == 400
    assert table.game()["phase"] == "lobby"


@pytest.mark.parametrize(
    "change", [{"user": 5}, {"user": "U1\x00"}, {"tab": []}, {"view": "home"}, {"channel": 7}]
)
def test_an_app_home_opened_event_of_the_wrong_shape_is_refused_or_ignored(
    fake: FakeSlack, app: InProcessApp, change: dict[str, Any]
) -> None:
    (anna,) = new_people(fake, 1)
    opened = signed(fake, lambda: fake.app_home_opened(anna))
    answer = app.send(with_event(opened, **change))
    assert answer.status_code in (200, 400)
    app.settle()
    assert fake.home_view(anna) is None


def test_a_ballot_edited_to_name_no_seat_is_told_what_is_wrong(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, bo, cia = new_people(fake, 3)
    table = Table(fake, app, db)
    table.seat_people(anna, [bo, cia])
    table.start(anna)
    table.play_night([anna, bo, cia])
    table.heard_enough([anna, bo])
    table.wait_for_phase("vote")
    ballot = table.ballot(anna)
    for_bo = next(b for b in ballot.buttons() if b.value and b.value.endswith(f":{bo}"))
    assert for_bo.value is not None
    no_seat = for_bo.value.replace(bo, "U0NOTSEATED")
    click = signed(fake, lambda: fake.click(anna, ballot, for_bo.action_id))

    def to_no_seat(payload: dict[str, Any]) -> None:
        payload["actions"][0]["value"] = no_seat

    assert app.send(with_payload(click, to_no_seat)).status_code == 200
    said = table.ephemeral(anna, "names nobody seated at this table").rendered_text
    assert "yourself" not in said
    with db.connect() as connection:
        ballots = connection.scalar(
            text("SELECT count(*) FROM ballots WHERE game_id = :g"), {"g": table.game_id()}
        )
    assert ballots == 0, "the edited ballot changed nothing"
