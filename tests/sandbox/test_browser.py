"""A whole game in a real browser: three people and two bots, from /varulv to the reveal.

Debian's Chromium (launched by path, never a downloaded build) drives the sandbox page, and
the test only types and clicks what a person at the table would.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Browser, Locator, Page, Playwright, Route, expect, sync_playwright

from slackapp.fakeslack import JSON
from slackapp.sandbox import CHANNEL_ID, PEOPLE
from slackapp.sandbox.run import Sandbox
from tests.databases import migrated_database
from tests.sandbox.test_sandbox_api import BUN_SELECT, AppStandIn
from tests.waiting import PATIENCE

pytestmark = pytest.mark.long(20)

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/lib/chromium/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PLAYERS = [person.name for person in PEOPLE[:3]]
"""The three people at the table; the first one sets it."""
WAIT_MS = int(PATIENCE * 1000)
"""How long one step may take to show on the page (the app answers in milliseconds, but a busy
machine may not); every expectation waits as long."""
expect.set_options(timeout=WAIT_MS)


def find_chromium() -> str | None:
    """Debian's Chromium: ``$CHROMIUM``, ``chromium`` on the PATH, or its usual places."""
    candidates = [os.environ.get("CHROMIUM"), shutil.which("chromium"), *CHROMIUM_PATHS]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def launch(playwright: Playwright, executable: str) -> Browser:
    return playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)


class ChatPage:
    """The sandbox page, used the way a person uses a chat client."""

    def __init__(self, page: Page) -> None:
        self.page = page

    def play_as(self, name: str) -> None:
        """One click in the person switcher."""
        chip = self.page.locator("#people").get_by_role("button", name=name, exact=True)
        chip.click()
        expect(chip).to_have_attribute("aria-pressed", "true")

    def open_channel(self) -> None:
        self.page.locator(".sidebar .nav-item[data-conversation=channel]").click()
        expect(self.page.locator(".pane-title h2")).to_have_text("#fika")

    def open_dm(self) -> None:
        self.page.locator(".sidebar .nav-item[data-conversation=dm]").click()
        expect(self.page.get_by_role("tab", name="Messages")).to_have_attribute(
            "aria-selected", "true"
        )

    def type(self, text: str) -> None:
        composer = self.page.get_by_role("textbox", name="Message")
        composer.fill(text)
        composer.press("Enter")
        expect(composer).to_have_value("")

    def messages(self, containing: str) -> Locator:
        """Every message on screen containing ``containing``."""
        return self.page.locator(".pane .msg").filter(has_text=containing)

    def message(self, containing: str) -> Locator:
        """The newest message on screen containing ``containing``, once it is there."""
        found = self.messages(containing).last
        expect(found).to_be_visible(timeout=WAIT_MS)
        return found

    def click(self, message: Locator, name: str | re.Pattern[str]) -> None:
        """Press the button a screen reader calls ``name`` (its accessibility_label if any)."""
        message.get_by_role("button", name=name, exact=True).click()

    def finish_night(self) -> str:
        """Click through this person's night DM, first choice each time; returns their card."""
        self.open_dm()
        night = self.message("Your card:")
        card = re.search(r"Your card: (\w+)", night.inner_text())
        assert card, night.inner_text()
        for _ in range(4):  # the Troublemaker clicks twice; nobody clicks more
            buttons = night.locator(".bk-actions button")
            if buttons.count() == 0:
                return card.group(1)
            before = night.inner_text()
            buttons.first.click()
            expect(night).not_to_have_text(before, use_inner_text=True, timeout=WAIT_MS)
        raise AssertionError(f"the night DM still has buttons: {night.inner_text()}")


# -- a game, phase by phase (scripts/sandbox_screenshot.py plays the same) ------------------


def seat_the_table(chat: ChatPage) -> None:
    host, *others = PLAYERS
    chat.play_as(host)
    chat.open_channel()
    chat.type("/varulv")
    expect(chat.message("is setting a table")).to_contain_text(f"@{host} is setting a table")
    for seated, name in enumerate(others, start=2):
        chat.play_as(name)
        chat.click(chat.message("is setting a table"), "Join")
        chat.message(f"Seated ({seated})")
        # One lobby, edited in place (chat.update): never a new message per join.
        expect(chat.messages("is setting a table")).to_have_count(1)
    chat.play_as(host)
    chat.click(chat.message("is setting a table"), "Fill with bots")
    chat.click(chat.message("Seated (5)"), "Start")
    chat.message("Night falls")


