"""The application layer: the game's steps, a channel's, and the sweeps of standing tables and
seasons, each built once with its own dependencies; under them, the unit of work."""
