"""Who may change a channel's table, through the app against the stand-in: one test (at least)
per row of the table in docs/workplaces.md. A game's host may stop that game; the settings and
the standing table are for whoever set the standing table and the workspace's admins and
owners, unless an admin opens the channel to everyone. Each refusal is private and says who
can."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk import WebClient
from sqlalchemy import Engine, text

import slackapp.blocks.schedule as schedule_screen
from slackapp import permits
from slackapp.blocks.settings import BOTS_ACTION, OPEN_BLOCK
from slackapp.fakeslack import FakeSlack
from slackapp.game.permissions import Change
from slackapp.services.game import stop_permit
from tests.e2e.conftest import BOT_TOKEN
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_hostile_input import with_payload
from tests.reliability.support import new_people, signed

ADMINS = "the workspace's admins and owners"
Entered = dict[str | tuple[str, str], Any]
LENGTHS: Entered = {"night_seconds": "45", "day_seconds": "90", "vote_seconds": "60"}
FIKA: Entered = {
    schedule_screen.DAYS: ["1"],
    schedule_screen.AT: "15:00",
    schedule_screen.ZONE: "Europe/Stockholm",
    schedule_screen.LOBBY: "15",
}


def stored_settings(db: Engine, channel: str) -> dict[str, Any] | None:
    with db.connect() as connection:
        row = connection.execute(
            text("SELECT * FROM channel_settings WHERE channel_id = :c"), {"c": channel}
        ).mappings()
        found = row.one_or_none()
        return None if found is None else dict(found)


def stored_schedule_owner(db: Engine, channel: str) -> str | None:
    with db.connect() as connection:
        owner = connection.scalar(
            text("SELECT owner_user_id FROM standing_tables WHERE channel_id = :c"),
            {"c": channel},
        )
        return None if owner is None else str(owner)


def modal_of(fake: FakeSlack, table: Table, user: str, word: str) -> dict[str, Any]:
    table.command(user, word)
    return table.wait(lambda: next(iter(fake.modals(user)), None), f"the {word} modal")


def block_ids(modal: dict[str, Any]) -> set[str]:
    return {block.get("block_id", "") for block in modal["blocks"]}


def refused(table: Table, user: str, word: str, saying: str) -> str:
    """``user`` types ``/varulv word`` and is told privately, and no modal opens."""
    before = len(table.fake.ephemerals(user, table.channel))
    table.command(user, word)
    answer = table.ephemeral(user, saying)
    assert table.fake.modals(user) == []
    assert len(table.fake.ephemerals(user, table.channel)) == before + 1
    assert not [m for m in table.public() if saying in m.rendered_text], "said privately"
    return answer.rendered_text


def save_settings(fake: FakeSlack, table: Table, user: str, **extra: Any) -> None:
    modal_of(fake, table, user, "settings")
    entered: Entered = {**LENGTHS}
    entered.update(extra)
    answer = fake.view_submission(user, entered)
    assert answer.status_code == 200
    assert not (answer.text and answer.json().get("response_action") == "errors"), answer.text


def test_with_no_table_in_a_channel_only_admins_and_owners_change_it(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    member, admin, owner, primary = new_people(fake, 4)
    fake.set_role(admin, "admin")
    fake.set_role(owner, "owner")
    fake.set_role(primary, "primary_owner")
    table = Table(fake, app, db)
    told = refused(table, member, "settings", "can change this channel's Varulv settings")
    assert told == f"Only {ADMINS} can change this channel's Varulv settings."
    refused(table, member, "schedule", f"Only {ADMINS} can set, change or remove")
    refused(table, member, "stop", "No game is running")
    assert stored_settings(db, table.channel) is None

    for allowed in (admin, owner, primary):
        modal = modal_of(fake, table, allowed, "settings")
        assert OPEN_BLOCK in block_ids(modal), "an admin may open the table to everyone"
        fake.close_modal(allowed)
        modal_of(fake, table, allowed, "schedule")
        fake.close_modal(allowed)
    save_settings(fake, table, owner)
    saved = stored_settings(db, table.channel)
    assert saved is not None and saved["updated_by"] == owner
    assert saved["open_to_everyone"] is False


def test_a_host_may_stop_their_own_game_and_nothing_more(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """Row *stop a game* (its host) and rows *settings* and *standing table* (not the host):
    anyone may open a lobby with /varulv and deal it, so hosting one, even a dealt game, gives
    no right over the channel."""
    host, seated, other, stranger = new_people(fake, 4)
    table = Table(fake, app, db)
    table.seat_people(host, [seated, other])
    table.start(host)
    for user in (host, seated, stranger):
        told = refused(table, user, "settings", "can change this channel's Varulv settings")
        assert told == f"Only {ADMINS} can change this channel's Varulv settings."
        told = refused(table, user, "schedule", "can set, change or remove")
        assert told == f"Only {ADMINS} can set, change or remove this channel's standing table."
    assert stored_settings(db, table.channel) is None
    assert stored_schedule_owner(db, table.channel) is None

    calls = len(fake.calls_to("users.info"))
    told = refused(table, seated, "stop", "can stop this game")
    assert told == f"Only <@{host}> (the game's host) and {ADMINS} can stop this game."
    assert table.game()["phase"] == "night"
    table.command(host, "stop")
    table.wait_for_phase("stopped")
    assert len(fake.calls_to("users.info")) == calls + 1, (
        "Slack is asked only for the one refused: the host is known without it"
    )


def test_two_members_dealing_a_game_with_bots_cannot_take_over_the_standing_table(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """The take-over: an admin sets the channel's standing table; two members deal a game with
    bots; its host may neither rewrite nor remove the table, nor change the settings, and is
    told who may. The table stays the admin's."""
    admin, host, member = new_people(fake, 3)
    fake.set_role(admin, "admin")
    table = Table(fake, app, db)
    modal_of(fake, table, admin, "schedule")
    fake.view_submission(admin, FIKA)
    table.board("set a standing table")
    save_settings(fake, table, admin)
    settings_before = stored_settings(db, table.channel)

    table.seat_people(host, [member], bots=True)
    table.start(host)
    table.command(member)  # /varulv during the game names who may end it, the setter too
    told = table.ephemeral(member, "can end it").rendered_text
    assert told.endswith(
        f"Its host, <@{host}>, <@{admin}>, who set this channel's standing table, and the "
        "workspace's admins can end it."
    ), told
    table.command(admin)
    table.ephemeral(admin, "You set this channel's standing table, so you can end it")
    told = refused(table, host, "schedule", "can set, change or remove")
    assert told == (
        f"Only <@{admin}> (who set the standing table) and {ADMINS} can set, change or remove "
        "this channel's standing table."
    )
    told = refused(table, host, "settings", "can change this channel's Varulv settings")
    assert told == (
        f"Only <@{admin}> (who set the standing table) and {ADMINS} can change this channel's "
        "Varulv settings."
    )
    # A form forged for the host (one they could never open) is refused on submission too.
    modal_of(fake, table, admin, "schedule")
    forged = signed(fake, lambda: fake.view_submission(admin, FIKA))

    def as_host(payload: dict[str, Any]) -> None:
        payload["user"]["id"] = host

    answer = app.send(with_payload(forged, as_host)).json()
    assert answer["response_action"] == "errors"
    (said,) = answer["errors"].values()
    assert said.startswith(f"Only <@{admin}> (who set the standing table) and {ADMINS} can ")
    fake.close_modal(admin)
    assert stored_schedule_owner(db, table.channel) == admin
    assert stored_settings(db, table.channel) == settings_before
    table.command(host, "stop")  # their own game is still theirs to stop
    table.wait_for_phase("stopped")


