"""A drain's transitions, without threads, clocks or a database: hypothesis plays a small world
of games and messages (steps writing new versions, calls landing in any order, time passing)
against ``delivery.drain`` and checks its rules at every step and its outcome at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from slackapp.delivery import drain
from slackapp.delivery.landings import Landing
from slackapp.delivery.plan import Entry, Pending, Post, Shown
from slackapp.delivery.slack import WorkspaceId

NOW = datetime(2026, 12, 1, 10, tzinfo=UTC)
WORKSPACE = WorkspaceId("T1")

Message = tuple[int, str]


@dataclass
class World:
    """The outbox and Slack as the drain's actions change them."""

    newest: dict[Message, int]
    """Each message's newest version written."""
    done: dict[Message, int] = field(default_factory=dict)
    """The versions up to which each message's entries are done."""
    shown: dict[Message, int] = field(default_factory=dict)
    """The version Slack shows (absent: never posted)."""
    calls: dict[Message, int] = field(default_factory=dict)
    """Calls under way: the version each carries."""
    unrecorded: set[Message] = field(default_factory=set)
    """Posts Slack took whose ``ts`` the drain has not recorded yet."""
    held: set[int] = field(default_factory=set)
    """Games the drain holds back just now, waiting for a call."""
    leases: set[int] = field(default_factory=set)
    """Games whose leases the drain has: a step took them, or a read found them."""

    def pending(self, game_id: int) -> list[Pending]:
        found = []
        for (game, surface), newest in sorted(self.newest.items()):
            done = self.done.get((game, surface), 0)
            if game != game_id or newest <= done:
                continue
            channel, user = where(surface)
            entries = tuple(
                Entry(game, surface, v, channel, user, f"v{v}", None, NOW, 0)
                for v in range(done + 1, newest + 1)
            )
            shown = self.shown.get((game, surface))
            found.append(
                Pending(surface, entries, None if shown is None else Shown("C1", "1.0", shown))
            )
        return found

    def carry_out(self, actions: list[drain.Action]) -> list[drain.Event]:
        """What the deliverer would do, checking the drain's rules as it goes."""
        events: list[drain.Event] = []
        sends = [a for a in actions if isinstance(a, drain.Send)]
        kinds = [type(a.send).__name__ for a in sends]
        assert kinds == sorted(kinds), f"every post goes before any update: {kinds}"
        for action in actions:
            match action:
                case drain.ReadStreams(held, claimed):
                    assert set(held) <= self.leases, "read unclaimed only with its lease held"
                    assert not set(claimed) & self.leases, "a game it holds is not claimed again"
                    games = {*held, *claimed}
                    self.leases |= games
                    found = {g: drain.ToShow(WORKSPACE, self.pending(g)) for g in games}
                    events.append(drain.Read(found, NOW))
                case drain.Send(game_id, _, send):
                    message = action.message
                    assert message not in self.calls, f"{message} in flight twice"
                    if isinstance(send, Post):
                        self.check_its_turn(message)
                    self.calls[message] = send.entry.version
                case drain.MarkShown(game_id, surface, version):
                    message = (game_id, surface)
                    self.done[message] = max(self.done.get(message, 0), version)
                case drain.Record(landings, release):
                    for x in landings:
                        message = (x.stream, x.surface)
                        self.unrecorded.discard(message)
                        self.shown[message] = max(self.shown.get(message, 0), x.version)
                        self.done[message] = max(self.done.get(message, 0), x.version)
                    calling = {game for game, _ in self.calls}
                    assert not calling & set(release), "a game let go with a call in flight"
                    assert not self.held & set(release), "a game let go while it waits"
                    self.leases -= set(release)
                    due = {g for g in release if self.pending(g)}
                    events.append(drain.Recorded(frozenset(due)))
        return events

    def check_its_turn(self, message: Message) -> None:
        """A post goes only when every post before it in its conversation (of its own game
        written earlier, of any game out) has landed and been recorded."""
        here = where(message[1])
        out = {m for m in (*self.calls, *self.unrecorded) if m not in self.shown}
        ahead = [m for m in out if where(m[1]) == here]
        assert not ahead, f"{message} posted while {ahead} still out in the same conversation"
        earlier = [
            m
            for m in self.newest
            if m[0] == message[0] and m < message and where(m[1]) == here and m not in self.shown
        ]
        assert not earlier, f"{message} posted before {earlier}, written before it"

    def land(self, message: Message) -> Landing:
        """Slack takes the call; recorded once the drain says so."""
        if message not in self.shown:
            self.unrecorded.add(message)
        return Landing(*message, self.calls.pop(message), NOW)


