"""Every sentence the screens can show has its words in every catalogue of ``locale/``, and
every catalogue is a language a table may speak, shipped with the package."""

from __future__ import annotations

import io
import re
import tomllib
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from slackapp.blocks.words import LOCALE, catalogue_path, words
from slackapp.game.lines import Language

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = re.compile(r"{(\w*)}")
CATALOGUES = sorted(path.name for path in LOCALE.iterdir() if path.is_dir())
"""Each language's folder in ``slackapp/locale/``, whatever ``Language`` says."""


def source_messages() -> dict[str, tuple[str, ...]]:
    """Every marked sentence in the app's source, as ``pybabel extract -F babel.cfg`` finds it:
    its id, and all its forms (one, or the singular and the plural)."""
    found: dict[str, tuple[str, ...]] = {}
    method_map = [("**.py", "python")]
    for _, _, message, _, _ in extract_from_dir(str(ROOT / "slackapp"), method_map):
        forms = (message,) if isinstance(message, str) else tuple(message)
        found[forms[0]] = forms
    return found


def catalogue(code: str) -> Catalog:
    with (LOCALE / code / "LC_MESSAGES" / "varulv.po").open("rb") as po:
        return read_po(po, locale=code)


def translated_forms(entry: Message) -> tuple[str, ...]:
    if entry.string is None:
        return ()
    return (entry.string,) if isinstance(entry.string, str) else tuple(entry.string)


def test_the_source_marks_the_screens_words() -> None:
    found = source_messages()
    assert len(found) > 250, "the screens' words are marked for translation"
    assert "Take a seat" in found and "Heard enough" in found


def test_every_catalogue_is_a_language_and_every_language_has_one() -> None:
    assert "sv" in CATALOGUES
    assert set(CATALOGUES) == {language.value for language in Language} - {"en"}
    for language in Language:
        if language is not Language.ENGLISH:
            assert catalogue_path(language).is_file(), language


def test_every_catalogue_is_shipped_with_the_package() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for code in CATALOGUES:
        for package in (f"slackapp.locale.{code}", f"slackapp.locale.{code}.LC_MESSAGES"):
            assert package in setuptools["packages"], f"pyproject.toml's packages: {package}"
    assert "locale/*/LC_MESSAGES/*.po" in setuptools["package-data"]["slackapp"]


@pytest.mark.parametrize("code", CATALOGUES)
def test_every_sentence_has_its_words_in_every_catalogue(code: str) -> None:
    translated = catalogue(code)
    missing, fuzzy, empty, misplaced = [], [], [], []
    for msgid, forms in source_messages().items():
        entry = translated.get(msgid)
        if entry is None:
            missing.append(msgid)
            continue
        if entry.fuzzy:
            fuzzy.append(msgid)
        strings = translated_forms(entry)
        if len(strings) != len(forms) or not all(s.strip() for s in strings):
            empty.append(msgid)
            continue
        wanted = set(PLACEHOLDER.findall(" ".join(forms)))
        for string in strings:
            # {count} may go unsaid in a form that only ever counts one
            said = set(PLACEHOLDER.findall(string))
            if said != wanted and said | {"count"} != wanted:
                misplaced.append(msgid)
    assert not missing, f"no {code} for: {missing}"
    assert not fuzzy, f"{code} only guessed (fuzzy) for: {fuzzy}"
    assert not empty, f"empty {code} for: {empty}"
    assert not misplaced, f"{code} with other placeholders than the English: {misplaced}"


@pytest.mark.parametrize("code", CATALOGUES)
def test_no_catalogue_keeps_a_sentence_the_source_dropped(code: str) -> None:
    kept = {
        entry.id if isinstance(entry.id, str) else entry.id[0]
        for entry in catalogue(code)
        if entry.id
    }
    assert kept <= set(source_messages()), kept - set(source_messages())


def test_a_table_speaks_its_own_language_and_english_is_the_source() -> None:
    swedish, english = words(Language.SWEDISH), words(Language.ENGLISH)
    assert swedish._("Take a seat") == "Sätt dig"
    assert english._("Take a seat") == "Take a seat"
    seats = swedish.ngettext("{count} second", "{count} seconds", 2)
    assert seats == "2 sekunder"
    assert swedish.ngettext("{count} second", "{count} seconds", 1) == "1 sekund"
    assert english._("Vote for {name}", name="Anna") == "Vote for Anna"


def test_no_sentence_is_marked_where_the_extractor_cannot_see_it() -> None:
    """Inside an f-string a marked sentence is one string token to Python 3.11's tokenizer, so
    pybabel would never find it and it would show in English in every language."""
    hidden = re.compile(r"""\bf(["'])(?:(?!\1).)*\b(_|ngettext)\(""")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "slackapp").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if hidden.search(line)
    ]
    assert not found, found


@pytest.mark.parametrize("code", CATALOGUES)
def test_each_catalogue_is_kept_as_pybabel_update_writes_it(code: str) -> None:
    """So that the commands of docs/translating.md, run after a change of words, show only that
    change: a catalogue edited by hand is laid out as ``pybabel update -w 100`` lays it out."""
    kept = (LOCALE / code / "LC_MESSAGES" / "varulv.po").read_bytes()
    written = io.BytesIO()
    write_po(written, read_po(io.BytesIO(kept), locale=code), width=100, ignore_obsolete=True)
    assert written.getvalue() == kept, "run the commands of docs/translating.md"
