"""Game steps: each parses nothing and renders through ``slackapp.blocks``; each is one
transaction that locks the game row, re-checks the phase, calls the engine and persists."""
