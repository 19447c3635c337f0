"""``/varulv forget me`` tells the person what it erased, and names nothing it did not keep."""

from __future__ import annotations

import pytest

from slackapp.blocks.forgotten import forget_me_answer, forgotten_lines
from slackapp.blocks.words import words
from slackapp.game.erasure import Forgotten, StillSeated
from slackapp.game.lines import Language


def told(done: Forgotten, language: Language = Language.ENGLISH) -> str:
    return " ".join(forgotten_lines(done, words(language)))


def test_everything_kept_is_named_with_its_counts() -> None:
    said = told(Forgotten(score_channels=2, games=1, regular_channels=1, name=True))
    assert said.startswith(
        "Varulv has forgotten you in this workspace. Erased: your points and wins in 2 "
        "channels, your name as Varulv knew it and your *I usually play* marks in 1 channel."
    )
    assert "In 1 finished game you are now “a former player”: its outcome stays" in said


def test_someone_varulv_never_knew_is_told_no_count_of_nothing() -> None:
    said = told(Forgotten(score_channels=0, games=0, regular_channels=0, name=False))
    assert "0 " not in said and "finished game" not in said
    assert "it kept nothing of yours to erase" in said


def test_a_name_alone_is_all_that_is_named() -> None:
    said = told(Forgotten(score_channels=0, games=0, regular_channels=0, name=True))
    assert "Erased: your name as Varulv knew it." in said
    assert "channel" not in said


@pytest.mark.parametrize(
    "done",
    [
        Forgotten(score_channels=3, games=2, regular_channels=1, name=True),
        Forgotten(score_channels=0, games=0, regular_channels=0, name=False),
        Forgotten(score_channels=0, games=4, regular_channels=0, name=False),
    ],
)
def test_every_line_is_swedish_in_a_swedish_channel(done: Forgotten) -> None:
    english, swedish = told(done), told(done, Language.SWEDISH)
    assert swedish.startswith("Varulv har glömt dig i den här arbetsytan")
    for sentence in forgotten_lines(done, words(Language.SWEDISH)):
        assert sentence not in english


@pytest.mark.parametrize("language", list(Language))
def test_someone_still_seated_is_told_where_and_that_nothing_was_erased(
    language: Language,
) -> None:
    w = words(language)
    said = forget_me_answer(StillSeated(("C0FIKA", "C0LUNCH")), w)
    assert "<#C0FIKA>, <#C0LUNCH>" in said
    assert ("inget raderades" if language is Language.SWEDISH else "nothing was erased") in said


@pytest.mark.parametrize(
    "done",
    [
        Forgotten(score_channels=1, games=1, regular_channels=0, name=True),
        Forgotten(score_channels=0, games=2, regular_channels=0, name=False),
        Forgotten(score_channels=0, games=0, regular_channels=0, name=False),
    ],
)
def test_forgotten_at_every_table_of_an_organisation_is_told_so(done: Forgotten) -> None:
    english = " ".join(forgotten_lines(done, words(Language.ENGLISH), organisation=True))
    swedish = " ".join(forgotten_lines(done, words(Language.SWEDISH), organisation=True))
    assert english.startswith("Varulv has forgotten you in this organisation")
    assert swedish.startswith("Varulv har glömt dig i den här organisationen")
