"""Every line the machine can say has words in every language: one example of each
:class:`Message`, said in English and in Swedish, and the Swedish is Swedish wherever the
catalogue translates the sentences it is made of."""

from __future__ import annotations

import gettext

import pytest

from slackapp.blocks.said import said
from slackapp.blocks.words import Words, words
from slackapp.game.lines import Language, Line, Message, SeatName
from slackapp.game.night import NightRule
from slackapp.game.permissions import Role, WhoMay
from tests.test_translations import catalogue, translated_forms

ANNA = SeatName("U0ANNA", "Anna", False)
BOT = SeatName("bot1", "Bot 1", True)
STANDING_TABLE_SET = WhoMay(anyone=False, host="U0HOST", standing_owner="U0OWNER")

EXAMPLES: dict[Message, tuple[Line, ...]] = {
    Message.NOT_SEATED: (Line(Message.NOT_SEATED, flag=True), Line(Message.NOT_SEATED)),
    Message.NOT_SEATED_TO_LEAVE: (Line(Message.NOT_SEATED_TO_LEAVE),),
    Message.ALREADY_SEATED: (Line(Message.ALREADY_SEATED),),
    Message.TABLE_FULL: (Line(Message.TABLE_FULL, count=10),),
    Message.BOTS_OFF: (Line(Message.BOTS_OFF),),
    Message.BOTS_FILL_UP_TO: (Line(Message.BOTS_FILL_UP_TO, count=5),),
    Message.NEEDS_PEOPLE: (Line(Message.NEEDS_PEOPLE, count=2),),
    Message.SEATS_OUT_OF_BOUNDS: (
        Line(Message.SEATS_OUT_OF_BOUNDS, count=2, flag=True),
        Line(Message.SEATS_OUT_OF_BOUNDS, count=11),
    ),
    Message.SOMEONE_SAT_DOWN: (Line(Message.SOMEONE_SAT_DOWN),),
    Message.CANNOT_MESSAGE: (Line(Message.CANNOT_MESSAGE, seats=(ANNA,)),),
    Message.GAME_GONE: (Line(Message.GAME_GONE),),
    Message.GAME_OVER: (Line(Message.GAME_OVER),),
    Message.GAME_STARTED: (Line(Message.GAME_STARTED),),
    Message.NOT_REVEALED: (Line(Message.NOT_REVEALED),),
    Message.SEATED_IN_LOBBY: (Line(Message.SEATED_IN_LOBBY),),
    Message.LOBBY_OPEN: (Line(Message.LOBBY_OPEN, flag=True), Line(Message.LOBBY_OPEN)),
    Message.GAME_RUNNING: (
        Line(Message.GAME_RUNNING, user="U0HOST", phase="day"),
        Line(Message.GAME_RUNNING, user="U0HOST", phase="night", flag=True),
        Line(Message.GAME_RUNNING, user="U0HOST", phase="vote", flag=True, role=Role.HOST),
        Line(Message.GAME_RUNNING, user="U0HOST", phase="day", who_may=STANDING_TABLE_SET),
        Line(
            Message.GAME_RUNNING,
            user="U0HOST",
            phase="day",
            who_may=STANDING_TABLE_SET,
            role=Role.STANDING_OWNER,
        ),
        Line(
            Message.GAME_RUNNING,
            user="U0HOST",
            phase="night",
            who_may=WhoMay(anyone=True, host="U0HOST", standing_owner=None),
            role=Role.ANYONE,
        ),
    ),
    Message.NOBODY_STARTED: (Line(Message.NOBODY_STARTED),),
    Message.EVERYONE_LEFT: (Line(Message.EVERYONE_LEFT),),
    Message.CANCELLED_BY: (Line(Message.CANCELLED_BY, user="U0HOST"),),
    Message.NIGHT_IS_OVER: (Line(Message.NIGHT_IS_OVER),),
    Message.NIGHT_NOT_SEATED: (Line(Message.NIGHT_NOT_SEATED),),
    Message.ALREADY_CONFIRMED: (Line(Message.ALREADY_CONFIRMED),),
    Message.ILLEGAL_MOVE: tuple(
        Line(Message.ILLEGAL_MOVE, rule=rule) for rule in (*NightRule, None)
    ),
    Message.DAY_NOT_BEGUN: (Line(Message.DAY_NOT_BEGUN),),
    Message.DAY_IS_OVER: (Line(Message.DAY_IS_OVER),),
    Message.DAY_OVER_VOTE_OPEN: (Line(Message.DAY_OVER_VOTE_OPEN),),
    Message.NOT_YOUR_DAY: (Line(Message.NOT_YOUR_DAY),),
    Message.HEARD_ENOUGH_NOTED: (Line(Message.HEARD_ENOUGH_NOTED),),
    Message.HEARD_ENOUGH_TAKEN_BACK: (Line(Message.HEARD_ENOUGH_TAKEN_BACK),),
    Message.TIME_IS_UP: (Line(Message.TIME_IS_UP),),
    Message.HEARD_ENOUGH: (
        Line(Message.HEARD_ENOUGH, count=2, total=2),
        Line(Message.HEARD_ENOUGH, count=4, total=4),
        Line(Message.HEARD_ENOUGH, count=3, total=5),
    ),
    Message.VOTE_OPENED_BY_YOU: (
        Line(Message.VOTE_OPENED_BY_YOU, reason=Line(Message.HEARD_ENOUGH, count=3, total=5)),
        Line(Message.VOTE_OPENED_BY_YOU),
    ),
    Message.VOTE_NOT_YET_OPEN: (Line(Message.VOTE_NOT_YET_OPEN),),
    Message.VOTE_IS_CLOSED: (Line(Message.VOTE_IS_CLOSED),),
    Message.NO_BALLOT: (Line(Message.NO_BALLOT),),
    Message.NO_SELF_VOTE: (Line(Message.NO_SELF_VOTE),),
    Message.BALLOT_NAMES_NOBODY_SEATED: (Line(Message.BALLOT_NAMES_NOBODY_SEATED),),
    Message.BALLOT_STAYS: (Line(Message.BALLOT_STAYS, seat=BOT), Line(Message.BALLOT_STAYS)),
    Message.BALLOT_CAST: (Line(Message.BALLOT_CAST, seat=ANNA), Line(Message.BALLOT_CAST)),
    Message.BALLOT_CAST_LAST: (Line(Message.BALLOT_CAST_LAST, seat=ANNA),),
    Message.NO_GAME_RUNNING: (Line(Message.NO_GAME_RUNNING),),
    Message.ANOTHER_GAME_NOW: (Line(Message.ANOTHER_GAME_NOW),),
    Message.STOPPED_BY: (Line(Message.STOPPED_BY, user="U0HOST"),),
    Message.STOPPED_IN: (Line(Message.STOPPED_IN, user="U0HOST", channel="C0TABLE"),),
    Message.YOU_STOPPED: (Line(Message.YOU_STOPPED),),
    Message.YOU_CANCELLED: (Line(Message.YOU_CANCELLED),),
    Message.CHANNEL_LOST: (
        Line(Message.CHANNEL_LOST, channel="C0TABLE", error="channel_not_found", flag=True),
        Line(Message.CHANNEL_LOST, channel="C0TABLE", error="not_in_channel"),
    ),
    Message.CHANNEL_LOST_ENDED: (
        Line(Message.CHANNEL_LOST_ENDED, channel="C0TABLE", error="is_archived"),
    ),
    Message.UNREACHABLE: (Line(Message.UNREACHABLE, seat=ANNA),),
    Message.FAULT_ENDED: (Line(Message.FAULT_ENDED),),
    Message.FAULT_ENDED_IN: (Line(Message.FAULT_ENDED_IN, channel="C0TABLE"),),
    Message.FAULT_CHANNEL_FREE: (Line(Message.FAULT_CHANNEL_FREE),),
    Message.DEAL_SEALED: (Line(Message.DEAL_SEALED, fingerprint="0123abcd"),),
    Message.NIGHT_SEALED: (Line(Message.NIGHT_SEALED, fingerprint="4567ef01"),),
    Message.ANOTHER_WORKSPACE: (Line(Message.ANOTHER_WORKSPACE),),
    Message.OPENED_MEANWHILE: (Line(Message.OPENED_MEANWHILE),),
}

