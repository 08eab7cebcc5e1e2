"""lint's errors and warnings, --fail-on, and a folder without lessons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_fixtures import make_ws, run, session

GIT = "tools/git.md"


def test_pending_sessions_warn_and_fail_only_with_fail_on_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # clock 2026-03-05T16:30Z: "old" has waited 13 days, "new" 1 day; both are warnings
    events = [
        session("old", None, {GIT: 1.0}, timestamp="2026-02-20T10:00:00Z"),
        session("new", None, {GIT: 1.0}, timestamp="2026-03-04T16:30:00Z"),
    ]
    ws = make_ws(tmp_path, lessons={GIT: ["git"]}, events=events)
    code, out, _ = run(capsys, "lint", "-w", str(ws))
    assert code == 0
    assert "warning: [sessions-never-graded]" in out and "warning: [sessions-pending]" in out
    assert out.rstrip().endswith("0 errors, 2 warnings; passed (--fail-on error)")
    code, out, _ = run(capsys, "lint", "-w", str(ws), "--fail-on", "warning", "--json")
    payload = json.loads(out)
    assert code == 1
    assert (payload["errors"], payload["warnings"], payload["fail_on"], payload["failed"]) == (0, 2, "warning", True)


def test_errors_fail_at_either_level(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_ws(tmp_path, lessons={GIT: ["git"]}, events=[session("a", 0.5, {GIT: 1.0}), "{broken\n"])
    for level in ("error", "warning"):
        code, out, _ = run(capsys, "lint", "-w", str(ws), "--fail-on", level)
        assert code == 1 and "error: [log-unreadable-lines]" in out


def test_a_folder_without_lessons_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    # no lessons/, no log: the one line is about the folder, not about adding lessons (docs/cli.md)
    for command in ("lint", "status"):
        code, out, err = run(capsys, command, "-w", str(empty))
        assert code == 1 and out == ""
        assert err.count("\n") == 1 and "is not a lesson-credit workspace" in err and "--workspace" in err
    (empty / "lessons").mkdir()  # a workspace with no lessons yet
    code, out, _ = run(capsys, "lint", "-w", str(empty))
    assert code == 1
    assert "error: [no-lessons] no lessons found in" in out
    assert "no problems found" not in out
    code, out, err = run(capsys, "status", "-w", str(empty))
    assert code == 0
    assert err.startswith("warning: no lessons found in") and "lessons/" in err
    assert "0 sessions" in out


def test_a_clean_workspace_has_no_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_ws(tmp_path, lessons={GIT: ["git"]}, events=[session("a", 0.5, {GIT: 1.0})])
    assert run(capsys, "lint", "-w", str(ws)) == (0, "no problems found\n", "")
