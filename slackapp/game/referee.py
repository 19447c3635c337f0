"""``varulv referee``: one whole deal in (REFEREE.md's JSON), the outcome out."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from typing import Any

from slackapp.game.cards import MAX_SEATS, MIN_SEATS, REPEATABLE_CARDS, Card, Deal
from slackapp.game.codec import (
    MalformedChoice,
    choice_from_json,
    choice_to_json,
    knowledge_to_json,
)
from slackapp.game.fingerprint import fingerprint, night_fingerprint
from slackapp.game.night import IllegalChoice, LookAtSeat, NightChoice, Rob, Swap
from slackapp.game.outcome import Outcome, play
from slackapp.game.vote import NOBODY, IllegalBallot


class RefereeError(ValueError):
    """Input that breaks a rule of REFEREE.md; the message is one line naming the problem."""


def referee(text: str) -> dict[str, Any]:
    """Resolve the deal in ``text`` and return the outcome as REFEREE.md's JSON object."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        # Not only JSONDecodeError: a number too long to convert raises a plain ValueError,
        # nesting too deep a RecursionError.
        raise RefereeError(f"malformed JSON: {error}") from None
    deal, choices, ballots = parse_input(data)
    salt = _salt(data)
    links = {}
    if salt is not None:  # the links in order: the deal, the night, then the ballots
        keyed, keyed_choices = _keyed(data, deal, choices)
        links["fingerprint"] = _deal_link(data, salt, keyed)
        links["night_fingerprint"] = _night_link(data, salt, keyed, keyed_choices)
    try:
        played = play(deal, choices, ballots)
    except (IllegalChoice, IllegalBallot) as error:
        raise RefereeError(str(error)) from None
    outcome = outcome_to_json(played)
    _tally_link(data, outcome["tally"])
    return {**outcome, **links}


def _salt(data: dict[str, Any]) -> str | None:
    """The input's salt; None without one (then no fingerprint can be checked)."""
    salt = data.get("salt")
    if salt is None:
        for key in ("fingerprint", "night_fingerprint"):
            if data.get(key) is not None:
                raise RefereeError(f"{key!r} cannot be checked without the game's 'salt'")
        return None
    if not isinstance(salt, str) or not salt or not salt.isascii() or not salt.isalnum():
        raise RefereeError("'salt' must be the game's salt: letters and digits")
    return salt


def _keyed(
    data: dict[str, Any], deal: Deal, choices: Mapping[str, NightChoice]
) -> tuple[Deal, dict[str, NightChoice]]:
    """The deal and the night with each seat called by its key (``keys``: the person's Slack
    user id, ``bot1``… for a bot), as the fingerprints bind them; by its name without
    ``keys``."""
    keys = data.get("keys")
    if keys is None:
        return deal, dict(choices)
    if not isinstance(keys, dict) or set(keys) != set(deal.seats):
        raise RefereeError("'keys' must give every seat its key")
    for seat, key in keys.items():
        if not isinstance(key, str) or not key or any(c.isspace() or c in ":," for c in key):
            raise RefereeError(f"keys[{seat!r}] must be a key: no spaces, colons or commas")
    if len(set(keys.values())) != len(keys):
        raise RefereeError("'keys' must give each seat a key of its own")
    seats = tuple(keys[seat] for seat in deal.seats)
    dealt = {keys[seat]: card for seat, card in deal.dealt.items()}
    keyed = {keys[seat]: _renamed(choice, keys) for seat, choice in choices.items()}
    return Deal(seats=seats, dealt=dealt, center=deal.center), keyed


def _linked(
    data: dict[str, Any], field: str, what: str, computed: str, posted: str, gives: str
) -> str:
    """The fingerprint of the ``what`` ``computed`` from the input, once the input's ``field``
    (if given) is it: the text posted ``posted``; ``gives`` names what it is computed from."""
    shown = data.get(field)
    if shown is not None and not isinstance(shown, str):
        raise RefereeError(f"{field!r} must be the text posted {posted}")
    if shown is not None and shown != computed:
        raise RefereeError(
            f"the {what} does not match the fingerprint {shown!r} posted {posted}: {gives} "
            f"give {computed!r}"
        )
    return computed


def _deal_link(data: dict[str, Any], salt: str, deal: Deal) -> str:
    """The deal's fingerprint, once the input's (if given) is it."""
    gives = "this salt and these people's cards in their seats"
    computed = fingerprint(salt, deal)
    return _linked(data, "fingerprint", "deal", computed, "as the cards were dealt", gives)


