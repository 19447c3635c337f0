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
    if isinstance(value, str):
        if kind == "rob":
            return Rob(value)
        if kind == "look":
            return LookAtCenter() if value == "center" else LookAtSeat(value)
    elif kind == "swap":
        match value:
            case [str() as first, str() as second]:
                return Swap(first, second)
    elif kind == "peek" and isinstance(value, int) and not isinstance(value, bool):
        return Peek(value)
    raise MalformedChoice(f"not a night choice: {data!r}")


def knowledge_to_json(knowledge: Knowledge) -> dict[str, Any]:
    # Tests in the order of how often a night shows each (the referee prints every one).
    if isinstance(knowledge, SawCard):
        return {"card": str(knowledge.card)}
    if isinstance(knowledge, SawWerewolves):
        data: dict[str, Any] = {"werewolves": list(knowledge.werewolves)}
        if knowledge.center is not None:
            data["center"] = {"index": knowledge.center.index, "card": str(knowledge.center.card)}
        return data
    if isinstance(knowledge, SawSeat):
        return {"seat": knowledge.seat, "card": str(knowledge.card)}
    return {"center": [str(card) for card in knowledge.cards]}
