"""A Swedish table: the channel's language chosen in ``/varulv settings``, then a whole game in
which no English reaches a screen but the cards' names and lines, people's names and Slack's
mentions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from sqlalchemy import Engine, text

from slackapp.blocks.words import LANGUAGE_NAMES, words
from slackapp.fakeslack import FakeSlack, Message
from slackapp.game.cards import Card
from slackapp.game.lines import Language
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_games import NAMES, PEOPLE, new_table
from tests.test_translations import PLACEHOLDER, catalogue, translated_forms

SV = words(Language.SWEDISH)
ANNA, BO, CIA, DAN = PEOPLE[:4]
SLACK_MARKUP = re.compile(r"<[@#!][^>]*>|:[a-z_]+:")
"""Mentions, channel links, dates and emoji: Slack draws them, not the words."""
CODE = re.compile(r"```.*?```|`[^`]*`", re.DOTALL)
"""What a person types or saves as it is: commands, file names."""


def english_fragments() -> set[str]:
    """The English of every sentence in the catalogue (its msgids are the English source)
    that its Swedish does not share: the literal parts
    between its placeholders (a sentence's "(bot)" is Swedish too), and every longer English
    word that no Swedish sentence uses, so that English written outside the catalogue is
    caught too."""
    swedish = catalogue(Language.SWEDISH)
    fragments: set[str] = set()
    every_swedish = " ".join(" ".join(translated_forms(e)) for e in swedish if e.id)
    for entry in swedish:
        if not entry.id:
            continue
        forms = (entry.id,) if isinstance(entry.id, str) else tuple(entry.id)
        assert entry.string, forms
        translated = " ".join(translated_forms(entry))
        for form in forms:
            for part in PLACEHOLDER.split(CODE.sub("{}", SLACK_MARKUP.sub("{}", form)))[::2]:
                part = part.strip(' \n*_:;,.()!?…—-`"“”')
                if re.search(r"[A-Za-z]{3}", part) and part not in translated:
                    fragments.add(part)
                # and each longer English word no Swedish sentence uses, wherever it shows up
                for word in re.findall(r"[A-Za-z']{5,}", part):
                    if not re.search(rf"(?<!\w){word}(?!\w)", every_swedish):
                        fragments.add(word)
    return fragments


def texts_in(blocks: Any) -> Iterator[str]:
    """Every string a person reads in Block Kit: text objects, button labels, modal titles."""
    if isinstance(blocks, dict):
        for key, value in blocks.items():
            if key in ("text", "accessibility_label") and isinstance(value, str):
                yield value
            else:
                yield from texts_in(value)
    elif isinstance(blocks, list):
        for each in blocks:
            yield from texts_in(each)


def readable(message: Message) -> str:
    return "\n".join([message.text, *texts_in(message.blocks)])


def without_what_stays(shown: str) -> str:
    """The screen without what stays as it is in every language."""
    for card in Card:  # longest first: "Villager" inside no other, "Werewolf" before its line
        shown = shown.replace(card.line, " ")
    for card in Card:
        shown = shown.replace(card.value, " ")
    for name in [*NAMES.values(), *LANGUAGE_NAMES.values()]:  # a language by its own name
        shown = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " ", shown)
    return CODE.sub(" ", SLACK_MARKUP.sub(" ", shown.replace("Varulv", " ")))


class Screens:
    """Everything the table's people were shown, gathered as the game goes (a board redrawn
    keeps only its newest version, so it is read at every phase)."""

    def __init__(self, fake: FakeSlack, table: Table) -> None:
        self.fake, self.table = fake, table
        self.seen: dict[str, str] = {}
        self.before = {(m.channel, m.ts) for m in self._private()}
        """What the same people were shown by earlier tests' tables, which is not this one's."""

    def _private(self) -> list[Message]:
        return [
            m
            for user in PEOPLE[:4]
            for m in (*self.fake.dm_messages(user), *self.fake.ephemerals(user))
        ]

    def look(self) -> None:
        messages = [*self.table.public()]
        messages += [m for m in self._private() if (m.channel, m.ts) not in self.before]
        for user in PEOPLE[:4]:
            for modal in self.fake.modals(user):
                self.seen[f"modal {modal['id']}"] = "\n".join(texts_in(modal))
        for message in messages:
            self.seen[f"{message.channel} {message.ts} {readable(message)}"] = readable(message)

    def english(self) -> dict[str, list[str]]:
        fragments = english_fragments()
        found: dict[str, list[str]] = {}
        for shown in self.seen.values():
            left = without_what_stays(shown)
            leaked = [f for f in fragments if re.search(rf"(?<!\w){re.escape(f)}(?!\w)", left)]
            if leaked:
                found[shown] = leaked
        return found


def choose_swedish(fake: FakeSlack, table: Table, admin: str) -> None:
    fake.set_role(admin, "admin")
    table.command(admin, "settings")
    table.wait(lambda: next(iter(fake.modals(admin)), None), "the settings modal")
    answer = fake.view_submission(admin, {"language": Language.SWEDISH.value})
    assert answer.status_code == 200 and not answer.text.strip(), answer.text
    with table.db.connect() as connection:
        chosen = connection.execute(
            text("SELECT language FROM channel_settings WHERE channel_id = :c"),
            {"c": table.channel},
        ).scalar_one()
    assert chosen == "sv"


def test_the_settings_choose_the_channels_language(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    choose_swedish(fake, table, ANNA)
    told = table.board("ändrade Varulvs inställningar")
    assert "Svenska" in told.text, "the channel is told, in its new language"
    table.command(ANNA, "settings")
    modal = table.wait(lambda: next(iter(fake.modals(ANNA)), None), "the settings modal again")
    shown = "\n".join(texts_in(modal))
    assert SV._("Varulv settings") in shown and "Språk" in shown
    assert "Svenska" in shown and "English" in shown, "each language by its own name"
    fake.view_submission(ANNA, {"language": Language.ENGLISH.value})
    table.board("changed the Varulv settings")


def test_a_whole_swedish_game_shows_no_english(
    fake: FakeSlack, app: InProcessApp, db: Engine
) -> None:
    table = new_table(fake, app, db)
    screens = Screens(fake, table)
    choose_swedish(fake, table, ANNA)

    table.command(ANNA)
    lobby = table.wait(
        lambda: next((m for m in table.public() if SV._("Join") in str(m.blocks)), None),
        "the Swedish lobby",
    )
    for user in (BO, CIA):
        table.click(user, lobby, SV._("Join"))
    table.wait(lambda: len(table.seats()) == 3 or None, "three seated")
    table.click(DAN, lobby, SV._("Start"))  # refused: not seated
    table.wait(
        lambda: next((m for m in fake.ephemerals(DAN) if "Sätt dig" in m.text), None),
        "the refusal, in Swedish",
    )
    table.click(DAN, lobby, SV._("Leave"))  # not seated: told so
    table.click(BO, lobby, SV._("I usually play"))
    table.ephemeral(BO, "Noterat: du brukar spela")
    table.command(ANNA, "schedule")
    table.wait(lambda: next(iter(fake.modals(ANNA)), None), "the standing table's form")
    screens.look()
    assert any(SV._("Standing table") in shown for shown in screens.seen.values())
    fake.close_modal(ANNA)
    table.click(ANNA, lobby, SV._("Fill with bots"))
    table.wait(lambda: len(table.seats()) == 5 or None, "bots seated")
    screens.look()

    table.click(ANNA, table.fake.message(lobby.channel, lobby.ts), SV._("Start"))
    table.wait_for_phase("night")
    people = (ANNA, BO, CIA)

    def night_dm(user: str) -> Message:
        return table.dm(user, "Ditt kort")

    table.wait(lambda: all(night_dm(user) for user in people) or None, "every card sent")
    screens.look()
    for user in people:
        dm = night_dm(user)
        while dm.buttons():
            before = dm.blocks
            table.click(user, dm, dm.buttons()[0].text)
            dm = table.wait(
                lambda u=user, b=before: m if (m := night_dm(u)).blocks != b else None,  # type: ignore[misc]
                f"{user}'s night message to change",
            )
        screens.look()
    table.wait_for_phase("day")
    board = table.board(SV._("Heard enough"))
    screens.look()
    table.click(DAN, board, SV._("Heard enough"))  # not seated: not his day to end
    table.click(ANNA, board, SV._("Heard enough"))
    table.click(ANNA, board, SV._("Heard enough"))  # and taken back
    screens.look()
    table.click(ANNA, board, SV._("Heard enough"))
    table.click(BO, board, SV._("Heard enough"))
    table.wait_for_phase("vote")

    vote_board = table.board(SV._("Vote"), "röstsedel")
    for user in people:
        shown = len(fake.ephemerals(user))
        table.click(user, vote_board, SV._("Vote"))
        ballot = table.wait(
            lambda u=user, n=shown: e[n] if len(e := fake.ephemerals(u)) > n else None,  # type: ignore[misc]
            f"{user}'s own ballot",
        )
        screens.look()
        table.click(user, ballot, SV._("Nobody"))
        screens.look()
    table.wait_for_phase("over")
    table.board(SV._("The reveal: what really happened"))
    for user in people:
        table.result_dm(user, "Hela historien")
    for word in ("help", "score", "last"):
        shown = len(fake.ephemerals(ANNA))
        table.command(ANNA, word)
        table.wait(lambda n=shown: len(fake.ephemerals(ANNA)) > n or None, f"/varulv {word}")  # type: ignore[misc]
    last = table.ephemeral(ANNA, "Avslöjandet: vad som egentligen hände")
    table.click(ANNA, last, SV._("The whole game, for the referee"))
    table.ephemeral(ANNA, "Hela spelet, så som")
    home_hash = (fake.home_view(BO) or {}).get("hash")
    fake.app_home_opened(BO)
    home = table.wait(
        lambda: (v := fake.home_view(BO)) and v.get("hash") != home_hash and v, "the Home tab"
    )
    assert SV._("*How a game goes*") in str(home)
    screens.seen["home"] = "\n".join(texts_in(home))
    table.command(DAN)  # a new table opens in Swedish
    table.command(ANNA)  # and /varulv again says one is open
    open_here = SV._("A table is already open in this channel: press *Join* on its lobby above.")
    table.ephemeral(ANNA, open_here)
    screens.look()

    assert len(screens.seen) > 20, "the game's screens were read"
    leaked = screens.english()
    assert not leaked, "\n\n".join(f"{shown}\n  -> {words}" for shown, words in leaked.items())
