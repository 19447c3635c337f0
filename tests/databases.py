"""The test run's one PostgreSQL server, and new databases on it: empty, or with the schema
already migrated (copied from a template migrated once, which is much faster than migrating)."""

from __future__ import annotations

import itertools
import os
import threading

from sqlalchemy import create_engine, make_url, text

from slackapp.db.engine import make_engine
from slackapp.db.migrate import upgrade

_databases = itertools.count(1)
_template_lock = threading.Lock()
_templates: dict[str, str] = {}


def _create(server_url: str, name: str, template: str | None = None) -> str:
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        copy = f' TEMPLATE "{template}"' if template else ""
        connection.execute(text(f'CREATE DATABASE "{name}"{copy}'))
    admin.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


def fresh_database(server_url: str, purpose: str) -> str:
    """A new, empty database on the server, for one deployment; its URL."""
    return _create(server_url, f"varulv_{purpose}_{os.getpid()}_{next(_databases)}")


def migrated_database(server_url: str, purpose: str) -> str:
    """A new database on the server with the schema at head; its URL."""
    with _template_lock:
        template = _templates.get(server_url)
        if template is None:
            url = fresh_database(server_url, "template")
            engine = make_engine(url)
            upgrade(engine)
            engine.dispose()  # a template may have no connection open when it is copied
            template = _templates[server_url] = str(make_url(url).database)
        name = f"varulv_{purpose}_{os.getpid()}_{next(_databases)}"
        return _create(server_url, name, template)
