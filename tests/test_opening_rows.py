"""A new table written in one statement (``slackapp.services.opening``) names, for its seats,
exactly the columns the step's own seat rows carry: a column left out of one would be written
as NULL by ``json_populate_recordset``, over its default."""

from __future__ import annotations

import pytest

from slackapp.db.games import GAMES, NEW_GAME_COLUMNS, NewGame, opening_rows
from slackapp.game import machine as m
from slackapp.game.settings import KEPT, LENGTHS, SETTINGS, Kept
from slackapp.services.opening import SEAT_COLUMNS


@pytest.mark.parametrize("bots_allowed", [True, False])
def test_a_new_seat_row_has_every_column_the_opening_writes(bots_allowed: bool) -> None:
    game = NewGame(
        id=7,
        team_id="T0001",
        enterprise_id=None,
        channel_id="C0001",
        host_user_id="U0HOST",
        seed=1,
        night_seconds=120,
        day_seconds=300,
        vote_seconds=120,
        kept=Kept(bots_allowed=bots_allowed),
    )
    step = m.open_table(7, "C0001", "U0HOST", "host", 1, m.Lengths(120, 300, 120), game.kept)
    fields, seats = opening_rows(game, step.state)
    assert [sorted(seat) for seat in seats] == [sorted(SEAT_COLUMNS)]
    assert fields["phase"] == m.Phase.LOBBY.value


def test_every_setting_a_game_has_a_column_for_is_one_it_keeps_and_every_opening_writes() -> None:
    """A ``games`` column named after a channel setting holds the game's copy of it: the
    setting is in ``Kept`` (or is one of the lengths), so every way a table opens writes it,
    rather than leaving the column's default in its place."""
    settings = {setting.name for setting in SETTINGS}
    copied = {column.name for column in GAMES.columns} & settings
    assert copied == {setting.name for setting in (*KEPT, *LENGTHS)}
    assert copied <= set(NEW_GAME_COLUMNS)
