"""Each person is told what they know: the side of the card they learned they hold, and, once
the game is over, their own night still in their private message, their result below it."""

from __future__ import annotations

from sqlalchemy import Engine

from slackapp.blocks.sides import goal
from slackapp.fakeslack import FakeSlack, Message
from slackapp.game import Card
from slackapp.game.cards import Team
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_games import NAMES, PEOPLE, new_table

ANNA, BO, CIA = PEOPLE[:3]
WOLF_SIDE = f"You are now on the werewolf side: {goal(Team.WEREWOLF)}."
VILLAGE_GOAL = goal(Team.VILLAGE)


def test_the_robber_who_takes_a_werewolf_is_told_the_werewolf_side_and_that_it_may_move(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA])
    table.arrange_deal(lambda dealt, _: dealt[ANNA] is Card.ROBBER and dealt[BO] is Card.WEREWOLF)
    table.start(ANNA)
    assert "You are on the village side" in table.dm(ANNA).rendered_text  # as dealt
    table.finish_night(ANNA, lambda *_: NAMES[BO])
    dm = table.dm_saying(ANNA, "your card is now *Werewolf*").rendered_text
    assert WOLF_SIDE in dm, dm
    assert "could still swap your card, and your side with it" in dm
    assert VILLAGE_GOAL not in dm and "You are on the village side" not in dm, dm
    assert dm.index("your card is now *Werewolf*") < dm.index(WOLF_SIDE)


def nothing_tonight(user: str, card: Card, dm: Message) -> str:
    return "Skip" if "Skip" in [button.text for button in dm.buttons()] else "Got it"


def skip_or_swap_anna_with_cia(user: str, card: Card, dm: Message) -> str:
    """Bo, the Troublemaker, swaps Anna's card with Cia's; everyone else does nothing."""
    offered = [button.text for button in dm.buttons()]
    if user == BO:
        return NAMES[ANNA] if NAMES[ANNA] in offered else NAMES[CIA]
    return "Skip" if "Skip" in offered else "Got it"


def test_the_insomniac_who_wakes_as_a_werewolf_is_told_the_werewolf_side_for_good(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    five = PEOPLE[:5]
    table.seat_people(ANNA, five[1:])
    table.arrange_deal(
        lambda dealt, _: (
            dealt[ANNA] is Card.INSOMNIAC
            and dealt[BO] is Card.TROUBLEMAKER
            and dealt[CIA] is Card.WEREWOLF
        )
    )
    table.start(ANNA)
    table.play_night(five, skip_or_swap_anna_with_cia)
    table.wait_for_phase("day")
    dm = table.dm_saying(ANNA, "At the end of the night your card is *Werewolf*").rendered_text
    assert WOLF_SIDE in dm, dm
    assert "No card wakes after yours: this is your card, and your side, at dawn." in dm
    assert "You are on the village side" not in dm and VILLAGE_GOAL not in dm, dm


def test_dawn_is_drawn_through_the_clicks_that_led_to_it_not_chat_update(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    """Dawn on the night board and the Insomniac's card at dawn are each their message's last
    word: they go through the message's newest click (*Start*, the Insomniac's own *Got it*),
    sparing the workspace's ``chat.update`` budget, which all its tables share."""
    before = len(fake.calls)
    table = new_table(fake, app, db)
    five = PEOPLE[:5]
    table.seat_people(ANNA, five[1:])
    table.arrange_deal(lambda dealt, _: dealt[BO] is Card.INSOMNIAC)
    table.start(ANNA)
    table.play_night([BO, *five[:1], *five[2:]], nothing_tonight)
    table.wait_for_phase("day")
    dawn = table.board("Dawn breaks")
    insomniac = table.dm_saying(BO, "At the end of the night your card is")
    updated = [c for c in fake.calls[before:] if c.method == "chat.update"]
    dawn_updates = [c for c in updated if "Dawn breaks" in str(c.params.get("text"))]
    assert dawn.edited_ts and not dawn_updates, "dawn drawn, and not by chat.update"
    assert not [c for c in updated if c.params.get("channel") == insomniac.channel]


def test_the_games_end_is_a_message_below_the_persons_own_night_which_stays(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA])
    table.arrange_deal(lambda dealt, _: dealt[ANNA] is Card.ROBBER and dealt[BO] is Card.SEER)
    table.start(ANNA)
    table.finish_night(ANNA, lambda *_: NAMES[BO])
    table.play_night([BO, CIA], lambda *_: "Skip")
    table.wait_for_phase("day")
    robbed = f"You took <@{BO}>'s card: your card is now *Seer*."

    night = table.dm_saying(ANNA, robbed)
    table.nobody_dies_tonight([ANNA, BO, CIA])

    over = table.result_dm(ANNA)
    assert over.ts > night.ts
    assert "You were dealt the *Robber* and held the *Seer* at dawn" in over.rendered_text
    assert robbed not in over.rendered_text, "the night is told once, in the night message"
    said = fake.dm_messages(ANNA)
    kept = next(m for m in said if m.ts == night.ts)
    assert kept == night, "the night message is not redrawn at the game's end"
    assert said.index(kept) < said.index(over), "the result comes below the night"


def test_every_points_line_says_why_zero_included(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    table.seat_people(ANNA, [BO, CIA])
    table.arrange_deal(
        lambda dealt, center: dealt[ANNA] is Card.WEREWOLF and Card.WEREWOLF in center
    )
    table.start(ANNA)
    table.play_night([ANNA, BO, CIA], lambda *_: "Skip")
    table.wait_for_phase("day")
    table.heard_enough([BO, CIA])
    table.vote({ANNA: NAMES[BO], BO: NAMES[ANNA], CIA: NAMES[ANNA]})
    table.wait_for_phase("over")
    points = table.reveal().rendered_text.split("*Points*")[1].split("Play again")[0]
    assert f"<@{ANNA}>: *0 points* (lost; the ballot named no Werewolf)" in points, points
    assert f"<@{BO}>: *3 points* (won; named a Werewolf)" in points, points
    assert f"<@{CIA}>: *3 points* (won; named a Werewolf)" in points, points

    over = table.result_dm(ANNA).rendered_text
    assert "0 points this game: lost; your ballot named no Werewolf." in over, over
