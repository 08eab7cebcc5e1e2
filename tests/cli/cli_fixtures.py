"""What the CLI tests in this folder add to the shared helpers (tests/support): lessons given
by keywords alone, and runners that call `main` with the fixed clock."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from tests.support import cli_run
from tests.support.engine_helpers import (
    CONFIG_REL,
    LOG_REL,
    fixed_clock,
    lesson_text,
    log_bytes,
    make_workspace,
    session,
)

__all__ = ["CONFIG_REL", "LOG_REL", "lesson_text", "log_bytes", "make_ws", "run", "run_json", "run_plain", "session"]


def make_ws(
    tmp_path: Path,
    lessons: Mapping[str, Sequence[str]] | None = None,
    events: Iterable[Mapping[str, Any] | str] | None = None,
    journals: Mapping[str, str] | None = None,
    config: str | None = None,
    name: str = "ws",
) -> Path:
    """make_workspace with every lesson active: lessons is {id: keywords}."""
    specs = {lesson_id: (list(keywords), "active") for lesson_id, keywords in (lessons or {}).items()}
    return make_workspace(tmp_path, lessons=specs, events=events, journals=journals, config=config, name=name)


# the CLI on the fixed clock (2026-03-05T16:30Z): exit code, stdout, stderr; and --json decoded
run = partial(cli_run.run, clock=fixed_clock)
run_json = partial(cli_run.run_json, clock=fixed_clock)
run_plain = cli_run.run  # the real clock, for behaviour that does not depend on the time
