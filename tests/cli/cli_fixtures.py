"""What the CLI tests in this folder add to the shared helpers (tests/support): lessons given
by keywords alone, and runners that call `main` with the fixed clock."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import CONFIG_REL, LOG_REL, fixed_clock, lesson_text, log_bytes, make_workspace, session

from cli.main import main

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


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The CLI on the fixed clock (2026-03-05T16:30Z): exit code, stdout, stderr."""
    code = main(list(argv), clock=fixed_clock)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def run_plain(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`run` on the real clock, for behaviour that does not depend on the time."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
