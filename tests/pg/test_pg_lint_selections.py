"""`lint`'s `selected-never-recorded` on a database store: the sessions the file's lint lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.pg.pg_helpers import line, log_path, make_workspace, session
from tests.support.cli_run import run, run_json


def selection(session_id: str) -> bytes:
    return line({"type": "selection", "session_id": session_id, "candidates": ["style.md"], "selected": ["style.md"]})


def never_recorded(out: str) -> list[dict[str, Any]]:
    (finding,) = [f for f in json.loads(out)["findings"] if f["code"] == "selected-never-recorded"]
    items: list[dict[str, Any]] = finding["items"]
    return items


def test_the_database_lists_what_the_file_lists(ws_root: Path, pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(ws_root)
    # line 1: lost is selected; line 2: s1 recorded after it; line 3: running is selected, nothing after it
    log_path(root).write_bytes(selection("lost") + line(session("s1", 0.5, {"style.md": 1.0})) + selection("running"))
    assert run_json(capsys, "store", "push", "-w", str(root), "--store", pg_url)["added"] == 3
    _, on_file, _ = run(capsys, "lint", "-w", str(root), "--json")
    _, on_db, _ = run(capsys, "lint", "-w", str(root), "--store", pg_url, "--json")
    assert never_recorded(on_file) == [{"item": "lost", "reason": "selected at line 1; no record"}]
    assert never_recorded(on_db) == never_recorded(on_file)
