# Varulv's image: the Procfile's processes (`varulv serve`, and `alembic upgrade head` before a
# release) on slim Python 3.13, as a user without privileges. docs/deploy.md shows it with
# PostgreSQL (compose.yaml).
FROM python:3.13-slim

# MALLOC_ARENA_MAX: glibc's, not Varulv's; two malloc arenas for all the threads, not one per
# thread up to eight a core, keep a long-running process's memory level (docs/configuration.md).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MALLOC_ARENA_MAX=2

WORKDIR /app
COPY pyproject.toml README.md LICENSE alembic.ini ./
COPY slackapp ./slackapp
COPY migrations ./migrations
RUN pip install . \
    && useradd --system --uid 10001 --user-group --home-dir /app --no-create-home varulv \
    && mkdir /data && chown varulv:varulv /data

USER varulv
# Without DATABASE_URL the embedded PostgreSQL keeps its files here (mount a volume on it).
ENV PORT=3000 \
    VARULV_DATA_DIR=/data/pgdata
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '3000'), timeout=4)"]

CMD ["varulv", "serve"]