def test_an_admin_who_is_not_seated_may_stop_a_game(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    host, seated, other, admin = new_people(fake, 4)
    fake.set_role(admin, "owner")
    table = Table(fake, app, db)
    table.seat_people(host, [seated, other])
    table.start(host)
    table.command(admin, "stop")
    table.wait_for_phase("stopped")
    table.ephemeral(admin, "You stopped the game")


def test_an_admin_opens_a_channel_to_everyone_and_closes_it_again(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    admin, member, host, other = new_people(fake, 4)
    fake.set_role(admin, "admin")
    table = Table(fake, app, db)
    save_settings(fake, table, admin, **{OPEN_BLOCK: [OPEN_BLOCK]})
    assert (stored_settings(db, table.channel) or {}).get("open_to_everyone") is True
    told = table.board(f"<@{admin}> changed the Varulv settings").text
    assert "Anyone in this channel may now change its settings" in told, "the channel is told"

    # Open: anyone in the channel changes its settings and standing table, and stops its game.
    modal = modal_of(fake, table, member, "settings")
    assert OPEN_BLOCK not in block_ids(modal)
    fake.view_submission(member, {**LENGTHS, BOTS_ACTION: []})
    saved = table.board(f"<@{member}> changed the Varulv settings").text
    assert "may now" not in saved, "who may did not change: nothing said of it"
    assert (stored_settings(db, table.channel) or {}).get("open_to_everyone") is True, (
        "a member's save keeps the channel open"
    )
    modal_of(fake, table, member, "schedule")
    fake.close_modal(member)
    table.seat_people(host, [admin, other])
    table.start(host)
    table.command(member)  # /varulv during the game says what the stop then does
    table.ephemeral(member, "Anyone in this channel can end it with `/varulv stop`.")
    table.command(member, "stop")
    table.wait_for_phase("stopped")

    # A member cannot close it, even with the admins' choice forged into the form.
    modal_of(fake, table, member, "settings")
    submission = signed(fake, lambda: fake.view_submission(member, LENGTHS))

    def unticked(payload: dict[str, Any]) -> None:
        values = payload["view"]["state"]["values"]
        values[OPEN_BLOCK] = {OPEN_BLOCK: {"type": "checkboxes", "selected_options": []}}

    answer = app.send(with_payload(submission, unticked)).json()
    assert answer["response_action"] == "errors"
    assert list(answer["errors"].values()) == [
        f"Only {ADMINS} can open this channel's table to everyone, or close it again."
    ]
    fake.close_modal(member)
    assert (stored_settings(db, table.channel) or {}).get("open_to_everyone") is True

    # The admin closes it: the member is refused again.
    modal = modal_of(fake, table, admin, "settings")
    assert OPEN_BLOCK in block_ids(modal)
    fake.view_submission(admin, {**LENGTHS, OPEN_BLOCK: []})
    table.wait(
        lambda: (stored_settings(db, table.channel) or {}).get("open_to_everyone") is False or None,
        "the channel closed",
    )
    closed = table.board("may now change its settings and stop its games").text
    assert closed.startswith(f"<@{admin}> changed the Varulv settings"), closed
    refused(table, member, "settings", "can change this channel's Varulv settings")


@pytest.mark.parametrize("word", ["settings", "schedule"])
def test_a_submission_from_someone_who_may_not_changes_nothing_and_says_who_can(
    fake: FakeSlack, app: InProcessApp, db: Engine, word: str
) -> None:
    """A form opened while its person could (an admin since demoted, a host whose game
    ended), submitted once they no longer can: the app decides again, on the submission."""
    person, host = new_people(fake, 2)
    fake.set_role(person, "admin")
    table = Table(fake, app, db)
    modal_of(fake, table, person, word)
    fake.set_role(person, None)
    table.seat_people(host, [])
    values = LENGTHS if word == "settings" else FIKA
    answer = fake.view_submission(person, values).json()
    assert answer["response_action"] == "errors"
    (said,) = answer["errors"].values()
    assert said.startswith(f"Only {ADMINS} can "), "a lobby's host does not answer for it"
    fake.close_modal(person)
    assert stored_settings(db, table.channel) is None
    assert stored_schedule_owner(db, table.channel) is None
    assert not [m for m in table.public() if f"<@{person}>" in m.rendered_text], "no word"


def test_night_choices_and_ballots_never_ask_slack_who_is_an_admin(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, bo, cia = new_people(fake, 3)
    table = Table(fake, app, db)
    table.seat_people(anna, [bo, cia])
    table.start(anna)
    asked = len(fake.calls_to("users.info"))
    table.play_night([anna, bo, cia])
    table.heard_enough([anna, bo])
    table.wait_for_phase("vote")
    table.vote({anna: "Nobody", bo: "Nobody", cia: "Nobody"})
    table.wait_for_phase("over")
    assert len(fake.calls_to("users.info")) == asked


def test_a_stop_ends_only_the_game_it_was_allowed_for(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """The permission is decided for the game open then; if that game ends and another opens
    before the stop is stepped, the new game (not checked) is left running."""
    host, bo, cia, other = new_people(fake, 4)
    table = Table(fake, app, db)
    table.seat_people(host, [bo, cia])
    steps = app.varulv.games
    team = fake.identity.team_id
    client = WebClient(token=BOT_TOKEN, base_url=fake.api_url)
    refused_then, checked = permits.checked(
        steps.sessions, client, team, table.channel, host, Change.STOP
    )
    assert refused_then is None and checked == table.game_id()
    table.command(host, "stop")  # the checked game ends meanwhile ...
    table.wait_for_phase("cancelled")  # a lobby: called off
    table.command(other)  # ... and someone else opens a new lobby
    new_game = table.wait(
        lambda: ((g := table.game_id()) != checked and g) or None, "the new lobby"
    )
    told = steps.stop(team, table.channel, host, checked=checked)
    assert told is not None and "was not stopped" in told
    assert table.game()["phase"] == "lobby" and table.game_id() == new_game


def test_in_an_open_channel_a_standing_table_is_still_its_setters(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """Rows *set a standing table where none is* (anyone, in an open channel) and *change or
    remove it* (its setter and the admins, even in an open channel; an admin's save makes it
    the admin's)."""
    admin, setter, member = new_people(fake, 3)
    fake.set_role(admin, "admin")
    table = Table(fake, app, db)
    refused(table, setter, "schedule", f"Only {ADMINS} can set")
    save_settings(fake, table, admin, **{OPEN_BLOCK: [OPEN_BLOCK]})
    modal_of(fake, table, setter, "schedule")
    fake.view_submission(setter, FIKA)
    table.board(f"<@{setter}> set a standing table")
    assert stored_schedule_owner(db, table.channel) == setter

    told = refused(table, member, "schedule", "can set, change or remove")
    assert told == (
        f"Only <@{setter}> (who set the standing table) and {ADMINS} can set, change or remove "
        "this channel's standing table."
    )
    save_settings(fake, table, member)  # the settings are everyone's in an open channel
    modal_of(fake, table, admin, "schedule")
    fake.view_submission(admin, FIKA)
    table.wait(
        lambda: stored_schedule_owner(db, table.channel) == admin or None, "the admin's table"
    )
    refused(table, setter, "schedule", f"Only <@{admin}> (who set the standing table) and")


def test_a_stop_checked_when_nothing_was_open_ends_no_lobby_opened_since(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """ "No game was open when I asked" is no permission to end the game that opened since."""
    member, host = new_people(fake, 2)
    table = Table(fake, app, db)
    steps = app.varulv.games
    team = fake.identity.team_id
    client = WebClient(token=BOT_TOKEN, base_url=fake.api_url)
    refused_then, checked = permits.checked(
        steps.sessions, client, team, table.channel, member, Change.STOP
    )
    assert refused_then is None and checked is None
    table.seat_people(host, [])
    told = steps.stop(team, table.channel, member, checked=checked)
    assert told is not None and "was not stopped" in told
    assert table.game()["phase"] == "lobby"
    assert table.game()["ended_by"] is None


def test_a_stop_is_decided_again_on_the_games_locked_row(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """A stop allowed while the channel was open to everyone, applied after an admin closed
    it: decided again under the locks, it is refused, and the game goes on."""
    admin, member, host = new_people(fake, 3)
    fake.set_role(admin, "admin")
    table = Table(fake, app, db)
    save_settings(fake, table, admin, **{OPEN_BLOCK: [OPEN_BLOCK]})
    table.seat_people(host, [])
    steps = app.varulv.games
    team = fake.identity.team_id
    client = WebClient(token=BOT_TOKEN, base_url=fake.api_url)
    flags = permits.AdminFlags(client, member)
    refused_then, checked = permits.checked(
        steps.sessions, client, team, table.channel, member, Change.STOP, flags
    )
    assert refused_then is None and checked == table.game_id()
    save_settings(fake, table, admin, **{OPEN_BLOCK: []})
    table.wait(
        lambda: (stored_settings(db, table.channel) or {}).get("open_to_everyone") is False or None,
        "the channel closed",
    )
    permit = stop_permit(team, table.channel, member, flags)
    told = steps.stop(team, table.channel, member, checked=checked, permit=permit)
    assert told == f"Only <@{host}> (the game's host) and {ADMINS} can stop this game."
    assert table.game()["phase"] == "lobby"
