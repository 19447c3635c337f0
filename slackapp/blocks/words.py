"""The words of every screen, in the table's language.

Each language is a gettext catalogue, ``slackapp/locale/<language>/LC_MESSAGES/varulv.po``,
wrapped in a :class:`Words` of its own: one process serves tables in many languages, so no
global locale is ever set, and every screen is handed the words of its table. English is the
source text itself. The ``.po`` is the one file kept: Babel compiles it in memory the first
time a language is asked for, so no build step is needed and no compiled copy can go stale.

Every sentence is marked once where it is written, ``words._("...")`` or
``words.ngettext("...", "...", n)``, with ``{name}`` placeholders filled from keywords;
``pybabel extract -F babel.cfg`` finds them (docs/translating.md).
"""

from __future__ import annotations

import functools
import gettext
import io
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from slackapp.game.lines import Language

LANGUAGE_NAMES = {Language.ENGLISH: "English", Language.SWEDISH: "Svenska"}
"""Each language by its own name, as a person looking for theirs reads it (never translated)."""
LOCALE = Path(__file__).resolve().parent.parent / "locale"
DOMAIN = "varulv"


def N_(message: str) -> str:
    """A sentence marked for the catalogues where it is written, and put into words later
    with ``words._(...)``."""
    return message


def catalogue_path(language: Language) -> Path:
    return LOCALE / language.value / "LC_MESSAGES" / f"{DOMAIN}.po"


class Words:
    """One language's words: ``_`` for a sentence, ``ngettext`` for one that counts."""

    def __init__(self, language: Language, translations: gettext.NullTranslations) -> None:
        self.language = language
        self._translations = translations

    def _(self, message: str, /, **values: object) -> str:
        text = self._translations.gettext(message)
        return text.format(**values) if values else text

    def ngettext(self, singular: str, plural: str, count: int, /, **values: object) -> str:
        text = self._translations.ngettext(singular, plural, count)
        return text.format(count=count, **values)


@functools.cache
def words(language: Language = Language.ENGLISH) -> Words:
    if language is Language.ENGLISH:
        return Words(language, gettext.NullTranslations())
    with catalogue_path(language).open("rb") as po:
        catalogue = read_po(po, locale=language.value, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalogue)  # fuzzy entries are left out: they show the English
    compiled.seek(0)
    return Words(language, gettext.GNUTranslations(compiled))


ENGLISH = words(Language.ENGLISH)