def play_the_night(chat: ChatPage) -> dict[str, str]:
    """Every person confirms their night in their DM; returns the cards they were dealt."""
    cards = {}
    for name in PLAYERS:
        chat.play_as(name)
        cards[name] = chat.finish_night()
    return cards


HEARD_ENOUGH = re.compile(r"^Heard enough: ")
"""The day's button, as a screen reader names it."""


def end_the_day(chat: ChatPage) -> None:
    """Two of the three people have heard enough: more than half, so the vote opens."""
    first, second, _ = PLAYERS
    chat.play_as(first)
    chat.open_channel()
    chat.click(chat.message("talk it out"), HEARD_ENOUGH)
    chat.message("Noted: you have heard enough")
    chat.play_as(second)
    chat.open_channel()
    chat.click(chat.message("talk it out"), HEARD_ENOUGH)
    chat.message("One sealed ballot each")


VOTE_LABEL = "Vote: open your own sealed ballot, seen only by you"
VOTES = dict(zip(PLAYERS, [*PLAYERS[1:], PLAYERS[0]], strict=True))
"""Each person votes for the next one round the table."""


def vote(chat: ChatPage) -> Locator:
    """Everyone casts a ballot; returns the reveal."""
    for voter, target in VOTES.items():
        chat.play_as(voter)
        chat.open_channel()
        board = chat.message("One sealed ballot each")
        chat.click(board, VOTE_LABEL)
        ballot = chat.message("Your sealed ballot")
        # The button shows the name; a screen reader says what pressing it does.
        expect(ballot.get_by_role("button", name=f"Vote for {target}")).to_have_text(target)
        expect(ballot.get_by_role("button", name=f"Vote for {voter}")).to_have_count(0)
        chat.click(ballot, f"Vote for {target}")
        chat.message("Your ballot:")
    return chat.message("The reveal: what really happened")


# -- the tests ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    found = find_chromium()
    if found is None:
        pytest.skip("no Chromium found: install Debian's chromium package")
    return found


@pytest.fixture(scope="module")
def sandbox(chromium: str, postgres: str) -> Iterator[Sandbox]:
    """The sandbox on a database of the run's server, as with ``DATABASE_URL``: its embedded
    PostgreSQL is started by the plain ``varulv`` test of ``test_sandbox_api``."""
    with Sandbox(port=0, database_url=migrated_database(postgres, "browser")) as running:
        # A form's trigger lives as long as the tests' patience, not Slack's 3 s: a busy
        # machine may open a form late, and the expiry has a test of its own (test_fakeslack).
        running.fake.grants.trigger_ttl = PATIENCE
        yield running


@pytest.fixture(scope="module")
def driver(chromium: str) -> Iterator[Playwright]:
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="module")
def browser(driver: Playwright, chromium: str) -> Iterator[Browser]:
    """One Chromium for the file; each test has a fresh context (no cookies, storage or cache
    from another test), which costs far less than a browser of its own."""
    launched = launch(driver, chromium)
    yield launched
    launched.close()


