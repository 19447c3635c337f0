"""Where Varulv is installed on a whole Enterprise Grid organisation, a channel that several of
its workspaces share has one table: a ``/varulv``, its settings, its stop and its leaderboard
find the same one from whichever workspace they are typed in."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlencode

from sqlalchemy import Engine, create_engine, make_url, text

from slackapp.blocks.words import words
from slackapp.db.engine import sqlalchemy_url
from slackapp.fakeslack import UNLIMITED, FakeSlack, SignedRequest, signed_headers
from slackapp.game.lines import Language
from slackapp.listeners.ack import UNAVAILABLE
from tests.databases import migrated_database
from tests.e2e.conftest import BOT_TOKEN, SIGNING_SECRET
from tests.e2e.conftest import SIGNING_SECRET as SECRET
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp, tracked_answers
from tests.inprocess.test_security import from_workspace, resigned, with_payload
from tests.reliability.support import a_standing_table, new_people, signed, signed_command
from tests.waiting import PATIENCE

ORG = "E0ORG"
SISTER = "T0SISTER"
"""Another workspace of the organisation, which shares the channel."""


def command_from(
    fake: FakeSlack, user: str, channel: str, words: str = "", team: str = "", org_wide: bool = True
) -> SignedRequest:
    """``/varulv words`` as Slack signs it for ``user`` of workspace ``team`` (the stand-in's
    own when empty) of the organisation."""
    request = signed_command(fake, user, channel, words)
    form = dict(parse_qsl(request.body))
    org = {"enterprise_id": ORG, "is_enterprise_install": "true" if org_wide else "false"}
    return resigned(request, urlencode({**form, **org, **({"team_id": team} if team else {})}))


def answer(app: InProcessApp, request: SignedRequest, database_away: bool = False) -> str:
    """What the person is shown in the command's acknowledgement."""
    sent = app.send(request, database_away=database_away)
    assert sent.status_code == 200, sent.text
    if not sent.text.startswith("{"):
        return sent.text
    body: dict[str, Any] = sent.json()
    return str(body.get("text", "")) + str(body.get("blocks", ""))


def resigned_json(envelope: dict[str, Any]) -> SignedRequest:
    body = json.dumps(envelope)
    return SignedRequest(body, {"Content-Type": "application/json", **signed_headers(SECRET, body)})


def lobby_at_home(fake: FakeSlack, app: InProcessApp, db: Engine, host: str) -> tuple[Table, str]:
    """A lobby ``host`` opened in a shared channel from the stand-in's own workspace, which
    becomes the channel's home: the table, and that workspace."""
    table = Table(fake, app, db)
    assert answer(app, command_from(fake, host, table.channel)) == ""
    table.lobby()
    return table, fake.identity.team_id


def to_the_reveal(table: Table, host: str, others: list[str]) -> None:
    """``host`` and ``others`` seated, a night played, everyone's ballot for Nobody, revealed."""
    everyone = [host, *others]
    table.seat_people(host, others)
    table.start(host)
    table.play_night(everyone)
    table.heard_enough(everyone[:2])
    table.wait_for_phase("vote")
    table.vote(dict.fromkeys(everyone, "Nobody"))
    table.reveal()


def kept_of(db: Engine, user: str) -> int:
    """How many scores and seats name the person."""
    with db.connect() as connection:
        return int(
            connection.execute(
                text(
                    "SELECT (SELECT count(*) FROM scores WHERE user_id = :u)"
                    " + (SELECT count(*) FROM seats WHERE user_id = :u)"
                ),
                {"u": user},
            ).scalar_one()
        )


def games_in(db: Engine, channel: str) -> list[tuple[str, str]]:
    with db.connect() as connection:
        rows = connection.execute(
            text("SELECT team_id, phase FROM games WHERE channel_id = :c ORDER BY id"),
            {"c": channel},
        )
        return [(row.team_id, row.phase) for row in rows]


