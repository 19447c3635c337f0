"""What a table needs to play well, over HTTP against the stand-in for Slack: the deck is
public, bots fill only to five and are marked, the day names who speaks first, and the words
say what is true."""

from __future__ import annotations

import re
import threading
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker

from slackapp.blocks.screen import deck_text
from slackapp.delivery.outbox import enqueue
from slackapp.fakeslack import FakeSlack, Message
from slackapp.fakeslack.blocks import readable_text
from slackapp.game import Card
from slackapp.game import machine as m
from slackapp.services.uow import new_table as open_table_in
from tests.databases import WAITING_TO_OPEN
from tests.e2e.driver import Table
from tests.inprocess.harness import SETTLE_SECONDS, InProcessApp
from tests.inprocess.test_games import PEOPLE, new_table

ANNA, BO, CIA, DAN, EVA = PEOPLE[:5]


def day_of(table: Table, people: list[str], bots: bool = False) -> None:
    table.seat_people(people[0], people[1:], bots=bots)
    table.start(people[0])
    table.play_night(people)
    table.wait_for_phase("day")


def set_lengths(fake: FakeSlack, db: Engine, table: Table) -> None:
    """The channel chose its own lengths: night 45 s, day 4 min, vote 75 s (bots offered)."""
    with db.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO channel_settings (team_id, channel_id, night_seconds, day_seconds, "
            "vote_seconds, bots_allowed, updated_by) VALUES (%s, %s, 45, 240, 75, true, %s)",
            (fake.identity.team_id, table.channel, ANNA),
        )