@pytest.fixture
def page(browser: Browser, sandbox: Sandbox) -> Iterator[Page]:
    outside: list[str] = []
    errors: list[str] = []

    def only_the_sandbox(route: Route) -> None:
        if route.request.url.startswith(sandbox.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.route("**/*", only_the_sandbox)
    tab = context.new_page()
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.goto(sandbox.url)
    expect(tab.locator(".pane")).to_be_visible()
    yield tab
    context.close()
    assert not errors, f"the page threw: {errors}"
    assert not outside, f"the page asked for something outside the sandbox: {outside}"


def test_three_people_and_two_bots_play_to_the_reveal(page: Page, tmp_path: Path) -> None:
    chat = ChatPage(page)
    host = PLAYERS[0]

    seat_the_table(chat)
    board = chat.message("Night falls")
    # <!date^…> shows as a time of day, never as Slack's raw syntax.
    expect(board.locator(".slack-date")).to_have_text(re.compile(r"^\d{1,2}[:.]\d{2}"))
    expect(board).not_to_contain_text("<!date")

    cards = play_the_night(chat)
    # Each card is in its person's DM and nowhere in the channel.
    chat.open_channel()
    expect(chat.messages("Your card")).to_have_count(0)

    end_the_day(chat)
    # Ephemeral answers are private: the host's "Noted" is not shown to the second person.
    expect(chat.messages("Noted: you have heard enough")).to_have_count(0)
    chat.play_as(host)
    expect(chat.messages("Noted: you have heard enough")).to_have_count(1)

    reveal = vote(chat)
    expect(reveal.locator(".bk-header")).to_have_text("The reveal: what really happened")
    for voter, target in VOTES.items():
        expect(reveal).to_contain_text(f"@{voter} → @{target}")
    expect(reveal).to_contain_text("(bot)")
    for person in PEOPLE:  # display names, as Slack shows people; the legacy handle never
        expect(page.locator("body")).not_to_contain_text(person.handle)
    ballot = chat.message("Your ballot")
    expect(ballot).to_contain_text("Only visible to you")
    expect(chat.messages("Your ballot")).to_have_count(1)
    reveal.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "reveal.png"))
    assert (tmp_path / "reveal.png").stat().st_size > 10_000

    # Side by side: all six people; each sees the reveal, and each DM tells its own game.
    page.get_by_role("button", name="Everyone").click()
    columns = page.locator(".column")
    expect(columns).to_have_count(len(PEOPLE))
    for name in PLAYERS:
        column = columns.filter(has=page.locator(".column-person", has_text=name))
        expect(
            column.locator(".msg").filter(has_text="The reveal: what really happened")
        ).to_have_count(1)
        column.locator(".nav-item[data-conversation=dm]").click()
        game_over = column.locator(".msg").filter(has_text="this game")
        expect(game_over).to_contain_text(f"You were dealt the {cards[name]}")

    # A new game right away: its lobby and each card start a group of their own (avatar,
    # name and time), never reading as more of the last game's reveal or "You won!".
    page.get_by_role("button", name="One person").click()
    seat_the_table(chat)
    try:
        board = chat.messages("Night falls").last  # the lobby, once the game has started
        expect(board).not_to_have_class(re.compile(r"\bcontinued\b"))
        expect(board.locator(".msg-head .author")).to_have_text("Varulv")
        chat.open_dm()
        # The last game's night message became its "You won!" / "Not this time."; the new
        # card comes right after it, minutes later at most.
        new_card = page.locator(".pane .msg:has-text('this game') + .msg")
        expect(new_card).to_contain_text("Your card:", timeout=WAIT_MS)
        expect(new_card.locator(".msg-head .author")).to_be_visible()
        expect(new_card).not_to_have_class(re.compile(r"\bcontinued\b"))
        expect(new_card.locator(".bk-header")).to_have_text("Night falls")
    finally:
        chat.open_channel()
        chat.type("/varulv stop")
        chat.message("stopped this game")


def test_a_button_on_the_home_tab_reaches_the_app(page: Page) -> None:
    """The Home tab's *I usually play here*, as Slack offers it beside a channel's season."""
    chat = ChatPage(page)
    seat_the_table(chat)
    play_the_night(chat)
    end_the_day(chat)
    vote(chat)
    chat.play_as(PLAYERS[0])
    chat.open_dm()
    page.get_by_role("tab", name="Home").click()
    home = page.locator(".pane .home")
    toggle = home.get_by_role("button", name=re.compile(r"^I usually play here"))
    expect(toggle).to_have_text("I usually play here")  # nobody here has marked it
    toggle.click()
    expect(toggle).to_have_text("I usually play here ✓")
    toggle.click()  # and back: the tab is drawn again each time the app publishes it
    expect(toggle).to_have_text("I usually play here")


def test_cancel_asks_only_someone_seated_and_asks_privately(page: Page) -> None:
    chat = ChatPage(page)
    chat.play_as(PLAYERS[1])
    chat.open_channel()
    chat.type("/varulv")
    chat.play_as(PLAYERS[2])  # not seated: told so at once, never asked to confirm
    chat.click(chat.message("is setting a table"), "Cancel")
    chat.message("You are not seated at this table")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(chat.messages("Cancel this table?")).to_have_count(0)

    chat.play_as(PLAYERS[1])
    chat.click(chat.message("is setting a table"), "Cancel")
    expect(page.get_by_role("dialog")).to_have_count(0)
    chat.click(chat.message("Cancel this table?"), "Yes, cancel")
    # The lobby becomes the note, in place, and has no buttons left.
    closed = chat.message(f"@{PLAYERS[1]} cancelled this table.")
    expect(closed.get_by_role("button")).to_have_count(0)
    expect(chat.messages("is setting a table")).to_have_count(0)
    chat.message("You cancelled the table.")