def where(surface: str) -> tuple[str | None, str | None]:
    """A surface's channel and person: the game's channel, or the DM of ``dm:<user>``."""
    return (None, surface.removeprefix("dm:")) if surface.startswith("dm:") else ("C1", None)


def settle(world: World, state: drain.Drain, events: list[drain.Event]) -> drain.Drain:
    """Feed the events, and those the actions bring at once, to the drain."""
    while events:
        event = events.pop(0)
        before = state
        state, actions = drain.advance(state, event)
        if isinstance(event, drain.Read):
            waiting = {g for g, s in before.in_flight if world.newest[g, s] > world.calls[g, s]}
            held = waiting & set(event.found)
            assert held <= state.held_back, "a newer version of a message in flight is held back"
        if isinstance(event, drain.Woke):
            again = {g for g, waits_for in before.held_for if waits_for in event.landed}
            assert again <= state.to_read | read_in(actions), "a held-back game is read again"
        if any(isinstance(a, drain.ReadStreams) for a in actions):
            assert not state.to_record, "what landed is recorded before anything is read"
        world.held = set(state.held_back)
        events.extend(world.carry_out(actions))
        assert set(world.calls) == set(state.in_flight), "the drain knows what is in flight"
    return state


def read_in(actions: list[drain.Action]) -> set[int]:
    return {g for a in actions if isinstance(a, drain.ReadStreams) for g in (*a.held, *a.claimed)}


