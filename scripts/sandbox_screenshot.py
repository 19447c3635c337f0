#!/usr/bin/env python3
"""Regenerate docs/sandbox.png, the README's picture of a game in the sandbox.

Starts the sandbox, plays a game in it (three people and two bots, clicking in the page with
Playwright and Debian's Chromium, exactly as tests/sandbox/test_browser.py does) and
photographs #fika at dawn: the table by display names with its bots marked, and the day board
with who speaks first and the deck in play. From the repository root:

    python scripts/sandbox_screenshot.py [--output docs/sandbox.png]

The page brings its own emoji font (scripts/emoji_font.py), so the picture needs none installed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the game is played by the browser test's own page driver

from playwright.sync_api import ViewportSize, sync_playwright  # noqa: E402

from slackapp.sandbox.run import Sandbox  # noqa: E402
from tests.sandbox.test_browser import (  # noqa: E402
    PLAYERS,
    ChatPage,
    find_chromium,
    launch,
    play_the_night,
    seat_the_table,
)

VIEWPORT: ViewportSize = {"width": 1280, "height": 680}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "sandbox.png")
    parser.add_argument("--chromium", help="the browser to drive (default: Debian's chromium)")
    args = parser.parse_args()
    chromium = args.chromium or find_chromium()
    if chromium is None:
        print("no Chromium found: install Debian's chromium package", file=sys.stderr)
        return 1
    with Sandbox(port=0) as sandbox, sync_playwright() as playwright:
        browser = launch(playwright, chromium)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(sandbox.url)
        chat = ChatPage(page)
        seat_the_table(chat)
        play_the_night(chat)
        chat.play_as(PLAYERS[0])
        chat.open_channel()
        day = chat.message("talk it out")
        day.evaluate("message => message.scrollIntoView({block: 'end'})")
        page.mouse.move(0, VIEWPORT["height"] - 1)  # no hover highlight in the picture
        args.output.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(args.output))
        browser.close()
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