def test_a_channel_an_organisations_workspaces_share_has_one_table(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, bo, sister = new_people(fake, 3)
    table = Table(fake, app, db)
    home = fake.identity.team_id
    assert answer(app, command_from(fake, anna, table.channel)) == ""
    table.lobby()

    told = answer(app, command_from(fake, sister, table.channel, team=SISTER))
    assert "A table is already open in this channel" in told, told
    assert games_in(db, table.channel) == [(home, "lobby")], "no second table"

    stop = answer(app, command_from(fake, sister, table.channel, "stop", team=SISTER))
    assert stop == ""  # answered after the acknowledgement
    table.ephemeral(sister, "can stop this game")  # the table it found is not hers to stop
    assert games_in(db, table.channel) == [(home, "lobby")]

    to_the_reveal(table, anna, [bo, sister])

    board = answer(app, command_from(fake, sister, table.channel, "score", team=SISTER))
    assert "<@" + anna + ">" in board or anna in board, board
    home_opened = json.loads(signed(fake, lambda: fake.app_home_opened(sister)).body)
    in_her_workspace = {**home_opened, "team_id": SISTER, "enterprise_id": ORG}
    in_her_workspace["authorizations"][0] |= {
        "enterprise_id": ORG,
        "team_id": None,
        "is_enterprise_install": True,
    }
    assert app.send(resigned_json(in_her_workspace)).status_code == 200
    tab = table.wait(lambda: fake.home_view(sister), "her Home tab")
    assert "1 game," in str(tab["blocks"]), "her record counts the shared channel's game"
    # Forgotten at her own asking: from the tables of every workspace of the organisation.
    answer(app, command_from(fake, sister, table.channel, "forget me", team=SISTER))
    table.ephemeral(sister, "Varulv has forgotten you in this organisation")
    assert kept_of(db, sister) == 0, "her score and seat at the channel's table are erased"
    # The next table, opened from the other workspace, is the channel's too.
    assert answer(app, command_from(fake, sister, table.channel, team=SISTER)) == ""
    assert games_in(db, table.channel) == [(home, "over"), (home, "lobby")]
    with db.connect() as connection:
        kept = connection.execute(
            text("SELECT * FROM channel_homes WHERE channel_id = :c"), {"c": table.channel}
        )
        assert [tuple(row) for row in kept] == [(ORG, table.channel, home)]


def test_a_workspace_that_installed_varulv_alone_keeps_its_own_tables(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, sister = new_people(fake, 2)
    table, home = lobby_at_home(fake, app, db, anna)
    alone = command_from(fake, sister, table.channel, team=SISTER, org_wide=False)
    assert answer(app, alone) == ""
    assert games_in(db, table.channel) == [(home, "lobby"), (SISTER, "lobby")]


def test_an_admin_of_another_workspace_sharing_the_channel_changes_its_settings(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, sister = new_people(fake, 2)
    table, home = lobby_at_home(fake, app, db, anna)
    fake.set_role(sister, "admin")
    answer(app, command_from(fake, sister, table.channel, "settings", team=SISTER))
    table.wait(lambda: next(iter(fake.modals(sister)), None), "the settings modal")
    values: dict[str | tuple[str, str], Any] = {
        "night_seconds": "45",
        "day_seconds": "240",
        "vote_seconds": "75",
    }
    submitted = signed(fake, lambda: fake.view_submission(sister, values))
    from_sister = from_workspace(submitted, sister, SISTER, ORG, org_wide=True)
    view = json.loads(dict(parse_qsl(from_sister.body))["payload"])["view"]
    opened_there = {**view, "team_id": SISTER, "app_installed_team_id": SISTER}
    done = app.send(with_payload(from_sister, {"view": opened_there}))
    assert done.status_code == 200, done.text
    with db.connect() as connection:
        kept = connection.execute(
            text("SELECT team_id, day_seconds FROM channel_settings WHERE channel_id = :c"),
            {"c": table.channel},
        )
        assert [tuple(row) for row in kept] == [(home, 240)], "the channel's one table's"
    table.board("changed the Varulv settings")


def test_an_admin_of_another_workspace_sharing_the_channel_sees_none_of_the_homes_tables(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """The schedule form lists a workspace's standing tables to its own admins only: the
    home's private channels are none of another workspace's admin's business."""
    anna, sister = new_people(fake, 2)
    table, home = lobby_at_home(fake, app, db, anna)
    a_standing_table(db, home, "C0HOMEPRIVATE", anna)
    fake.set_role(sister, "admin")
    answer(app, command_from(fake, sister, table.channel, "schedule", team=SISTER))
    form = table.wait(lambda: next(iter(fake.modals(sister)), None), "the schedule form")
    assert "C0HOMEPRIVATE" not in json.dumps(form)
    fake.set_role(anna, "admin")  # an admin of the home itself sees it
    answer(app, command_from(fake, anna, table.channel, "schedule"))
    own = table.wait(lambda: next(iter(fake.modals(anna)), None), "the home admin's form")
    assert "<#C0HOMEPRIVATE>" in json.dumps(own)


def test_a_shared_channel_keeps_the_table_a_workspace_kept_there_before_it_had_a_home(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """A standing table set, or settings saved, before the organisation's channels had homes
    stay the channel's: the first to use Varulv there from another workspace finds them."""
    anna, sister = new_people(fake, 2)
    home = fake.identity.team_id
    standing, talking = Table(fake, app, db), Table(fake, app, db)
    with db.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO standing_tables (team_id, channel_id, enterprise_id, weekdays,"
                " minute_of_day, zone, lobby_minutes, next_at, owner_user_id)"
                " VALUES (:t, :c, :e, 1, 0, 'UTC', 5, now() + interval '1 day', :u)"
            ),
            {"t": home, "c": standing.channel, "e": ORG, "u": anna},
        )
        connection.execute(
            text(
                "INSERT INTO channel_settings (team_id, channel_id, night_seconds, day_seconds,"
                " vote_seconds, bots_allowed, language, updated_by)"
                " VALUES (:t, :c, 60, 300, 60, true, 'sv', :u)"
            ),
            {"t": home, "c": talking.channel, "u": anna},
        )
    answer(app, command_from(fake, sister, standing.channel, "help", team=SISTER))
    swedish = answer(app, command_from(fake, sister, talking.channel, "help", team=SISTER))
    with db.connect() as connection:
        homes = connection.execute(
            text("SELECT channel_id, team_id FROM channel_homes WHERE channel_id IN (:a, :b)"),
            {"a": standing.channel, "b": talking.channel},
        )
        assert dict(homes.all()) == {standing.channel: home, talking.channel: home}
    assert "Varulv" in swedish and "natt" in swedish.lower(), "the channel's own words"


def test_forget_me_finds_a_game_another_workspace_kept_before_the_channel_had_a_home(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, bo, sister = new_people(fake, 3)
    table = Table(fake, app, db)
    answer(app, command_from(fake, anna, table.channel))
    to_the_reveal(table, anna, [bo, sister])
    with db.begin() as connection:  # as if a workspace with no home had kept it
        for kept in ("games", "scores"):
            connection.execute(
                text(f"UPDATE {kept} SET team_id = 'T0LEGACY' WHERE channel_id = :c"),
                {"c": table.channel},
            )
        connection.execute(
            text("DELETE FROM channel_homes WHERE channel_id = :c"), {"c": table.channel}
        )
    answer(app, command_from(fake, sister, table.channel, "forget me", team=SISTER))
    table.ephemeral(sister, "Varulv has forgotten you in this organisation")
    assert kept_of(db, sister) == 0


def test_a_database_away_is_said_to_whoever_asks_in_a_shared_channel(postgres: str) -> None:
    """Finding a shared channel's table reads the database: with it away, a command is
    answered that it is, and a form keeps open saying so, as everywhere else, rather than
    failing at Slack."""
    url = migrated_database(postgres, "shared_channel_outage")
    name = make_url(sqlalchemy_url(url)).database
    admin = create_engine(sqlalchemy_url(postgres), isolation_level="AUTOCOMMIT")
    with (
        # A form's trigger lives as long as the tests' patience, as in this tier's own stand-in.
        FakeSlack(
            SIGNING_SECRET, tokens=[BOT_TOKEN], limits=UNLIMITED, trigger_ttl=PATIENCE
        ) as fake,
        tracked_answers(),
        InProcessApp(fake, url, SIGNING_SECRET, BOT_TOKEN).serving() as app,
    ):
        (anna,) = new_people(fake, 1)
        fake.add_channel("C0AWAY", "away")
        fake.set_role(anna, "admin")
        answer(app, command_from(fake, anna, "C0AWAY", "settings", team=SISTER))
        fake.wait_for(lambda: next(iter(fake.modals(anna)), None), what="the settings form")
        values: dict[str | tuple[str, str], Any] = {"day_seconds": "240"}
        submitted = signed(fake, lambda: fake.view_submission(anna, values))
        with admin.connect() as connection:
            connection.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
            connection.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
                {"n": name},
            )
        try:
            score = command_from(fake, anna, "C0AWAY", "score", team=SISTER)
            told = answer(app, score, database_away=True)
            assert told == UNAVAILABLE
            stop = command_from(fake, anna, "C0AWAY", "stop", team=SISTER)
            answer(app, stop, database_away=True)
            fake.wait_for(
                lambda: UNAVAILABLE in [m.text for m in fake.ephemerals(anna, "C0AWAY")] or None,
                what="the stop answered",
            )
            from_sister = from_workspace(submitted, anna, SISTER, ORG, org_wide=True)
            saved = app.send(from_sister, database_away=True)
            assert saved.status_code == 200, saved.text
            assert saved.json()["response_action"] == "errors", "the form stays open"
            assert "can't reach its database" in str(saved.json()["errors"])
        finally:
            with admin.connect() as connection:
                connection.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
            admin.dispose()


def test_a_click_from_another_workspace_is_answered_in_the_shared_channels_language(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    anna, sister = new_people(fake, 2)
    table = Table(fake, app, db)
    home = fake.identity.team_id
    with db.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO channel_settings (team_id, channel_id, night_seconds, day_seconds,"
                " vote_seconds, bots_allowed, language, updated_by)"
                " VALUES (:t, :c, 60, 300, 60, true, 'sv', :u)"
            ),
            {"t": home, "c": table.channel, "u": anna},
        )
    answer(app, command_from(fake, anna, table.channel))
    lobby = table.wait(lambda: next(iter(table.public()), None), "the Swedish lobby")
    join = signed(fake, lambda: fake.click(sister, lobby, lobby.buttons()[0].action_id))
    from_sister = from_workspace(join, sister, SISTER, ORG, org_wide=True)
    payload = json.loads(dict(parse_qsl(from_sister.body))["payload"])
    payload["actions"][0]["value"] = "999999999"  # a game that no longer exists
    gone = with_payload(from_sister, {"actions": payload["actions"]})
    assert app.send(gone).status_code == 200
    table.ephemeral(sister, words(Language.SWEDISH)._("That game no longer exists."))


def homes_named(db: Engine, channel: str) -> int:
    with db.connect() as connection:
        return int(
            connection.execute(
                text("SELECT count(*) FROM channel_homes WHERE channel_id = :c"), {"c": channel}
            ).scalar_one()
        )


def test_a_click_in_a_direct_message_of_an_organisation_stores_no_channel_home(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """A person's private messages with Varulv hold no table: a click there whose game is gone
    (erased, or pruned long after) is answered without recording a home for that conversation,
    which would then name it for as long as the workspace is kept."""
    anna, bo, cia = new_people(fake, 3)
    table, _ = lobby_at_home(fake, app, db, anna)
    table.seat_people(anna, [bo, cia])
    table.start(anna)
    night = table.dm(bo)
    assert night.channel.startswith("D"), night.channel
    with db.begin() as connection:  # as erase-workspace or the prune takes it
        connection.execute(text("DELETE FROM games WHERE id = :id"), {"id": table.game_id()})
    click = signed(fake, lambda: fake.click(bo, night, night.buttons()[0].action_id))
    from_her_org = from_workspace(click, bo, fake.identity.team_id, ORG, org_wide=True)
    assert app.send(from_her_org).status_code == 200
    table.ephemeral(bo, "That game no longer exists")
    assert homes_named(db, night.channel) == 0, "no home for a direct message"