def test_bots_fill_only_up_to_five_and_give_their_seats_to_people(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    lobby = table.seat_people(ANNA, [BO], bots=True)
    assert sum(seat["bot_name"] is not None for seat in table.seats()) == 3
    for seated, user in enumerate([CIA, DAN, EVA], start=3):
        table.click(user, lobby, "Join")

        def all_seated(n: int = seated) -> bool | None:
            return sum(s["user_id"] is not None for s in table.seats()) == n or None

        table.wait(all_seated, f"{seated} people seated")
        assert len(table.seats()) == 5, "a bot gave up its seat"
    assert not any(seat["bot_name"] for seat in table.seats())
    table.board("Take a seat", saying="5 of 10 seats taken")


def test_a_board_waited_for_in_vain_is_reported_with_the_games_messages(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """What a failed wait for a board prints: the channel's messages, and each version of the
    game's messages in its outbox stream with how its delivery went."""
    table = new_table(fake, app, db)
    table.command(ANNA)
    lobby = table.lobby()
    table.wait(lambda: "lobby v1: sent" in table.shown() or None, "the lobby's row sent")
    assert f"{lobby.ts} " in table.shown()


def test_a_bot_never_has_a_seated_persons_name_and_is_marked(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    fake.add_user("U0ASTRID", "astrid")
    fake.add_user("U0BOSSE", "Bosse.Lind")
    lobby = table.seat_people("U0ASTRID", ["U0BOSSE"], bots=True)
    bots = [seat["display_name"] for seat in table.seats() if seat["bot_name"]]
    assert bots == ["Cissi", "Dagge", "Ebba"]
    shown = table.board("Take a seat", saying="*Cissi* (bot)").rendered_text
    assert "*Dagge* (bot)" in shown and "*Ebba* (bot)" in shown
    fake.add_user("U0CISSI", "cissi")
    table.click("U0CISSI", lobby, "Join")
    table.wait(lambda: len([s for s in table.seats() if s["user_id"]]) == 3 or None, "cissi")
    assert [seat["display_name"] for seat in table.seats() if seat["bot_name"]] == [
        "Dagge",
        "Ebba",
    ], "the bot named like the colleague gave up its seat"


def test_the_day_board_shows_the_deck_and_names_one_person_to_speak_first(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    day_of(table, [ANNA, BO], bots=True)
    board = table.board("Heard enough").rendered_text
    assert deck_text(5) in board
    speakers = [user for user in (ANNA, BO) if f"<@{user}> speaks first" in board]
    assert len(speakers) == 1, board
    assert "one round of claims" in board
    assert "No one has heard enough yet: the vote opens once both people have" in board
    table.heard_enough([ANNA])
    table.board("Heard enough", saying="1 person has heard enough so far")


def test_a_second_slash_varulv_is_told_what_is_true_for_that_person(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA])
    table.command(ANNA)
    host = table.ephemeral(ANNA, "You are seated at the table above").rendered_text
    assert "press *Start*" in host and "press *Join*" not in host
    table.start(ANNA)
    table.command(DAN)
    stranger = table.ephemeral(DAN, "already running").rendered_text
    assert "not seated" in stranger and "DM" not in stranger


def test_a_lobby_the_host_left_no_longer_says_they_set_it(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    lobby = table.seat_people(ANNA, [BO, CIA])
    assert f"<@{ANNA}> is setting a table" in table.lobby().rendered_text
    table.click(ANNA, lobby, "Leave")
    shown = table.board("Take a seat", saying="A table is being set").rendered_text
    assert "is setting a table" not in shown


def test_the_lone_werewolf_is_told_it_is_alone_once(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA])
    table.arrange_deal(
        lambda dealt, center: dealt[ANNA] is Card.WEREWOLF and Card.WEREWOLF in center
    )
    table.start(ANNA)
    table.finish_night(ANNA, lambda *_: "Left centre card")
    dm = table.dm_saying(ANNA, "centre card is").rendered_text
    assert dm.count("You are the only werewolf.") == 1, dm
    assert "You are on the werewolf side" in dm


def test_help_says_this_channels_lengths_and_who_the_game_is_hard_for(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    set_lengths(fake, db, table)
    table.command(ANNA, "help")
    lengths = "In this channel: night 45 seconds, day 4 minutes, vote 1 minute 15 seconds."
    shown = table.ephemeral(ANNA, lengths).rendered_text  # not the help another channel gave
    assert "5 minutes" not in shown
    assert "least comfortable arguing out loud" in shown
    assert "speak first" in shown and "one round of claims" in shown
    assert "The card you hold at dawn is your team" in shown
    assert "For example: Tove is dealt the Robber and takes Nils's card" in shown


def over_with_bots(fake: FakeSlack, app: InProcessApp, db: Engine) -> tuple[Table, int]:
    """Anna and Bo's game with bots, in a channel of its own lengths, to its reveal; and its id."""
    table = new_table(fake, app, db)
    set_lengths(fake, db, table)
    day_of(table, [ANNA, BO], bots=True)
    table.nobody_dies_tonight([ANNA, BO])
    return table, table.game_id()


def test_play_again_opens_one_next_table_with_the_same_people_and_settings(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table, first = over_with_bots(fake, app, db)
    reveal = table.reveal()
    assert "Play again" in [button.text for button in reveal.buttons()]
    # several clicks at once open one table; the others are told it is open
    clicks = [
        threading.Thread(target=table.click, args=(user, reveal, "Play again"))
        for user in (BO, ANNA, BO)
    ]
    for click in clicks:
        click.start()
    for click in clicks:
        click.join()
    table.wait(lambda: table.game_id() != first or None, "the next table")
    table.wait(
        lambda: (
            sum(
                "seated at the table above" in m.rendered_text
                for u in (ANNA, BO)
                for m in fake.ephemerals(u, table.channel)
            )
            == 2
            or None
        ),
        "the two later clicks told a table is open",
    )
    game = table.game()
    assert (game["phase"], game["night_seconds"], game["day_seconds"]) == ("lobby", 45, 240)
    assert game["vote_seconds"] == 75 and game["bots_allowed"]
    seats = table.seats()
    assert [seat["user_id"] for seat in seats if seat["user_id"]] == [ANNA, BO]
    assert len(seats) == 5, "bots refilled"
    with db.connect() as connection:
        opened = connection.exec_driver_sql(
            "SELECT count(*) FROM games WHERE channel_id = %s AND id > %s", (table.channel, first)
        ).scalar_one()
    assert opened == 1
    lobby = table.board("Take a seat", saying="5 of 10 seats taken")
    table.click(BO, lobby, "Leave")
    table.wait(lambda: len(table.seats()) == 4 or None, "bo left the new table")
    table.click(CIA, reveal, "Play again")  # someone not at the new table is told it is open
    said = table.ephemeral(CIA, "A table is already open in this channel").rendered_text
    assert "game is already running" not in said, "a lobby is no running game"


def test_play_again_takes_settings_changed_during_the_game(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """The channel was told that settings changed during a game are for the next table:
    *Play again* opens it with them, bots left out once the channel turned them off."""
    table, first = over_with_bots(fake, app, db)
    with db.begin() as connection:  # as an admin's save of the settings form writes them
        connection.exec_driver_sql(
            "UPDATE channel_settings SET night_seconds = 30, bots_allowed = false, "
            "language = 'sv' WHERE team_id = %s AND channel_id = %s",
            (fake.identity.team_id, table.channel),
        )
    reveal = table.reveal()
    table.click(BO, reveal, "Play again")
    table.wait(lambda: table.game_id() != first or None, "the next table")
    game = table.game()
    assert (game["night_seconds"], game["day_seconds"], game["vote_seconds"]) == (30, 240, 75)
    assert (game["bots_allowed"], game["language"]) == (False, "sv")
    assert [seat["user_id"] for seat in table.seats()] == [ANNA, BO], "no bot refilled"


def test_play_again_while_a_command_opens_a_table_tells_of_that_table(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    day_of(table, [ANNA, BO], bots=True)
    table.nobody_dies_tonight([ANNA, BO])
    first = table.game_id()
    reveal = table.reveal()
    lengths = m.Lengths(60, 120, 60)
    click = threading.Thread(target=table.click, args=(BO, reveal, "Play again"))
    with sessionmaker(db).begin() as session:  # CIA's /varulv, its table not yet committed
        opening = open_table_in(session, fake.identity.team_id, table.channel, lengths, CIA, "")
        assert opening is not None, "the revealed game is the channel's only one, and over"
        game, opened = opening
        enqueue(session.connection(), game, opened.effects)
        click.start()  # Play again inserts its table, and waits on the one-table index

        def waiting() -> bool | None:
            with db.connect() as connection:
                return connection.scalar(WAITING_TO_OPEN) or None

        table.wait(waiting, "Play again to wait on CIA's table")
    click.join(SETTLE_SECONDS)
    said = table.ephemeral(BO, "A table is already open in this channel").rendered_text
    assert "game is already running" not in said, "a lobby is no running game"
    with db.connect() as connection:
        hosts = connection.exec_driver_sql(
            "SELECT host_user_id FROM games WHERE channel_id = %s AND id > %s",
            (table.channel, first),
        ).scalars()
        assert list(hosts) == [CIA], "one table, CIA's"


def test_cancel_asks_only_those_who_may_cancel_and_then_cancels(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    lobby = table.seat_people(ANNA, [BO])
    assert "confirm" not in lobby.button("Cancel").element, "Slack would ask anyone first"
    table.click(DAN, lobby, "Cancel")  # not seated: refused at once, never asked
    table.ephemeral(DAN, "not seated")
    assert not [m for m in fake.ephemerals(DAN) if "Cancel this table?" in m.rendered_text]
    assert table.game()["phase"] == "lobby"
    table.click(BO, lobby, "Cancel")
    question = table.ephemeral(BO, "Cancel this table?")
    assert table.game()["phase"] == "lobby", "asking cancels nothing"
    table.click(DAN, lobby, "Join")  # the question stays with the one who was asked
    table.wait(lambda: len(table.seats()) == 3 or None, "Dan seated")
    table.click(BO, question, "Yes, cancel")
    table.board("Table closed", saying=f"<@{BO}> cancelled this table.")
    assert table.game()["phase"] == "cancelled" and table.game()["ended_by"] == BO
    table.wait(
        lambda: (
            "You cancelled the table." in fake.message(question.channel, question.ts).text or None
        ),
        "the question answered in place",
    )


def everything_said(message: Message) -> str:
    """What a reader sees of ``message`` and what a screen reader says of its buttons."""
    labels = [str(button.element.get("accessibility_label", "")) for button in message.buttons()]
    return "\n".join([message.rendered_text, *labels])


def test_bots_are_marked_on_every_button_and_list_of_a_whole_game(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO], bots=True)
    bots = [seat["display_name"] for seat in table.seats() if seat["bot_name"]]
    assert len(bots) == 3
    table.arrange_deal(
        lambda dealt, center: dealt[ANNA] is Card.SEER and dealt[BO] is Card.TROUBLEMAKER
    )
    table.start(ANNA)
    night = table.board("Night falls").rendered_text
    assert all(f"*{bot}* (bot)" in night for bot in bots), night
    first, second = (f"{bot} (bot)" for bot in bots[:2])

    seer = {b.text: b.element["accessibility_label"] for b in table.dm(ANNA).buttons()}
    assert all(seer[f"{bot} (bot)"] == f"Look at {bot} (bot)'s card" for bot in bots), seer
    table.finish_night(ANNA, lambda *_: first)
    table.dm_saying(ANNA, f"*{bots[0]}* (bot)'s card is")

    swap = table.dm(BO)
    assert swap.button(first).element["accessibility_label"] == f"Swap {first}'s card first"
    table.click(BO, swap, first)
    swap = table.dm_saying(BO, f"Swap *{bots[0]}* (bot) with")
    assert swap.button(second).element["accessibility_label"] == (
        f"Swap {first}'s card with {second}'s"
    )
    table.click(BO, swap, second)
    table.wait_for_phase("day")
    table.heard_enough([ANNA, BO])
    ballot = table.ballot(ANNA)
    assert [ballot.button(f"{bot} (bot)").element["accessibility_label"] for bot in bots] == [
        f"Vote for {bot} (bot)" for bot in bots
    ]
    table.vote({ANNA: "Nobody", BO: "Nobody"})
    table.wait_for_phase("over")
    reveal = table.reveal().rendered_text
    assert all(f"*{bot}* (bot)" in reveal for bot in bots), reveal

    shown = [*table.public(), *fake.dm_messages(ANNA), *fake.dm_messages(BO)]
    shown += fake.ephemerals(ANNA, table.channel) + fake.ephemerals(BO, table.channel)
    for message in shown:
        said = everything_said(message)
        for bot in bots:
            bare = said.replace(f"*{bot}* (bot)", "").replace(f"{bot} (bot)", "")
            assert not re.search(rf"\b{bot}\b", bare), f"{bot} unmarked in: {said}"


def test_the_reveal_has_a_header_of_its_own(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    table = new_table(fake, app, db)
    day_of(table, [ANNA, BO, CIA])
    table.nobody_dies_tonight([ANNA, BO, CIA])
    table.reveal()
    headers = [
        block["text"]["text"]
        for message in table.public()
        for block in message.blocks
        if block["type"] == "header"
    ]
    assert headers.count("Dawn breaks") == 1, headers  # the night board, once the night is over
    assert "The reveal: what really happened" in headers


def open_home(table: Table, user: str) -> str:
    """``user`` opens the App Home tab; what it shows once the app has published it."""
    fake = table.fake
    before = (fake.home_view(user) or {}).get("hash")
    table.aim()
    assert fake.app_home_opened(user).status_code == 200
    view: dict[str, Any] = table.wait(
        lambda: shown if (shown := fake.home_view(user)) and shown.get("hash") != before else None,
        f"{user}'s Home tab",
    )
    return readable_text(view["blocks"])


def places(lines: str) -> set[tuple[int, str]]:
    """The ``N. <@U>`` rows of a ranking: (place, user)."""
    return {(int(n), user) for n, user in re.findall(r"^(\d+)\. <@(\w+)>", lines, re.M)}


def test_tied_players_share_a_place_on_the_leaderboard_and_the_home_tab(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    # People of their own: the Home tab shows each person's channels, and these have one.
    wolf, vera, olle = "U0TIEULF", "U0TIEVERA", "U0TIEOLLE"
    for user in (wolf, vera, olle):
        fake.add_user(user, user[5:].lower())
    table = Table(fake, app, db)
    set_lengths(fake, db, table)
    table.seat_people(wolf, [vera, olle])
    table.arrange_deal(
        lambda dealt, center: dealt[wolf] is Card.WEREWOLF and Card.WEREWOLF in center
    )
    table.start(wolf)
    table.finish_night(wolf, lambda *_: "Left centre card")
    table.play_night([vera, olle], lambda *_: "Skip")
    table.wait_for_phase("day")
    table.heard_enough([vera, olle])
    table.vote({wolf: "vera", vera: "ulf", olle: "ulf"})
    table.wait_for_phase("over")
    outcome = table.stored_outcome_matches_referee()
    assert outcome["dead"] == [wolf]
    assert outcome["points"][vera] == outcome["points"][olle] > outcome["points"][wolf]
    tied = {(1, vera), (1, olle), (3, wolf)}

    table.command(olle, "score")
    board = table.wait(
        lambda: next(
            (
                m.rendered_text
                for m in fake.ephemerals(olle, table.channel)
                if "Varulv leaderboard" in m.rendered_text
            ),
            None,
        ),
        "the leaderboard",
    )
    rankings = re.split(r"^\*(?:This season|All time)", board, flags=re.M)[1:]
    assert len(rankings) == 2, board  # this season's, and all time
    for ranking in rankings:
        assert places(ranking) == tied, board
    listed = [re.findall(r"^\d+\. <@(\w+)>", ranking, re.M) for ranking in rankings]
    assert listed[0] == listed[1], board  # the tied people in the same order in both

    home = open_home(table, wolf)
    here = home.split(f"<#{table.channel}>")[1]
    assert places(here.split("<#")[0]) == tied, home
    assert f"3. <@{wolf}>" in here and "← you" in here
    assert here.index("This season") < here.index("All time"), "as `/varulv score` shows"
    home_order = re.findall(r"^\d+\. <@(\w+)>", here.split("<#")[0], re.M)
    assert home_order == listed[1], home
    # The Home tab's wording, whatever this channel set (its day is 4 minutes).
    assert "least comfortable arguing out loud" in home
    assert "speak first" in home and "one round of claims" in home
    assert "The card you hold at dawn is your team" in home
    assert "For example: Tove is dealt the Robber" in home
    assert not re.search(r"\d+ minute", home), home
    for tied_first in (vera, olle):  # the season's place, shared too
        points = outcome["points"][tied_first]
        assert f"you, place 1 with {points} points." in open_home(table, tied_first)
