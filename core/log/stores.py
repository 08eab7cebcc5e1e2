"""Choosing the event store: `--store URL`, else $LESSON_CREDIT_STORE, else `[store] url`
in config.toml, else the workspace's JSONL file; and who writes (`--agent`, default the hostname)."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lesson_credit.core.log.eventstore import EventStore, JsonlStore
from lesson_credit.core.log.store import StoreError

STORE_ENV = "LESSON_CREDIT_STORE"
MAX_AGENT_CHARS = 200


def default_agent() -> str:
    """Who writes, when `--agent` is not given: the host's name."""
    return socket.gethostname() or "unknown"


def is_postgres_url(url: str) -> bool:
    """A `postgresql://` / `postgres://` URL or a libpq keyword string (`host=... dbname=...`)."""
    stripped = url.strip()
    return stripped.startswith(("postgresql://", "postgres://")) or ("=" in stripped and "://" not in stripped)


def store_url(explicit: str | None, config_extra: Mapping[str, Any], config_path: Path) -> str | None:
    """The store to use: `--store`, else $LESSON_CREDIT_STORE, else `[store] url` in config.toml,
    else None (the workspace's JSONL file). An empty `--store ""` chooses the file explicitly."""
    if explicit is not None:
        return explicit if explicit.strip() else None
    from_env = os.environ.get(STORE_ENV, "")
    if from_env.strip():
        return from_env
    table = config_extra.get("store")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise StoreError(f"{config_path}: [store] must be a table with a url")
    url = table.get("url")
    if url is None or url == "":
        return None
    if not isinstance(url, str):
        raise StoreError(f"{config_path}: [store] url must be a string")
    return url


def open_store(url: str | None, log_path: Path, agent: str | None = None) -> EventStore:
    """The store a URL names (None: the JSONL file at `log_path`). Opening connects to nothing."""
    if url is None or not url.strip():
        return JsonlStore(log_path)
    if is_postgres_url(url):
        try:
            from lesson_credit.core.log.pgstore import PgStore
        except ImportError as exc:  # the `pg` extra is not installed
            if (exc.name or "").split(".")[0] != "psycopg":
                raise
            raise StoreError("postgresql: the database store needs psycopg (pip install 'psycopg[binary]')") from None

        if agent is not None and (not agent.strip() or not agent.isprintable() or len(agent) > MAX_AGENT_CHARS):
            raise StoreError(f"--agent must be a printable single line of 1-{MAX_AGENT_CHARS} characters")
        return PgStore(url, agent=agent or default_agent())
    raise StoreError("unsupported store URL (expected postgresql://..., postgres://... or a libpq keyword string)")