def test_a_click_is_not_lost_to_a_redraw_between_press_and_release(
    page: Page, sandbox: Sandbox
) -> None:
    """A message arriving redraws the page. A person pressing a chip or a conversation just
    then still gets what they clicked: a button replaced between the press and the release
    takes no click (this test's neighbours failed so, now and then, on a loaded machine)."""
    chat = ChatPage(page)
    chat.play_as(PLAYERS[0])
    chat.open_channel()
    fake = sandbox.fake
    chip = page.locator("#people").get_by_role("button", name=PLAYERS[1], exact=True)
    to_the_dm = page.locator(".sidebar .nav-item[data-conversation=dm]")
    for number, target in enumerate([chip, to_the_dm]):
        box = target.bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        line = f"Redrawn {number}"
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": line}}]
        fake.add_message(fake.api.bot_message(CHANNEL_ID, line, blocks))
        chat.message(line)  # shown: the page has redrawn under the pressed button
        page.mouse.up()
    expect(chip).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_role("tab", name="Messages")).to_have_attribute("aria-selected", "true")


def test_what_someone_has_read_stays_read_after_a_reload(page: Page, sandbox: Sandbox) -> None:
    """Slack remembers what each person has read: a reload marks nothing unread again."""
    post(sandbox, "Kanelbullar i köket :coffee:")
    chat = ChatPage(page)
    reader = PEOPLE[3].name  # Måns reads the channel and his DM, then someone else plays
    chat.play_as(reader)
    chat.open_channel()
    chat.message("Kanelbullar i köket")
    chat.open_dm()
    chat.play_as(PLAYERS[0])
    chat.open_channel()
    chip = page.locator("#people").get_by_role("button", name=reader, exact=True)
    expect(chip.locator(".dot")).to_have_count(0)
    page.reload()
    expect(page.locator(".pane")).to_be_visible()
    expect(chat.messages("Kanelbullar i köket")).to_have_count(1)  # the page has its state
    expect(chip.locator(".dot")).to_have_count(0)
    chat.play_as(reader)
    expect(page.locator(".sidebar .badge")).to_have_count(0)


def test_a_private_answer_is_gone_after_a_reload_as_in_slack(page: Page, sandbox: Sandbox) -> None:
    """Slack shows an ephemeral message ("Only visible to you") until the client reloads; the
    sandbox page does too, and one that comes after the reload is shown."""
    chat = ChatPage(page)
    chat.play_as(PLAYERS[0])
    chat.open_channel()
    chat.type("/varulv help")
    expect(chat.message("Only visible to you")).to_be_visible()
    answers = page.locator(".pane .msg.ephemeral")
    before = answers.count()
    assert before >= 1
    page.reload()
    expect(page.locator(".pane")).to_be_visible()
    chat.play_as(PLAYERS[0])
    chat.open_channel()
    expect(answers).to_have_count(0)
    chat.type("/varulv help")
    expect(answers).to_have_count(1)


def test_only_the_apps_bot_wears_the_app_badge(page: Page) -> None:
    """Varulv is an app's bot, so Slack marks it APP; Slackbot is Slack's own (not even a bot
    in users.list) and has no badge, nor does a person."""
    chat = ChatPage(page)
    chat.play_as(PLAYERS[1])
    chat.open_channel()
    chat.type("/fika now")
    slackbot = chat.message("is not a valid command")
    expect(slackbot.locator(".author")).to_have_text("Slackbot")
    expect(slackbot.locator(".app-badge")).to_have_count(0)
    chat.type("Kaffe?")
    expect(chat.message("Kaffe?").locator(".app-badge")).to_have_count(0)
    chat.type("/varulv help")
    expect(chat.message("How to play Varulv").locator(".msg-head .app-badge")).to_have_text("APP")