ENGLISH = words(Language.ENGLISH)
SWEDISH = words(Language.SWEDISH)
SWEDISH_CATALOGUE = catalogue(Language.SWEDISH)


class Asked(gettext.NullTranslations):
    """English, noting every sentence a line is made of."""

    def __init__(self) -> None:
        super().__init__()
        self.sentences: list[str] = []

    def gettext(self, message: str) -> str:
        self.sentences.append(message)
        return message

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        self.sentences.append(msgid1)
        return msgid1 if n == 1 else msgid2


def sentences_of(line: Line) -> list[str]:
    asked = Asked()
    said(line, Words(Language.ENGLISH, asked))
    return asked.sentences


def swedish_differs(sentence: str) -> bool:
    entry = SWEDISH_CATALOGUE.get(sentence)
    return entry is not None and any(form != sentence for form in translated_forms(entry))


def test_every_message_has_an_example() -> None:
    assert [message for message in Message if message not in EXAMPLES] == []
    assert all(line.message is message for message, lines in EXAMPLES.items() for line in lines)


@pytest.mark.parametrize("message", list(Message))
@pytest.mark.parametrize("language", list(Language))
def test_every_line_has_words_in_every_language(message: Message, language: Language) -> None:
    for line in EXAMPLES.get(message, ()):
        text = said(line, words(language))
        assert text.strip(), line
        assert "{" not in text and "}" not in text, text  # every placeholder filled


@pytest.mark.parametrize("message", list(Message))
def test_the_swedish_is_swedish_where_the_catalogue_translates_it(message: Message) -> None:
    examples = EXAMPLES.get(message, ())
    assert examples, f"no example of {message!r}"
    for line in examples:
        sentences = sentences_of(line)
        assert sentences, line
        english, swedish = said(line, ENGLISH), said(line, SWEDISH)
        if any(swedish_differs(sentence) for sentence in sentences):
            assert swedish != english, line
        else:
            assert swedish == english, line
