"""What to send next, without Slack or a database: every small set of outbox rows of a message
(which versions are undelivered, which one Slack shows, which wait, whether the message is being
sent just now), and random sets of several messages, each against the rules."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slackapp.delivery import plan
from slackapp.delivery.plan import Entry, Pending, Shown

NOW = datetime(2026, 12, 1, 10, tzinfo=UTC)
LATER = NOW + timedelta(seconds=5)
VERSIONS = (1, 2, 3, 4)


def entry(surface: str, version: int, due_at: datetime = NOW, channel: str | None = "C1") -> Entry:
    return Entry(1, surface, version, channel, None, f"v{version}", None, due_at, 0)


def one_message_cases() -> Iterator[tuple[Pending, bool]]:
    """Every non-empty set of undelivered versions (of four), each due now or later, with Slack
    showing nothing or any version up to the newest, the message in flight or not."""
    for count in range(1, len(VERSIONS) + 1):
        for versions in itertools.combinations(VERSIONS, count):
            for dues in itertools.product((NOW, LATER), repeat=count):
                rows = [entry("lobby", v, d) for v, d in zip(versions, dues, strict=True)]
                for shown_version in (None, 0, *range(1, max(versions) + 1)):
                    shown = None if shown_version is None else Shown("C1", "1.0", shown_version)
                    for in_flight in (False, True):
                        # Rows come in any order: the plan sorts them.
                        yield (
                            plan.pending_of(reversed(rows), {"lobby": shown} if shown else {})[0],
                            in_flight,
                        )


CASES = list(one_message_cases())


def test_there_are_many_cases() -> None:
    assert len(CASES) == 888  # 15 sets of versions, each with its dues, shown and in flight


@pytest.mark.parametrize("chunk", range(8))
def test_every_small_set_of_rows_of_a_message_follows_the_rules(chunk: int) -> None:
    for pending, in_flight in CASES[chunk::8]:
        decision = plan.next_for(pending, {"lobby"} if in_flight else set(), NOW)
        versions = [e.version for e in pending.entries]
        assert versions == sorted(versions), "oldest first"
        newest = max(versions)
        shown = pending.shown
        waiting = pending.newest.due_at > NOW
        if in_flight:
            # Never sent alongside itself, whatever else holds.
            assert decision == plan.InFlight("lobby")
        elif shown is not None and shown.version >= newest:
            # Nothing older than (or as old as) what Slack shows is ever sent.
            assert decision == plan.AlreadyShown("lobby", newest)
        elif waiting:
            # A retry or a turn at the rate limit holds the version put off; one written
            # since then is not held by it.
            assert decision == plan.NotYet("lobby", pending.newest.due_at)
        elif shown is None:
            assert isinstance(decision, plan.Post)
            assert decision.entry.version == newest, "only the newest version is sent"
        else:
            assert isinstance(decision, plan.Update)
            assert decision.entry.version == newest
            assert decision.entry.version > shown.version
            assert decision.shown == shown, "redrawn where Slack has it"


def messages() -> st.SearchStrategy[list[Pending]]:
    surfaces = st.lists(
        st.sampled_from(["lobby", "day", "vote", "dm:U1", "dm:U2", "say:a", "tell:U1:b"]),
        unique=True,
        max_size=6,
    )

    def rows_for(names: list[str]) -> st.SearchStrategy[list[Pending]]:
        def one(name: str) -> st.SearchStrategy[Pending]:
            return st.tuples(
                st.sets(st.sampled_from(VERSIONS), min_size=1),
                st.sampled_from([None, 1, 2, 3, 4]),
                st.booleans(),
            ).map(
                lambda args: plan.pending_of(
                    [
                        entry(name, v, LATER if args[2] and v == min(args[0]) else NOW)
                        for v in args[0]
                    ],
                    {} if args[1] is None else {name: Shown("C1", "1.0", args[1])},
                )[0]
            )

        return st.tuples(*[one(name) for name in names]).map(list)

    return surfaces.flatmap(rows_for)


@given(messages(), st.sets(st.sampled_from(["lobby", "day", "dm:U1", "say:a"])))
def test_each_message_of_a_game_is_decided_alone(pending: list[Pending], sending: set[str]) -> None:
    decisions = plan.next_sends(pending, sending, NOW)
    assert len(decisions) == len(pending), "one decision per message"
    for each, decision in zip(pending, decisions, strict=True):
        assert decision == plan.next_for(each, sending, NOW), "no message changes another's"
        if isinstance(decision, plan.Post | plan.Update):
            assert decision.pending.surface == each.surface
            assert each.surface not in sending


def test_rows_of_several_messages_are_grouped_per_message_in_first_seen_order() -> None:
    rows = [entry("day", 2), entry("lobby", 5), entry("day", 1), entry("lobby", 4)]
    grouped = plan.pending_of(rows, {"day": Shown("C1", "1.0", 1)})
    assert [p.surface for p in grouped] == ["day", "lobby"]
    assert [[e.version for e in p.entries] for p in grouped] == [[1, 2], [4, 5]]
    assert grouped[0].shown == Shown("C1", "1.0", 1) and grouped[1].shown is None


def test_a_private_word_is_posted_to_its_person_whose_dm_is_opened_first() -> None:
    word = Entry(1, "tell:U1:abc", 1, None, "U1", "psst", None, NOW, 0)
    decision = plan.next_for(Pending("tell:U1:abc", (word,), None), set(), NOW)
    assert decision == plan.Post(Pending("tell:U1:abc", (word,), None))
    assert decision.entry.channel is None and decision.entry.user_id == "U1"


def test_a_clicks_url_answers_only_on_the_copy_it_was_clicked_on() -> None:
    def clicked(version: int, url: str | None, ts: str | None) -> Entry:
        return Entry(1, "lobby", version, "C1", None, "", None, NOW, 0, url, False, ts)

    pending = plan.pending_of(
        [clicked(2, "https://u/2", "1.0"), clicked(3, None, None), clicked(4, "https://u/4", "2")],
        {"lobby": Shown("C1", "1.0", 1)},
    )[0]
    assert pending.answer_at("1.0") == "https://u/2", "the newest click on that copy"
    assert pending.answer_at("2") == "https://u/4"
    assert pending.answer_at("5.0") is None, "no click on the copy Slack shows: an update"


@given(
    shown_version=st.sampled_from(VERSIONS),
    newest=st.sampled_from(VERSIONS),
    unsure_for=st.integers(min_value=-10, max_value=40),
    due_in=st.integers(min_value=-5, max_value=5),
)
def test_a_message_a_lost_call_may_still_redraw_is_sent_its_newest_once_that_call_cannot_land(
    shown_version: int, newest: int, unsure_for: int, due_in: int
) -> None:
    unsure_until = NOW + timedelta(seconds=unsure_for)
    due_at = NOW + timedelta(seconds=due_in)
    shown = Shown("C1", "1.0", shown_version, unsure_until)
    pending = Pending("day", (entry("day", newest, due_at),), shown)
    decision = plan.next_for(pending, set(), NOW)
    if due_at > NOW:
        assert isinstance(decision, plan.NotYet), "a retry's wait holds"
    elif newest > shown_version:
        assert decision == plan.Update(pending, shown), "a newer version never waits"
    elif unsure_until > NOW:
        assert decision == plan.NotYet("day", unsure_until), "sent again only once it cannot land"
    else:
        assert decision == plan.Update(pending, shown), "never marked shown unconfirmed"
    assert not isinstance(decision, plan.AlreadyShown)