def test_block_kit_renders_like_slack(page: Page, sandbox: Sandbox) -> None:
    """What the game does not use yet renders too: fields, accessories, selects, links, code."""
    fake = sandbox.fake
    noon = 1_700_049_600  # 2023-11-15 12:00 UTC: the same day in any time zone
    blocks: list[JSON] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Fika order :coffee:"}},
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": f"*Who brings what* for <!here>? Ask <@{PEOPLE[1].id}> in <#C0FIKA>, "
                f"by <!date^{noon}^{{date_short}}|Nov 15>.",
            },
            "fields": [
                {"type": "mrkdwn", "text": "*Bun*\nKanelbulle"},
                {"type": "plain_text", "text": "Coffee\nBryggkaffe"},
            ],
            "accessory": BUN_SELECT,
        },
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": "`code`, ~struck~, _leaning_ and <https://example.com/menu|the menu>",
                }
            ],
        },
        {"type": "divider"},
    ]
    message = fake.add_message(fake.api.bot_message(CHANNEL_ID, "Fika order", blocks))
    chat = ChatPage(page)
    chat.play_as(PLAYERS[2])
    chat.open_channel()
    order = chat.message("Who brings what")
    expect(order.locator(".bk-header")).to_have_text("Fika order ☕")
    expect(order.locator(".bk-section-text b")).to_have_text("Who brings what")
    expect(order.locator(".mention")).to_have_text(["@here", f"@{PEOPLE[1].name}"])
    expect(order.locator(".channel-link")).to_have_text("#fika")
    expect(order.locator(".slack-date")).to_have_text("15 nov. 2023")  # Saga reads Swedish
    expect(order.locator(".bk-field")).to_have_text(["BunKanelbulle", "CoffeeBryggkaffe"])
    expect(order.locator(".bk-context code")).to_have_text("code")
    expect(order.locator(".bk-context s")).to_have_text("struck")
    expect(order.locator(".bk-context i")).to_have_text("leaning")
    expect(order.get_by_role("link", name="the menu")).to_have_attribute(
        "href", "https://example.com/menu"
    )
    expect(order.locator(".bk-divider")).to_have_count(1)

    # Picking in the select sends the app a block_actions with the chosen option.
    with AppStandIn(fake) as app:
        order.get_by_role("combobox").select_option(label="Semla")
        expect(order.get_by_role("combobox")).to_be_enabled()
    [payload] = app.payloads()
    assert payload["user"]["id"] == PEOPLE[2].id
    assert payload["container"]["message_ts"] == message.ts
    assert payload["actions"][0]["selected_option"]["value"] == "semla"


def test_settings_open_in_a_modal_and_the_channel_hears_of_the_change(
    page: Page, tmp_path: Path
) -> None:
    chat = ChatPage(page)
    chat.play_as(PLAYERS[0])  # the workspace's owner: the others may not, with no table open
    chat.open_channel()
    chat.type("/varulv settings")
    dialog = page.get_by_role("dialog", name="Varulv settings")
    expect(dialog).to_be_visible(timeout=WAIT_MS)
    night = dialog.get_by_role("spinbutton", name="Night, in seconds")
    expect(night).to_be_focused()
    expect(dialog.get_by_role("checkbox", name=re.compile("Fill with bots"))).to_be_checked()
    page.screenshot(path=str(tmp_path / "settings.png"))

    # Too short a night: the app's answer shows under that input, and the modal stays.
    night.fill("5")
    dialog.get_by_role("button", name="Save").click()
    expect(night).to_have_attribute("aria-invalid", "true", timeout=WAIT_MS)
    expect(dialog.locator(".modal-input.invalid")).to_have_count(1)
    expect(dialog.locator(".modal-input.invalid .modal-error")).to_contain_text("30")
    # Someone else at the table sees no modal: it is the one who typed the command's.
    chat.play_as(PLAYERS[2])
    expect(page.get_by_role("dialog")).to_have_count(0)
    chat.play_as(PLAYERS[0])
    dialog.get_by_role("spinbutton", name="Night, in seconds").fill("90")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_have_count(0, timeout=WAIT_MS)
    note = chat.message("changed the Varulv settings")
    expect(note).to_contain_text(f"@{PLAYERS[0]} changed the Varulv settings")
    expect(note).to_contain_text("night 1 minute 30 seconds")

    # Opened again, it shows what was saved; Escape closes it, like Slack.
    chat.type("/varulv settings")
    expect(dialog.get_by_role("spinbutton", name="Night, in seconds")).to_have_value(
        "90", timeout=WAIT_MS
    )
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    chat.type("/varulv settings")  # and it opens once more: nothing was left open
    expect(dialog).to_be_visible(timeout=WAIT_MS)
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    expect(chat.messages("did not open the form")).to_have_count(0)


