"""Whole games, played the way Slack talks to the app: signed commands and clicks."""

from __future__ import annotations

from sqlalchemy import Engine, text

from slackapp.blocks.screen import deck_text
from slackapp.fakeslack import FakeSlack
from slackapp.game import Card
from tests.e2e.driver import Table, without_deck
from tests.inprocess.harness import InProcessApp

NAMES = {
    "U0ANNA": "anna",
    "U0BO": "bo",
    "U0CIA": "cia",
    "U0DAN": "dan",
    "U0EVA": "eva",
    "U0FIA": "fia",
    "U0GUS": "gus",
    "U0HUGO": "hugo",
    "U0IDA": "ida",
    "U0JON": "jon",
}
PEOPLE = list(NAMES)
CARDS = [card.value for card in Card]


def new_table(fake: FakeSlack, app: InProcessApp, db: Engine) -> Table:
    for user, name in NAMES.items():
        fake.add_user(user, name)
    return Table(fake, app, db)


def public_text_before_reveal(table: Table) -> str:
    """Everything public in the channel but the deck: text, blocks and every button value."""
    return without_deck(
        "\n".join(
            f"{m.text}\n{m.rendered_text}\n" + " ".join(str(b.value) for b in m.buttons())
            for m in table.public()
        )
    )


def assert_no_card_is_public(table: Table) -> None:
    shown = public_text_before_reveal(table)
    for card in CARDS:
        assert card not in shown, f"{card} is visible in the channel before the reveal"


