"""What the fork server (``tests.forked``) does once, so that no app forked from it does it again:
each did it on its way to ``/healthz``: 0.36 s of CPU a start before, 0.22-0.27 s with all of it,
in each of the run's eighty-odd forked starts.

- the modules ``varulv serve`` imports only once it starts: psycopg (loaded by SQLAlchemy's
  dialect when the first engine is made), the token cipher's, and uvicorn's loop, lifespan and
  WebSocket protocol (imported by name when its server starts);
- SQLAlchemy's mappers, configured on the first query of each process.

The garbage collector is left as the app has it in production: the forked apps are the app under
test.

Nothing here connects, starts a thread or opens a file that a forked process would share.
"""

from __future__ import annotations

import uvicorn.lifespan.on
import uvicorn.loops.auto
import uvicorn.protocols.websockets.auto  # noqa: F401 - imported for its side effects, as all here
from sqlalchemy import create_engine
from sqlalchemy.orm import configure_mappers

import slackapp.db.deployment
import slackapp.db.models
import slackapp.db.tokens  # noqa: F401

create_engine("postgresql+psycopg://").dispose()  # imports psycopg; connects to nothing
configure_mappers()