def test_the_settings_modal_switches_the_table_to_swedish(page: Page, tmp_path: Path) -> None:
    chat = ChatPage(page)
    chat.play_as(PLAYERS[0])
    chat.open_channel()
    chat.type("/varulv settings")
    dialog = page.get_by_role("dialog", name="Varulv settings")
    expect(dialog).to_be_visible(timeout=WAIT_MS)
    dialog.get_by_role("radio", name="Svenska").check()
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_have_count(0, timeout=WAIT_MS)
    expect(chat.message("ändrade Varulvs inställningar")).to_contain_text("Svenska")
    try:
        chat.type("/varulv")
        lobby = chat.message("dukar ett bord")
        expect(lobby.get_by_role("button", name="Sätt dig")).to_be_visible(timeout=WAIT_MS)
        page.screenshot(path=str(tmp_path / "svenska.png"))
        chat.type("/varulv stop")
        expect(chat.message("ställde in bordet")).to_be_visible(timeout=WAIT_MS)
    finally:  # the next tests play in English
        chat.type("/varulv settings")
        swedish = page.get_by_role("dialog", name="Varulvs inställningar")
        expect(swedish).to_be_visible(timeout=WAIT_MS)
        swedish.get_by_role("radio", name="English").check()
        swedish.get_by_role("button", name="Spara").click()
        expect(swedish).to_have_count(0, timeout=WAIT_MS)


def test_everyone_fits_a_laptop_and_a_phone_can_switch_person(page: Page, tmp_path: Path) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    page.get_by_role("button", name="Everyone").click()
    columns = page.locator(".column")
    expect(columns).to_have_count(len(PEOPLE))
    for index, person in enumerate(PEOPLE):
        column = columns.nth(index)
        expect(column.locator(".column-person")).to_contain_text(person.name)
        # The whole column, composer included, is on screen: nothing to scroll sideways for.
        expect(column).to_be_in_viewport(ratio=0.99)
        expect(column.get_by_role("textbox", name="Message")).to_be_in_viewport(ratio=1)
    page.screenshot(path=str(tmp_path / "everyone-1280.png"))

    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_role("button", name="One person").click()
    chat = ChatPage(page)
    for person in PEOPLE:
        chip = page.locator("#people").get_by_role("button", name=person.name, exact=True)
        expect(chip).to_be_in_viewport(ratio=1)
        chat.play_as(person.name)
        expect(chip.locator(".person-name")).to_be_visible()  # who you are, in words
    # Their DM and the channel are one tap away too, and the composer is on screen.
    chat.open_dm()
    chat.open_channel()
    expect(page.get_by_role("textbox", name="Message")).to_be_in_viewport(ratio=1)
    page.screenshot(path=str(tmp_path / "phone.png"))
    page.get_by_role("button", name="Everyone").click()
    expect(columns.first).to_be_in_viewport(ratio=0.99)
    chat.play_as(PEOPLE[3].name)  # and back to one person from there


NO_EMOJI_FONTS = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <selectfont><rejectfont><glob>*Emoji*</glob></rejectfont></selectfont>
  <cachedir>{cache}</cachedir>
</fontconfig>
"""
"""This machine's fonts less any emoji font: what a fresh machine has."""


DRAWN_WITH_ITS_FONTS = """() => {
  const drawn = () => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  return drawn().then(() => document.fonts.ready).then(drawn);
}"""
"""Once a frame is drawn (laid out, so each font it needs is asked for), the fonts have loaded
or failed, and a frame is drawn with them: the screenshot then shows the fonts' outcome."""


def coloured_pixels(png: bytes) -> int:
    """Pixels of clear colour: emoji have many, text and empty boxes (tofu) none."""
    rgb = Image.open(io.BytesIO(png)).convert("RGB").tobytes()
    pixels = (rgb[i : i + 3] for i in range(0, len(rgb), 3))
    return sum(1 for pixel in pixels if max(pixel) - min(pixel) > 80)


