"""The end-to-end fixtures (a real PostgreSQL, the fake Slack), shared with the fault, security
and fuzz tests, which start, kill and restart app processes of their own."""

from __future__ import annotations

from tests.e2e.conftest import database_url as database_url
from tests.e2e.conftest import db as db
from tests.e2e.conftest import fake as fake
