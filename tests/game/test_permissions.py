"""Who may change a channel's table: every change, for every kind of person, open or not."""

from __future__ import annotations

import itertools

import pytest

from slackapp.game.permissions import (
    Asker,
    Change,
    is_admin,
    may,
    needs_admin_flags,
    refusal,
)

ASKERS = [
    Asker(hosts_the_game=host, set_the_standing_table=owner, is_admin=admin)
    for host, owner, admin in itertools.product([False, True], repeat=3)
]


def expected(change: Change, asker: Asker, open_to_everyone: bool) -> bool:
    """The rule as a table, written out apart from the code."""
    if change is Change.OPENNESS:
        return asker.is_admin  # only an admin opens or closes a channel's table
    return (
        asker.is_admin or asker.hosts_the_game or asker.set_the_standing_table or open_to_everyone
    )


@pytest.mark.parametrize("change", list(Change), ids=lambda c: c.value)
@pytest.mark.parametrize("open_to_everyone", [False, True], ids=["closed", "open"])
def test_every_asker_for_every_change(change: Change, open_to_everyone: bool) -> None:
    for asker in ASKERS:
        assert may(change, asker, open_to_everyone) == expected(change, asker, open_to_everyone)
        # Slack is asked only when the channel's facts leave the answer to the admin flags.
        without_flags = Asker(asker.hosts_the_game, asker.set_the_standing_table)
        asks = needs_admin_flags(change, without_flags, open_to_everyone)
        assert asks == (not may(change, without_flags, open_to_everyone)), asker


def test_a_member_who_answers_for_nothing_is_refused_in_a_closed_channel() -> None:
    nobody = Asker()
    assert [change for change in Change if may(change, nobody, False)] == []
    assert [change for change in Change if may(change, nobody, True)] == [
        Change.SETTINGS,
        Change.SCHEDULE,
        Change.STOP,
    ]


def test_the_refusal_names_who_can() -> None:
    told = refusal(Change.STOP, "U0HOST", "U0OWNER")
    assert (told.host, told.standing_owner, told.admins_only) == ("U0HOST", "U0OWNER", False)
    assert refusal(Change.SETTINGS, None, None).admins_only
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
