"""Varulv's Block Kit screens, one module per screen; each returns a ``Screen`` (text + blocks).

The app sends ``screen.text`` and ``screen.as_dicts()`` with chat.postMessage / chat.update.
Public screens (lobby, night board, day board, ballot board) never show a card or a ballot.
Import from the modules themselves: the module names are the screens' names.
"""
