"""Who may change a channel's table: every change, for every kind of person, in every kind of
channel, against the table in docs/workplaces.md written out apart from the code."""

from __future__ import annotations

import itertools

import pytest

from slackapp.game.permissions import (
    Asker,
    Change,
    Channel,
    is_admin,
    may,
    needs_admin_flags,
    refusal,
    who_may,
)

ASKERS = [
    Asker(hosts_the_game=host, set_the_standing_table=owner, is_admin=admin)
    for host, owner, admin in itertools.product([False, True], repeat=3)
]
CHANNELS = [
    Channel(open_to_everyone=opened, has_standing_table=standing)
    for opened, standing in itertools.product([False, True], repeat=2)
]


def expected(change: Change, asker: Asker, channel: Channel) -> bool:
    """The table in docs/workplaces.md, row by row."""
    admin, setter, host = asker.is_admin, asker.set_the_standing_table, asker.hosts_the_game
    opened = channel.open_to_everyone
    if change is Change.STOP:  # its host, the standing table's setter, admins; open: anyone
        return admin or setter or host or opened
    if change is Change.SETTINGS:  # the standing table's setter, admins; open: anyone
        return admin or setter or opened
    if change is Change.SCHEDULE and not channel.has_standing_table:  # admins; open: anyone
        return admin or opened
    if change is Change.SCHEDULE:  # its setter and admins, open or not
        return admin or setter
    return admin  # only an admin opens or closes a channel's table


@pytest.mark.parametrize("change", list(Change), ids=lambda c: c.value)
@pytest.mark.parametrize("channel", CHANNELS, ids=lambda c: f"{c}")
def test_every_asker_for_every_change(change: Change, channel: Channel) -> None:
    for asker in ASKERS:
        if asker.set_the_standing_table and not channel.has_standing_table:
            continue  # nobody set a table that is not there
        assert may(change, asker, channel) == expected(change, asker, channel), asker
        # Slack is asked only when the channel's facts leave the answer to the admin flags.
        without_flags = Asker(asker.hosts_the_game, asker.set_the_standing_table)
        asks = needs_admin_flags(change, without_flags, channel)
        assert asks == (not may(change, without_flags, channel)), asker


@pytest.mark.parametrize("change", list(Change), ids=lambda c: c.value)
@pytest.mark.parametrize("channel", CHANNELS, ids=lambda c: f"{c}")
def test_who_may_names_whom_the_table_lets(change: Change, channel: Channel) -> None:
    """What a line says of who may (a running game's ``/varulv``): each part named exactly
    when the table lets it, besides the admins, who may make every change."""
    owner = "U0OWNER" if channel.has_standing_table else None
    who = who_may(change, channel.open_to_everyone, "U0HOST", owner)
    assert who.anyone == expected(change, Asker(), channel)
    assert (who.host is not None) == expected(change, Asker(hosts_the_game=True), channel)
    owns = Asker(set_the_standing_table=True)
    assert (who.standing_owner is not None) == (
        owner is not None and expected(change, owns, channel)
    )
    for user in ("U0HOST", "U0OWNER", "U0MEMBER"):  # why each may, if they may
        asker = Asker(hosts_the_game=user == "U0HOST", set_the_standing_table=user == owner)
        assert (who.role_of(user) is not None) == expected(change, asker, channel), user


def test_hosting_a_game_gives_no_right_but_stopping_it() -> None:
    host = Asker(hosts_the_game=True)
    for channel in (Channel(), Channel(has_standing_table=True)):
        assert [change for change in Change if may(change, host, channel)] == [Change.STOP]


def test_a_member_who_answers_for_nothing_is_refused_in_a_closed_channel() -> None:
    nobody = Asker()
    assert [change for change in Change if may(change, nobody, Channel())] == []
    assert [change for change in Change if may(change, nobody, Channel(True))] == [
        Change.SETTINGS,
        Change.SCHEDULE,
        Change.STOP,
    ]
    set_already = Channel(open_to_everyone=True, has_standing_table=True)
    assert not may(Change.SCHEDULE, nobody, set_already), "a standing table stays its setter's"


def test_the_refusal_names_who_can() -> None:
    told = refusal(Change.STOP, "U0HOST", "U0OWNER")
    assert (told.host, told.standing_owner, told.admins_only) == ("U0HOST", "U0OWNER", False)
    assert refusal(Change.SETTINGS, None, None).admins_only
    settings = refusal(Change.SETTINGS, "U0HOST", "U0OWNER")
    assert (settings.host, settings.standing_owner) == (None, "U0OWNER"), "not the host"
    schedule = refusal(Change.SCHEDULE, "U0HOST", "U0OWNER")
    assert (schedule.host, schedule.standing_owner) == (None, "U0OWNER"), "not the host"
    opening = refusal(Change.OPENNESS, "U0HOST", "U0OWNER")
    assert opening.admins_only, "only admins open a table to everyone, not its host"


@pytest.mark.parametrize(
    ("user", "admin"),
    [
        ({"is_admin": True}, True),
        ({"is_owner": True}, True),
        ({"is_primary_owner": True}, True),
        ({"is_admin": False, "is_owner": False, "is_primary_owner": False}, False),
        ({}, False),
        ({"is_admin": "true"}, False),  # not Slack's boolean: not taken on trust
        ({"is_admin": 1}, False),
        ({"enterprise_user": {"is_admin": True}}, True),  # an admin of the organisation
        ({"enterprise_user": {"is_owner": True}}, True),
        ({"enterprise_user": "x"}, False),
        ({"is_restricted": True}, False),
    ],
)
def test_admins_and_owners_by_slacks_flags(user: dict[str, object], admin: bool) -> None:
    assert is_admin(user) is admin
