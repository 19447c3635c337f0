"""Persistence: the typed ORM models and the connection."""
