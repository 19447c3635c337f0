"""How a seat is named on screen: a bot is marked as one everywhere it is named, so that the
colleague Astrid and the bot Astrid are never two bare names side by side."""

from __future__ import annotations

from dataclasses import dataclass

from slackapp.game.machine import is_erased

BOT_MARK = "(bot)"


@dataclass(frozen=True)
class SeatLabel:
    key: str
    """The seat's name in the engine: the Slack user id for a person, ``bot1``… for a bot."""
    name: str
    """Display name, used where Slack cannot render a mention (button text)."""
    user_id: str | None
    """None for a bot."""

    @property
    def is_bot(self) -> bool:
        return self.user_id is None

    @property
    def button_text(self) -> str:
        """The seat on a button, where Slack renders no mention: the name, a bot's marked."""
        return f"{self.name} {BOT_MARK}" if self.is_bot else self.name

    @property
    def mention(self) -> str:
        """mrkdwn that names the seat: a real mention for a person, the bot's name in bold."""
        if self.user_id and is_erased(self.user_id):  # no one to mention: the seat's name
            return f"_{self.name}_"
        return f"<@{self.user_id}>" if self.user_id else f"*{self.name}* {BOT_MARK}"