def test_emoji_show_on_a_machine_without_an_emoji_font(
    driver: Playwright, chromium: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    config = tmp_path / "fonts.conf"
    config.write_text(NO_EMOJI_FONTS.format(cache=tmp_path / "font-cache"))
    fake = sandbox.fake
    text = "Fika :coffee: :trophy: :crystal_ball: :moneybag: :wolf:"
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]
    fake.add_message(fake.api.bot_message(CHANNEL_ID, "Fika emoji", blocks))
    counts = {}
    # A browser of its own: its fonts are found by the configuration it was started with.
    browser = driver.chromium.launch(
        executable_path=chromium,
        args=CHROMIUM_ARGS,
        env={**os.environ, "FONTCONFIG_FILE": str(config)},
    )
    try:
        for served in (True, False):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            if not served:  # the same machine, had the page not brought its font
                context.route("**/static/emoji.ttf", lambda route: route.abort())
            page = context.new_page()
            page.goto(sandbox.url)
            chat = ChatPage(page)
            chat.play_as(PLAYERS[0])
            chat.open_channel()
            line = chat.message("Fika").locator(".bk-section-text")
            expect(line).to_have_text("Fika ☕ 🏆 🔮 💰 🐺")
            page.evaluate(DRAWN_WITH_ITS_FONTS)
            shot = line.screenshot(path=str(tmp_path / f"emoji-served-{served}.png"))
            counts[served] = coloured_pixels(shot)
            if served:
                # The font is the page's own, and the page uses it for its own marks too.
                loaded = page.evaluate(
                    "[...document.fonts].filter(f => f.family.includes('Varulv Emoji'))"
                    ".map(f => f.status)"
                )
                assert loaded == ["loaded"]
                page.locator(".topbar").screenshot(path=str(tmp_path / "topbar.png"))
            context.close()
    finally:
        browser.close()
    print(f"coloured pixels: with the page's font {counts[True]}, without {counts[False]}")
    assert counts[False] == 0, "an emoji font is still installed: the test shows nothing"
    assert counts[True] > 200


# -- text drawn as Slack draws it, for each reader --------------------------------------------


def post(sandbox: Sandbox, text: str) -> None:
    fake = sandbox.fake
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]
    fake.add_message(fake.api.bot_message(CHANNEL_ID, text, blocks))


def test_emphasis_inside_emphasis_shows_no_marker(page: Page, sandbox: Sandbox) -> None:
    """A bot's bold name inside the reveal's italic sentence, and the other way round."""
    post(
        sandbox,
        f"_*Bosse* (bot)'s swap gave <@{PEOPLE[1].id}> the *Werewolf*, so they changed sides._\n"
        "*_Bold and leaning_* and _plain leaning_",
    )
    chat = ChatPage(page)
    chat.play_as(PLAYERS[0])
    chat.open_channel()
    line = chat.message("swap gave").locator(".bk-section-text")
    expect(line.locator("i b")).to_have_text(["Bosse", "Werewolf"])
    expect(line.locator("b i")).to_have_text("Bold and leaning")
    expect(line.locator("i")).to_have_count(3)
    assert "*" not in line.inner_text() and "_" not in line.inner_text(), line.inner_text()


def test_a_bare_address_is_a_link_as_slack_makes_it(page: Page, sandbox: Sandbox) -> None:
    """Text that is not verbatim has its web addresses linked (the referee's line names the
    source's release so); the punctuation after one stays text, and code stays code."""
    fake = sandbox.fake
    text = (
        "Get it at https://example.com/varulv/releases, then read "
        "_https://example.com/docs/the_referee_ or `https://example.com/code` "
        "(&lt;https://example.com/angled&gt;)."
    )
    blocks: list[JSON] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": "Addresses aside"}]},
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "As is: https://example.com/kept", "verbatim": True},
        },
    ]
    fake.add_message(fake.api.bot_message(CHANNEL_ID, "Addresses", blocks))
    chat = ChatPage(page)
    chat.play_as(PLAYERS[0])
    chat.open_channel()
    message = chat.message("Addresses aside")
    links = message.get_by_role("link")
    # The verbatim section's address is left as text.
    expect(links).to_have_text(
        [
            "https://example.com/varulv/releases",
            "https://example.com/docs/the_referee",
            "https://example.com/angled",
        ]
    )
    expect(links.first).to_have_attribute("href", "https://example.com/varulv/releases")
    expect(message.locator("i a")).to_have_attribute("href", "https://example.com/docs/the_referee")
    expect(message.locator("code")).to_have_text("https://example.com/code")
    expect(message.locator(".bk-section-text").first).to_contain_text("releases, then read")
    expect(message.locator(".bk-section-text").first).to_contain_text(
        "(<https://example.com/angled>)."
    )


NOON = 1_700_049_600
"""2023-11-15 12:00 UTC: 13:00 in Stockholm, 12:00 in London, 07:00 in New York."""


