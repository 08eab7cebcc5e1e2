"""Where a workspace's gptme-sessions records file is: known without reading it (or importing its reader,
core/sessions/record_file.py), so that a command in a workspace without one never loads the reader."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

RECORDS_FILE = "session-records.jsonl"
WORKSPACE_RECORDS = Path("state") / "sessions" / RECORDS_FILE


def records_path(root: Path, configured: str | None, environ: Mapping[str, str] | None = None) -> Path:
    """The records file: config.toml's `[records] path` (relative to the workspace), else
    $GPTME_SESSIONS_DIR/session-records.jsonl, else the workspace's state/sessions/ one."""
    env = os.environ if environ is None else environ
    if configured:
        path = Path(configured).expanduser()
        return path if path.is_absolute() else root / path
    sessions_dir = env.get("GPTME_SESSIONS_DIR")
    if sessions_dir:
        return Path(sessions_dir).expanduser() / RECORDS_FILE
    return root / WORKSPACE_RECORDS
