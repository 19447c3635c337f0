"""The documents' relative links: each one names a file that exists, and a heading in it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = sorted([ROOT / "README.md", ROOT / "BENCHMARKS.md", *(ROOT / "docs").glob("*.md")])

FENCE = re.compile(r"^(```|~~~).*?^\1", flags=re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", flags=re.MULTILINE)


def prose(text: str) -> str:
    """The text without its code, where a bracket is not a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a document's headings (a repeated heading gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    for heading in HEADING.findall(FENCE.sub("", text)):
        words = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", words.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def relative_links(document: Path) -> list[str]:
    targets = LINK.findall(prose(document.read_text()))
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def broken(document: Path) -> list[str]:
    problems = []
    for target in relative_links(document):
        path_part, _, anchor = target.partition("#")
        linked = (document.parent / path_part).resolve() if path_part else document
        if not linked.exists():
            problems.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
            problems.append(f"{target}: no heading #{anchor}")
    return problems


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(document: Path) -> None:
    assert broken(document) == []


def test_the_checker_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## A heading's `name`\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-headings-name) [self](#page) [gone](missing.md) "
        "[wrong](other.md#nothing) [web](https://example.com) `[code](nowhere.md)`\n\n# Page\n"
    )
    assert broken(page) == ["missing.md: no such file", "other.md#nothing: no heading #nothing"]


def test_the_readme_links_every_guide() -> None:
    readme = set(relative_links(ROOT / "README.md"))
    guides = {f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md")}
    assert sorted(guides - {target.partition("#")[0] for target in readme}) == []