@pytest.mark.parametrize(
    ("reader", "shown"),
    [
        ("Linnea", r"^Slutar onsdag 15 november 2023 kl 13:00\.$"),  # sv-SE, Stockholm
        ("Nils", r"^Slutar Wednesday, November 15th, 2023 kl 12:00\.$"),  # en-GB, London
        ("Tove", r"^Slutar Wednesday, November 15th, 2023 kl 7:00\sAM\.$"),  # en-US, New York
    ],
)
def test_a_date_token_shows_in_each_readers_locale_and_zone(
    page: Page, sandbox: Sandbox, reader: str, shown: str
) -> None:
    post(sandbox, f"Slutar <!date^{NOON}^{{date_long}} kl {{time}}|15 november 12:00 UTC>.")
    chat = ChatPage(page)
    chat.play_as(reader)
    chat.open_channel()
    line = chat.message("Slutar").locator(".bk-section-text")
    expect(line).to_have_text(re.compile(shown))


def test_a_relative_date_token_speaks_the_readers_language(page: Page, sandbox: Sandbox) -> None:
    now = int(time.time())  # the moment itself, shown as "today" on every reader's own clock
    post(sandbox, f"Öppnar <!date^{now}^{{date_pretty}}|idag>")
    chat = ChatPage(page)
    for reader, today in (("Saga", "Öppnar i dag"), ("Tove", "Öppnar today")):
        chat.play_as(reader)
        chat.open_channel()
        expect(chat.message("Öppnar").locator(".bk-section-text")).to_have_text(today)


def test_a_time_picker_shows_its_placeholder_and_the_readers_clock(
    page: Page, sandbox: Sandbox
) -> None:
    """Slack's desktop time picker: a list of times with free-text entry, the app's placeholder
    while empty, and each reader's own clock (15:15 for Linnea, 3:15 PM for Tove)."""
    chat = ChatPage(page)
    owner, admin = PEOPLE[0], PEOPLE[4]

    def open_schedule(person: str) -> Locator:
        chat.play_as(person)
        chat.open_channel()
        chat.type("/varulv schedule")
        dialog = page.get_by_role("dialog", name="Standing table")
        expect(dialog).to_be_visible(timeout=WAIT_MS)
        return dialog

    def save(dialog: Locator) -> None:
        dialog.get_by_role("button", name="Save").click()
        expect(dialog).to_have_count(0, timeout=WAIT_MS)

    dialog = open_schedule(owner.name)
    time_field = dialog.get_by_role("combobox", name="Time")
    expect(time_field).to_have_attribute("placeholder", "Pick a time")
    expect(time_field).to_have_value("")
    expect(dialog.locator("datalist option[value='15:00']")).to_have_count(1)
    dialog.get_by_role("checkbox", name="Monday").check()
    time_field.fill("3:15 pm")  # typed, not picked: read as the time of day it names
    sandbox.fake.set_role(admin.id, "admin")  # Tove may open the form too
    try:
        save(dialog)
        dialog = open_schedule(owner.name)
        expect(dialog.get_by_role("combobox", name="Time")).to_have_value("15:15")
        dialog.get_by_role("button", name="Cancel").click()
        expect(dialog).to_have_count(0)
        dialog = open_schedule(admin.name)
        expect(dialog.get_by_role("combobox", name="Time")).to_have_value(re.compile(r"^3:15\sPM$"))
        dialog.get_by_role("button", name="Cancel").click()
        expect(dialog).to_have_count(0)
    finally:  # the next tests play with no standing table
        sandbox.fake.set_role(admin.id, None)
        dialog = open_schedule(owner.name)
        dialog.get_by_role("checkbox", name=re.compile("Remove the standing table")).check()
        save(dialog)
        chat.message("removed this channel's standing table")


def test_optional_is_said_in_the_readers_language(page: Page, sandbox: Sandbox) -> None:
    chat = ChatPage(page)
    owner, reader = PLAYERS[0], "Tove"
    sandbox.fake.set_role(PEOPLE[4].id, "admin")  # Tove may open the settings too
    try:
        for person, optional in ((owner, "(valfritt)"), (reader, "(optional)")):
            chat.play_as(person)
            chat.open_channel()
            chat.type("/varulv settings")
            dialog = page.get_by_role("dialog")
            expect(dialog).to_be_visible(timeout=WAIT_MS)
            labels = dialog.locator(".modal-optional")
            expect(labels.first).to_have_text(optional)
            assert {text.strip() for text in labels.all_inner_texts()} == {optional}
            dialog.get_by_role("button", name="Cancel").click()
            expect(dialog).to_have_count(0)
    finally:
        sandbox.fake.set_role(PEOPLE[4].id, None)