messages = st.lists(
    st.tuples(
        st.integers(1, 3),
        st.sampled_from(["lobby", "day", "dm:U1", "dm:U2", "reveal"]),
        st.integers(1, 3),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(written=messages, data=st.data())
def test_a_drain_sends_every_newest_version_once_at_a_time_and_lets_go_only_when_idle(
    written: list[tuple[int, str, int]], data: st.DataObject
) -> None:
    world = World({(g, s): v for g, s, v in written})
    world.shown = {m: data.draw(st.integers(0, v)) for m, v in world.newest.items()}
    world.shown = {m: v for m, v in world.shown.items() if v}
    world.done = dict(world.shown)
    games = frozenset(g for g, _ in world.newest)
    leased = frozenset(data.draw(st.sets(st.sampled_from(sorted(games)))))
    world.leases = set(leased)
    state, actions = drain.begin(games, leased)
    state = settle(world, state, world.carry_out(actions))
    for _ in range(data.draw(st.integers(0, 30))):
        if state.over:
            break
        if data.draw(st.booleans()) and world.calls:
            ended = data.draw(st.sets(st.sampled_from(sorted(world.calls)), min_size=1))
            woke = drain.Woke({m: world.land(m) for m in sorted(ended)})
        else:
            message = data.draw(st.sampled_from(sorted(world.newest)))
            world.newest[message] += 1  # a step wrote a new version, then kicked the game
            woke = drain.Woke(kicked=frozenset({message[0]}))
        state = settle(world, state, [woke])
    for _ in range(200):  # every call lands: the drain comes to an end
        if state.over:
            break
        state = settle(world, state, [drain.Woke({m: world.land(m) for m in sorted(world.calls)})])
    assert state.over, state
    assert world.shown == world.newest, "Slack shows every message's newest version"
    assert all(world.done[m] == v for m, v in world.newest.items())


def test_a_game_read_with_nothing_to_send_is_let_go_at_once() -> None:
    state, actions = drain.begin(frozenset({7}))
    assert actions == [drain.ReadStreams((), (7,))]
    state, actions = drain.advance(state, drain.Read({7: drain.ToShow(WORKSPACE)}, NOW))
    assert actions == [drain.Record((), (7,))]
    state, actions = drain.advance(state, drain.Recorded(frozenset()))
    assert actions == [] and state.over


def test_calls_that_end_together_are_recorded_and_their_games_let_go_in_one_transaction() -> None:
    world = World({(1, "lobby"): 1, (2, "dm:U1"): 1, (2, "dm:U2"): 1})
    state, actions = drain.begin(frozenset({1, 2}))
    state = settle(world, state, world.carry_out(actions))
    assert state.in_flight == {(1, "lobby"), (2, "dm:U1"), (2, "dm:U2")}
    landed = {m: world.land(m) for m in [(1, "lobby"), (2, "dm:U1")]}
    state, actions = drain.advance(state, drain.Woke(landed))
    assert actions == [drain.Record(tuple(landed.values()), (1,))], "game 2 still calls"


def test_a_channels_second_post_waits_until_the_first_is_recorded() -> None:
    world = World({(1, "day"): 1, (1, "lobby"): 1})
    state, actions = drain.begin(frozenset({1}))
    state = settle(world, state, world.carry_out(actions))
    assert state.in_flight == {(1, "day")} and state.held_back == {1}
    landing = world.land((1, "day"))
    state, actions = drain.advance(state, drain.Woke({(1, "day"): landing}))
    assert actions == [drain.Record((landing,), ())], "recorded first, the game kept"
    state, actions = drain.advance(state, drain.Recorded(frozenset()))
    assert actions == [drain.ReadStreams((1,), ())], "then read again, its lease still held"


def test_a_game_waiting_for_another_games_post_keeps_its_lease() -> None:
    world = World({(1, "day"): 1, (2, "dm:U2"): 1, (2, "lobby"): 1})
    state, actions = drain.begin(frozenset({1, 2}))
    state = settle(world, state, world.carry_out(actions))
    assert state.in_flight == {(1, "day"), (2, "dm:U2")} and state.held_back == {2}
    landing = world.land((2, "dm:U2"))
    state, actions = drain.advance(state, drain.Woke({(2, "dm:U2"): landing}))
    assert actions == [drain.Record((landing,), ())], "game 2 still waits for game 1's post"


def test_a_post_written_after_one_that_waits_waits_with_it() -> None:
    """The day board failed a moment ago and waits for its retry; the vote board, written
    after it to the same channel, must not appear above it: it is put off until then too."""
    later = NOW + timedelta(seconds=5)
    day = Pending("day", (Entry(1, "day", 1, "C1", None, "day", None, later, 1),), None)
    vote = Pending("vote", (Entry(1, "vote", 1, "C1", None, "vote", None, NOW, 0),), None)
    dm = Pending("dm:U1", (Entry(1, "dm:U1", 1, None, "U1", "card", None, NOW, 0),), None)
    state, _ = drain.begin(frozenset({1}))
    state, actions = drain.advance(
        state, drain.Read({1: drain.ToShow(WORKSPACE, [day, vote, dm])}, NOW)
    )
    assert drain.WaitFor(1, "vote", 1, 0, later) in actions
    sent = [a.message for a in actions if isinstance(a, drain.Send)]
    assert sent == [(1, "dm:U1")], "another conversation's post goes at once"


def test_a_shown_message_unsure_past_its_due_time_waits_for_it_and_is_let_go() -> None:
    """A takeover left the message unsure after its newest version was shown and due again: its
    versions wait until then (a read now would find it due, and again, and again), and the
    stream is let go."""
    unsure = NOW + timedelta(seconds=30)
    board = Pending(
        "day",
        (Entry(1, "day", 3, "C1", None, "day", None, NOW - timedelta(seconds=1), 2),),
        Shown("C1", "1.0", 3, unsure),
    )
    state, _ = drain.begin(frozenset({1}))
    state, actions = drain.advance(state, drain.Read({1: drain.ToShow(WORKSPACE, [board])}, NOW))
    assert actions == [drain.WaitFor(1, "day", 3, 2, unsure), drain.Record((), (1,))]
    waiting = Pending("day", (Entry(1, "day", 3, "C1", None, "day", None, unsure, 2),), board.shown)
    state, actions = drain.begin(frozenset({1}))
    state, actions = drain.advance(state, drain.Read({1: drain.ToShow(WORKSPACE, [waiting])}, NOW))
    assert actions == [drain.Record((), (1,))], "already waiting until then: nothing to move"
