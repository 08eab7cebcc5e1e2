"""Where a workspace keeps its files, and the fixed clock every test runs on (shared by all the test folders)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

FIXED_NOW = dt.datetime(2026, 3, 5, 16, 30, tzinfo=dt.UTC)
LOG_REL = Path("state") / "lesson-thompson" / "sessions.jsonl"
STATE_REL = Path("state") / "lesson-thompson" / "bandit-state.json"
CONFIG_REL = Path("state") / "lesson-thompson" / "config.toml"


def fixed_clock() -> dt.datetime:
    return FIXED_NOW