def test_three_people_from_command_to_reveal(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    anna, bo, cia = PEOPLE[:3]
    table.seat_people(anna, [bo, cia])
    table.start(anna)
    night_board = table.board("Night falls")
    assert "0 of 3 people have confirmed" in night_board.rendered_text
    for shown in (night_board, *(table.dm(user) for user in (anna, bo, cia))):
        assert deck_text(3) in shown.rendered_text

    table.finish_night(anna, lambda *_: table.dm(anna).buttons()[0].text)
    table.wait(
        lambda: "1 of 3 people" in table.board("Night falls").rendered_text or None,
        "the night board to count one confirmation",
    )
    assert_no_card_is_public(table)
    table.play_night([bo, cia])
    table.wait_for_phase("day")
    assert_no_card_is_public(table)

    table.heard_enough([anna])
    table.ephemeral(anna, "you have heard enough")
    assert table.game()["phase"] == "day", "one of three is not more than half"
    table.heard_enough([bo])
    table.wait_for_phase("vote")

    table.vote({anna: "bo", bo: "cia", cia: "Nobody"})
    table.wait_for_phase("over")
    reveal = table.reveal()
    outcome = table.stored_outcome_matches_referee()
    for user in (anna, bo, cia):
        assert f"<@{user}>" in reveal.rendered_text
    # One each for bo and cia, one for nobody: top 1, nobody 1, so nobody dies.
    assert outcome["dead"] == []
    assert outcome["tally"] == {bo: 1, cia: 1, "nobody": 1}
    assert "No one died" in reveal.rendered_text

    for user in (anna, bo, cia):
        table.result_dm(user)
    with db.connect() as connection:
        scores: dict[str, int] = dict(
            connection.execute(
                text("SELECT user_id, points FROM scores WHERE channel_id = :c"),
                {"c": table.channel},
            ).all()
        )
    assert scores == {user: outcome["points"][user] for user in (anna, bo, cia)}

    table.command(anna, "score")
    board = table.ephemeral(anna, "Varulv leaderboard")
    for user in (anna, bo, cia):
        assert f"<@{user}>" in str(board.blocks)


def test_three_people_and_two_bots(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    table = new_table(fake, app, db)
    anna, bo, cia = PEOPLE[:3]
    table.seat_people(anna, [bo, cia], bots=True)
    seats = table.seats()
    assert len(seats) == 5
    assert sum(seat["user_id"] is None for seat in seats) == 2
    table.start(anna)
    bots = [seat for seat in table.seats() if seat["user_id"] is None]
    assert all(seat["confirmed"] for seat in bots), "bots choose at once"
    assert len(fake.dm_messages(anna)) >= 1

    table.play_night([anna, bo, cia])
    table.wait_for_phase("day")
    table.heard_enough([anna, bo])
    table.wait_for_phase("vote")
    assert [button.text for button in table.board("One sealed ballot each").buttons()] == ["Vote"]
    marked = [seat["display_name"] + (" (bot)" if seat["bot_name"] else "") for seat in seats]
    ballot = [button.text for button in table.ballot(anna).buttons()]
    assert ballot == [*[name for name in marked if name != "anna"], "Nobody"]
    assert sorted(marked[:3]) == ["anna", "bo", "cia"]
    assert marked[3:] == [f"{seat['display_name']} (bot)" for seat in bots]
    with db.connect() as connection:
        bot_ballots = connection.execute(
            text("SELECT count(*) FROM ballots WHERE game_id = :id"), {"id": table.game_id()}
        ).scalar_one()
    assert bot_ballots == 2, "bots vote as the vote opens"

    table.vote({anna: "bo", bo: "anna", cia: "anna"})
    table.wait_for_phase("over")
    table.reveal()
    outcome = table.stored_outcome_matches_referee()
    assert len(outcome["points"]) == 5
    with db.connect() as connection:
        scored = connection.execute(
            text("SELECT count(*) FROM scores WHERE channel_id = :c"), {"c": table.channel}
        ).scalar_one()
    assert scored == 3, "bots score in the game but keep no record"


def test_ten_people(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    table = new_table(fake, app, db)
    host, *others = PEOPLE
    lobby = table.seat_people(host, others)
    assert "Fill with bots" not in [b.text for b in fake.message(lobby.channel, lobby.ts).buttons()]
    table.start(host)
    dealt = {user: table.card(user) for user in PEOPLE}
    assert {Card.MINION, Card.INSOMNIAC, Card.VILLAGER} & set(dealt.values())
    lone_minion = Card.WEREWOLF not in dealt.values()  # both Werewolves lie in the centre
    for user, card in dealt.items():  # a beginner's line: what the card plays for by day
        side = "werewolf" if card in (Card.WEREWOLF, Card.MINION) else "village"
        shown = table.dm(user).rendered_text
        if card is Card.MINION and lone_minion:
            assert "No one at the table holds a Werewolf, so you win only if" in shown, shown
        else:
            assert f"You are on the {side} side" in shown, shown
        assert "Your card may have moved in the night" in shown, shown
    table.play_night(PEOPLE)
    table.wait_for_phase("day")
    table.heard_enough(PEOPLE[:6])
    table.wait_for_phase("vote")
    table.vote({user: NAMES[PEOPLE[(i + 1) % 10]] for i, user in enumerate(PEOPLE)})
    table.wait_for_phase("over")
    outcome = table.stored_outcome_matches_referee()
    assert outcome["dead"] == table.seat_keys(), "a ten-way tie at one ballot each kills all"
    assert len(table.reveal().blocks) <= 50


def test_deadlines_end_every_phase(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    """Nobody clicks: the night, the day and the vote each end on their deadline."""
    table = new_table(fake, app, db)
    anna, bo, cia = PEOPLE[:3]
    table.seat_people(anna, [bo, cia])
    table.start(anna)
    app.pass_time(table.game()["night_seconds"])
    table.wait_for_phase("day")
    for user in (anna, bo, cia):
        table.dm_saying(user, "The night ended before you")
    app.pass_time(table.game()["day_seconds"])
    table.wait_for_phase("vote")
    day_over = table.board("The day is over")
    assert "Time is up." in day_over.rendered_text and "Time is up: the day" not in day_over.text
    assert day_over.rendered_text.count("day is over") == 1, day_over.rendered_text
    app.pass_time(table.game()["vote_seconds"])
    table.wait_for_phase("over")
    outcome = table.stored_outcome_matches_referee()
    assert outcome["dead"] == [] and outcome["tally"] == {}


def test_both_wolves_in_the_centre_and_nobody_dies(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    anna, bo, cia = PEOPLE[:3]
    table.seat_people(anna, [bo, cia])
    table.arrange_deal(lambda dealt, center: center == (Card.WEREWOLF, Card.WEREWOLF))
    table.start(anna)
    table.play_night([anna, bo, cia])
    table.wait_for_phase("day")
    outcome = table.nobody_dies_tonight([anna, bo, cia])
    assert outcome["center"] == ["Werewolf", "Werewolf"]
    assert outcome["dead"] == []
    assert outcome["winning_team"] == "village"
    assert outcome["points"] == {anna: 2, bo: 2, cia: 2}
    assert "village" in table.reveal().rendered_text.lower()


def test_a_tie_kills_two(fake: FakeSlack, app: InProcessApp, db: Engine) -> None:
    table = new_table(fake, app, db)
    anna, bo, cia, dan = PEOPLE[:4]
    table.seat_people(anna, [bo, cia, dan])
    table.start(anna)
    table.play_night([anna, bo, cia, dan])
    table.wait_for_phase("day")
    table.heard_enough([anna, bo, cia])
    table.vote({anna: "bo", bo: "anna", cia: "anna", dan: "bo"})
    table.wait_for_phase("over")
    outcome = table.stored_outcome_matches_referee()
    assert outcome["dead"] == [anna, bo]
    reveal = table.reveal().rendered_text
    assert f"<@{anna}>" in reveal and f"<@{bo}>" in reveal


def test_the_reveal_tells_what_the_night_did_to_the_teams(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    anna, bo, cia = PEOPLE[:3]
    table.seat_people(anna, [bo, cia])
    table.arrange_deal(
        lambda dealt, center: (
            dealt[anna] is Card.ROBBER
            and dealt[bo] is Card.WEREWOLF
            and dealt[cia] is not Card.TROUBLEMAKER
        )
    )
    table.start(anna)
    table.finish_night(anna, lambda *_: "bo")
    table.play_night(
        [bo, cia],
        lambda user, card, dm: "Skip" if card.value != "Werewolf" else dm.buttons()[0].text,
    )
    table.wait_for_phase("day")
    table.nobody_dies_tonight([anna, bo, cia])
    reveal = table.reveal().rendered_text
    told = (
        f"<@{anna}> took the Werewolf from <@{bo}>, so <@{anna}> went over to the werewolf "
        f"side and <@{bo}> to the village side, holding the Robber."
    )
    assert told in reveal
    assert reveal.index(told) < reveal.index("The cards")


def test_the_reveal_says_when_the_night_moved_cards_but_no_one_changed_sides(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    anna, bo, cia = PEOPLE[:3]
    table.seat_people(anna, [bo, cia])
    table.arrange_deal(lambda dealt, center: dealt[anna] is Card.ROBBER and dealt[bo] is Card.SEER)
    table.start(anna)
    table.finish_night(anna, lambda *_: "bo")  # the Robber takes the Seer: both stay village
    table.play_night([bo, cia], lambda user, card, dm: dm.buttons()[-1].text)  # Skip, Got it
    table.wait_for_phase("day")
    table.nobody_dies_tonight([anna, bo, cia])
    reveal = table.reveal().rendered_text
    assert "No one changed sides in the night" in reveal, reveal
    assert "went over" not in reveal
    assert reveal.index("No one changed sides") < reveal.index("The cards")
