"""A NUL (or a lone surrogate, or a number JSON has no words for) anywhere in a signed payload:
PostgreSQL would refuse it wherever it landed, far from the door, so the server refuses the whole
request (400) before Bolt routes it, and nothing reaches the database. Every field of every kind
of payload, keys too."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from sqlalchemy import Engine, text

from slackapp.fakeslack import FakeSlack, SignedRequest
from tests.e2e.driver import Table
from tests.inprocess.harness import InProcessApp
from tests.inprocess.test_hostile_input import resigned, settings_submission
from tests.reliability.support import new_people, signed, signed_command

NUL, SURROGATE = "\x00", "\ud800"


def variants(value: Any, bad: str) -> Iterator[Any]:
    """``value`` with ``bad`` put into one of its strings at a time: every value and every
    key of every object, however deep."""
    if isinstance(value, str):
        yield value[:1] + bad + value[1:]
    elif isinstance(value, dict):
        for key, item in value.items():
            yield {(k + bad if k == key else k): v for k, v in value.items()}
            for changed in variants(item, bad):
                yield {**value, key: changed}
    elif isinstance(value, list):
        for index, item in enumerate(value):
            for changed in variants(item, bad):
                yield [*value[:index], changed, *value[index + 1 :]]


def spoiled(request: SignedRequest, bad: str) -> Iterator[SignedRequest]:
    """The request with ``bad`` in each of its fields in turn, signed again: a form's fields,
    an interaction's payload, an event's envelope."""
    if request.headers.get("Content-Type", "").startswith("application/json"):
        for envelope in variants(json.loads(request.body), bad):
            yield resigned(request, json.dumps(envelope))
        return
    form = dict(parse_qsl(request.body, keep_blank_values=True))
    if set(form) == {"payload"}:
        for payload in variants(json.loads(form["payload"]), bad):
            yield resigned(request, urlencode({"payload": json.dumps(payload)}))
        return
    if bad == SURROGATE:  # UTF-8 cannot hold one: a form's bytes decode to none
        return
    for changed in variants(form, bad):
        yield resigned(request, urlencode(changed))


def stored(db: Engine) -> list[Any]:
    """Every row of the tables a request can change, as text."""
    tables = ("games", "seats", "ballots", "channel_settings", "people", "regulars", "outbox")
    with db.connect() as connection:
        return [
            sorted(connection.execute(text(f"SELECT t::text FROM {table} AS t")).scalars())
            for table in tables
        ]


def a_command(fake: FakeSlack, table: Table, people: list[str]) -> SignedRequest:
    return signed_command(fake, people[1], table.channel, "settings")


def a_click(fake: FakeSlack, table: Table, people: list[str]) -> SignedRequest:
    lobby = table.lobby()
    return signed(fake, lambda: fake.click(people[1], lobby, lobby.button("Join").action_id))


def a_submission(fake: FakeSlack, table: Table, people: list[str]) -> SignedRequest:
    return settings_submission(fake, table, people[1])


def home_opened(fake: FakeSlack, table: Table, people: list[str]) -> SignedRequest:
    return signed(fake, lambda: fake.app_home_opened(people[1]))


def tokens_revoked(fake: FakeSlack, table: Table, people: list[str]) -> SignedRequest:
    event = {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["UBOT"]}, "event_ts": "1.0"}
    return signed(fake, lambda: fake.event(event))


def uninstalled(fake: FakeSlack, table: Table, people: list[str]) -> SignedRequest:
    return signed(fake, lambda: fake.event({"type": "app_uninstalled", "event_ts": "1.0"}))


def a_request(
    fake: FakeSlack, app: InProcessApp, db: Engine, kind: Callable[..., SignedRequest]
) -> tuple[list[str], SignedRequest]:
    """Two people, a lobby, and a request of the ``kind`` that the second of them makes."""
    people = new_people(fake, 2)
    table = Table(fake, app, db)
    table.command(people[0])
    table.lobby()
    request = kind(fake, table, people)
    app.settle()
    return people, request


KINDS: list[Callable[[FakeSlack, Table, list[str]], SignedRequest]] = [
    a_command,
    a_click,
    a_submission,
    home_opened,
    tokens_revoked,
    uninstalled,
]


@pytest.mark.parametrize("kind", KINDS, ids=[kind.__name__ for kind in KINDS])
def test_a_nul_in_any_field_of_any_payload_is_refused_before_the_database(
    fake: FakeSlack, app: InProcessApp, db: Engine, kind: Callable[..., SignedRequest]
) -> None:
    people, request = a_request(fake, app, db, kind)
    before = stored(db)

    refused = {"NUL": list(spoiled(request, NUL)), "surrogate": list(spoiled(request, SURROGATE))}
    assert len(refused["NUL"]) >= 10, "every field, and the payloads have many"
    for what, requests in refused.items():
        for number, spoilt in enumerate(requests):
            answer = app.send(spoilt)
            assert answer.status_code == 400, f"{what} in field {number}: {spoilt.body[:300]}"
            assert answer.text == "malformed request\n"
    app.settle()
    assert stored(db) == before, "nothing reached the database"
    told = [message.rendered_text for message in fake.ephemerals(people[1])]
    assert not [text for text in told if "database" in text], "no answer that it is unreachable"
    assert app.send(request).status_code == 200, "the same request, unspoilt, is taken"


def with_nan(value: Any, bad: float) -> Iterator[Any]:
    """``value`` with ``bad`` in place of one of its values at a time, however deep."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield {**value, key: bad}
            for changed in with_nan(item, bad):
                yield {**value, key: changed}
    elif isinstance(value, list):
        for index, item in enumerate(value):
            for changed in [bad, *with_nan(item, bad)]:
                yield [*value[:index], changed, *value[index + 1 :]]


@pytest.mark.parametrize("kind", KINDS[1:], ids=[kind.__name__ for kind in KINDS[1:]])
def test_an_infinite_number_or_nan_in_a_json_payload_is_refused_before_the_database(
    fake: FakeSlack, app: InProcessApp, db: Engine, kind: Callable[..., SignedRequest]
) -> None:
    """Python's JSON reads ``-Infinity`` and ``NaN``, which no JSON Slack sends holds, and
    PostgreSQL's JSON refuses them: written down before the acknowledgement, such a request
    failed there."""
    _, request = a_request(fake, app, db, kind)
    before = stored(db)
    errors = len(app.errors_logged())

    spoilt = []
    for bad in (float("-inf"), float("nan")):
        if request.headers.get("Content-Type", "").startswith("application/json"):
            for envelope in with_nan(json.loads(request.body), bad):
                spoilt.append(resigned(request, json.dumps(envelope)))
        else:
            payload = json.loads(dict(parse_qsl(request.body))["payload"])
            for changed in with_nan(payload, bad):
                spoilt.append(resigned(request, urlencode({"payload": json.dumps(changed)})))
    assert len(spoilt) >= 10, "every value, and the payloads have many"
    for number, each in enumerate(spoilt):
        answer = app.send(each)
        assert answer.status_code == 400, f"value {number}: {each.body[:300]}"
    app.settle()
    assert stored(db) == before, "nothing reached the database"
    assert app.errors_logged()[errors:] == [], "nothing failed on the way"
    assert app.send(request).status_code == 200, "the same request, unspoilt, is taken"
