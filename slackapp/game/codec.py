"""Night choices and knowledge as the plain JSON that REFEREE.md (and the database) use."""

from __future__ import annotations

from typing import Any

from slackapp.game.night import (
    Knowledge,
    LookAtCenter,
    LookAtSeat,
    NightChoice,
    Peek,
    Rob,
    SawCard,
    SawCenter,
    SawSeat,
    SawWerewolves,
    Swap,
)


class MalformedChoice(ValueError):
    """JSON that is not any night choice's shape."""


def choice_to_json(choice: NightChoice) -> dict[str, Any]:
    match choice:
        case Peek(index):
            return {"peek": index}
        case LookAtSeat(seat):
            return {"look": seat}
        case LookAtCenter():
            return {"look": "center"}
        case Rob(seat):
            return {"rob": seat}
        case Swap(first, second):
            return {"swap": [first, second]}


def choice_from_json(data: object) -> NightChoice:
    """Read ``{"peek": i}``, ``{"look": seat|"center"}``, ``{"rob": s}``, ``{"swap": [a, b]}``."""
    if not isinstance(data, dict) or len(data) != 1:
        raise MalformedChoice(f"a night choice is an object with one key, not {data!r}")
    ((kind, value),) = data.items()
    match kind, value:
        case "peek", int() if not isinstance(value, bool):
            return Peek(value)
        case "look", "center":
            return LookAtCenter()
        case "look", str():
            return LookAtSeat(value)
        case "rob", str():
            return Rob(value)
        case "swap", [str() as first, str() as second]:
            return Swap(first, second)
    raise MalformedChoice(f"not a night choice: {data!r}")


def knowledge_to_json(knowledge: Knowledge) -> dict[str, Any]:
    match knowledge:
        case SawWerewolves(werewolves, center):
            data: dict[str, Any] = {"werewolves": list(werewolves)}
            if center is not None:
                data["center"] = {"index": center.index, "card": str(center.card)}
            return data
        case SawSeat(seat, card):
            return {"seat": seat, "card": str(card)}
        case SawCenter(cards):
            return {"center": [str(card) for card in cards]}
        case SawCard(card):
            return {"card": str(card)}