def _night_link(
    data: dict[str, Any], salt: str, deal: Deal, choices: Mapping[str, NightChoice]
) -> str:
    """The night's fingerprint, once the input's (if given) is it."""
    computed = night_fingerprint(salt, deal, choices)
    gives = "this deal and these night moves"
    return _linked(data, "night_fingerprint", "night", computed, "at dawn", gives)


def _tally_link(data: dict[str, Any], computed: dict[str, int]) -> None:
    """The ballots give the tally the reveal showed, when the input says what it showed."""
    shown = data.get("tally")
    if shown is None:
        return
    if not isinstance(shown, dict):
        raise RefereeError("'tally' must be an object: the ballots each seat received")
    if shown != computed:
        given = json.dumps(computed, ensure_ascii=False)
        raise RefereeError(
            f"the ballots do not give the tally the reveal showed: they give {given}, not "
            f"{json.dumps(shown, ensure_ascii=False)}"
        )


def _object(
    data: dict[str, Any], key: str, default: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``data[key]``, which must be an object; ``default`` when it may be left out."""
    value = data.get(key, default)
    if not isinstance(value, dict):
        raise RefereeError(f"{key!r} must be an object")
    return value


INPUT_KEYS = (
    "seats",
    "dealt",
    "center",
    "night",
    "ballots",
    "salt",
    "keys",
    "fingerprint",
    "night_fingerprint",
    "tally",
)
"""Every key of the input; all but ``seats``, ``dealt`` and ``center`` may be left out."""

RESERVED_NAMES = frozenset({NOBODY, "center"})
"""Names no seat may carry in the input: ``nobody`` is a ballot, ``center`` the Seer's look."""

_LINE_BREAKING = frozenset({"Cc", "Zl", "Zp"})
"""Control characters and line or paragraph separators: in a name they would break its error
message's one line, or forge another."""


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a seat's name in the input, or None when it can."""
    if not name.strip():
        return "is blank"
    if name in RESERVED_NAMES:
        return "is reserved (`nobody` is a ballot, `center` the Seer's look at the centre)"
    if any(unicodedata.category(char) in _LINE_BREAKING for char in name):
        return "holds a control character"
    return None


_CARDS_BY_NAME = {str(card): card for card in Card}


def _card(value: object, where: str, seat: str | None = None) -> Card:
    card = _CARDS_BY_NAME.get(value) if isinstance(value, str) else None
    if card is None:
        place = where if seat is None else f"{where}[{seat!r}]"  # built only when needed
        raise RefereeError(f"unknown card {value!r} in {place}")
    return card


def parse_input(
    data: object,
) -> tuple[Deal, dict[str, NightChoice], dict[str, str | None]]:
    """Check REFEREE.md's input shape and deck rules; return the deal, choices and ballots."""
    if not isinstance(data, dict):
        raise RefereeError("input must be a JSON object")
    unknown = [key for key in data if key not in INPUT_KEYS]
    if unknown:
        known = ", ".join(repr(key) for key in INPUT_KEYS)
        raise RefereeError(f"unknown key {unknown[0]!r} in the input; the keys are {known}")
    seats = data.get("seats")
    if not isinstance(seats, list) or not all([isinstance(seat, str) for seat in seats]):
        raise RefereeError("'seats' must be a list of names")
    if not MIN_SEATS <= len(seats) <= MAX_SEATS:
        raise RefereeError(f"a table has {MIN_SEATS} to {MAX_SEATS} seats, not {len(seats)}")
    if len(set(seats)) != len(seats):
        raise RefereeError("seat names must be distinct")
    for seat in seats:
        problem = name_problem(seat)
        if problem is not None:
            raise RefereeError(f"the seat name {seat!r} {problem}")

    dealt_data = _object(data, "dealt")
    if set(dealt_data) != set(seats):
        raise RefereeError("'dealt' must give exactly one card to every seat")
    try:
        dealt = {seat: _CARDS_BY_NAME[dealt_data[seat]] for seat in seats}
    except (KeyError, TypeError):  # not a card's name: go again, card by card, to name it
        dealt = {seat: _card(dealt_data[seat], "dealt", seat) for seat in seats}
    center_data = data.get("center")
    if not isinstance(center_data, list) or len(center_data) != 2:
        raise RefereeError("'center' must hold exactly two cards")
    center = (_card(center_data[0], "center"), _card(center_data[1], "center"))
    deck = [*dealt.values(), *center]
    unique = [card for card in deck if card not in REPEATABLE_CARDS]
    if len(set(unique)) < len(unique):  # counted card by card only to name the culprit
        for card in Card:
            if card not in REPEATABLE_CARDS and deck.count(card) > 1:
                raise RefereeError(f"the deck holds {deck.count(card)} {card} cards; at most one")

    choices: dict[str, NightChoice] = {}
    for seat, value in _object(data, "night", {}).items():
        if seat not in dealt:
            raise RefereeError(f"unknown seat {seat!r} in 'night'")
        try:
            choices[seat] = choice_from_json(value)
        except MalformedChoice as error:
            raise RefereeError(f"night[{seat!r}]: {error}") from None

    ballots: dict[str, str | None] = {}
    for voter, target in _object(data, "ballots", {}).items():
        if voter not in dealt:
            raise RefereeError(f"unknown seat {voter!r} in 'ballots'")
        if target is not None and not isinstance(target, str):
            raise RefereeError(f"ballots[{voter!r}] must be a seat name or null")
        ballots[voter] = target

    return Deal(seats=tuple(seats), dealt=dealt, center=center), choices, ballots


def outcome_to_json(outcome: Outcome) -> dict[str, Any]:
    night, result = outcome.night, outcome.result
    return {
        "dawn": {seat: str(card) for seat, card in night.dawn.items()},
        "center": [str(card) for card in night.center],
        "seen": {seat: knowledge_to_json(k) for seat, k in night.seen.items()},
        "tally": outcome.tally.as_counts(),
        "dead": list(outcome.tally.dead),
        "winning_team": None if result.winning_team is None else str(result.winning_team),
        "winners": list(result.winners),
        "points": result.points,
    }


# --- a finished game, out ---------------------------------------------------------------------


def seat_names(seats: tuple[str, ...], names: Mapping[str, str]) -> dict[str, str]:
    """The name each seat goes by in a game's input: the names people know (``names``) when
    they tell every seat apart, else the seats' own keys.

    A name that is blank, reserved, holds a control character or is shared with another seat
    would make the input mean something else (or be refused), so then every seat keeps its key
    rather than some seats only.
    """
    chosen = [names.get(seat, "").strip() for seat in seats]
    usable = all(name_problem(name) is None for name in chosen)
    if usable and len(set(chosen)) == len(seats):
        return dict(zip(seats, chosen, strict=True))
    return {seat: seat for seat in seats}


def _renamed(choice: NightChoice, name: Mapping[str, str]) -> NightChoice:
    match choice:
        case LookAtSeat(seat):
            return LookAtSeat(name[seat])
        case Rob(seat):
            return Rob(name[seat])
        case Swap(first, second):
            return Swap(name[first], name[second])
    return choice


def game_input(
    deal: Deal,
    choices: Mapping[str, NightChoice],
    ballots: Mapping[str, str | None],
    names: Mapping[str, str] | None = None,
    salt: str | None = None,
) -> dict[str, Any]:
    """A whole game as REFEREE.md's input, for ``varulv referee`` to resolve again.

    Seats go by :func:`seat_names`; ``names`` maps a seat's key to the name people know.
    The input carries the tally the reveal showed, and, with the game's ``salt``, the salt,
    each seat's key and the deal's and the night's fingerprints as they were posted, so that
    the referee checks every link.
    """
    name = seat_names(deal.seats, names or {})
    counts = play(deal, choices, ballots).tally.as_counts()
    tally = {name.get(seat, seat): count for seat, count in counts.items()}
    checked = {}
    if salt is not None:
        checked = {
            "salt": salt,
            "keys": {name[seat]: seat for seat in deal.seats},
            "fingerprint": fingerprint(salt, deal),
            "night_fingerprint": night_fingerprint(salt, deal, choices),
        }
    return {
        "seats": [name[seat] for seat in deal.seats],
        "dealt": {name[seat]: str(deal.dealt[seat]) for seat in deal.seats},
        "center": [str(card) for card in deal.center],
        "night": {
            name[seat]: choice_to_json(_renamed(choices[seat], name))
            for seat in deal.seats
            if seat in choices
        },
        "ballots": {
            name[seat]: None if ballots[seat] is None else name[str(ballots[seat])]
            for seat in deal.seats
            if seat in ballots
        },
        "tally": tally,
        **checked,
    }
