"""gptme-contrib's two readers of `loo-results.json` find our results.

The readers, as they parse the file (gptme-contrib, read from its source, not imported):
- gptme-dashboard (`gptme_dashboard/generate.py`, scan_kpi_data): a JSON list of objects with
  `lesson` and `delta`, or else a JSON object whose every value `float()` accepts is one lesson
  (`{name: delta}`); values float() refuses (TypeError, ValueError) are skipped.
- the lessons MCP server (`scripts/gptme-lessons-mcp.py`, load_lessons/load_lesson): an object
  with a `results` list maps each entry's string `path` to its numeric `delta`; a lesson file
  `<lessons-dir>/.../<folder>/<stem>.md` looks itself up as `<folder>/<stem>`, then as `<stem>`.
The file keeps our own fields (`meta`, every per-result field, the lesson id in `lesson`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run_cli
from tests.support.crafted_loo import A, B, C, D, crafted_events
from tests.support.engine_helpers import make_workspace, session

NESTED, ROOT_LEVEL = "tools/git/worktree.md", "plain.md"
LESSONS = {
    A: (["alpha"], "active"),
    B: (["beta"], "active"),
    C: (["gamma"], "active"),
    D: (["delta"], "active"),
    NESTED: (["worktree"], "active"),
    ROOT_LEVEL: (["plain"], "active"),
}


def dashboard_reads(data: Any) -> dict[str, float]:
    """gptme-dashboard's reading: {name: delta}."""
    items: dict[str, float] = {}
    if isinstance(data, list):
        for item in data:
            if isinstance(item, dict) and "lesson" in item and "delta" in item:
                try:
                    items[str(item["lesson"])] = float(item["delta"])
                except (ValueError, TypeError):
                    continue
    elif isinstance(data, dict):
        for key, value in data.items():
            try:
                items[str(key)] = float(value)
            except (ValueError, TypeError):
                continue
    return items


def mcp_reads(data: Any, lessons_dir: Path) -> dict[str, float]:
    """The lessons MCP server's reading: each lesson file's effectiveness score, by file."""
    if "results" in data and isinstance(data["results"], list):
        scores = {
            r["path"]: r["delta"]
            for r in data["results"]
            if isinstance(r.get("path"), str) and isinstance(r.get("delta"), int | float)
        }
    else:
        scores = {k: v for k, v in data.items() if isinstance(v, int | float)}
    found: dict[str, float] = {}
    for md in sorted(lessons_dir.rglob("*.md")):
        score = scores.get(f"{md.parent.name}/{md.stem}")
        if score is None:
            score = scores.get(md.stem)
        if score is not None:
            found[md.relative_to(lessons_dir).as_posix()] = score
    return found


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    events = crafted_events()
    # the nested and root-level lessons ride along with A in its sessions: the same delta as A
    events = [
        {**e, "lessons": [*e["lessons"], {"path": NESTED, "salience": 0.5}, {"path": ROOT_LEVEL, "salience": 0.5}]}
        if any(entry["path"] == A for entry in e["lessons"])
        else e
        for e in events
    ]
    events.append(session("extra", 0.5, {B: 0.5}))
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    code, _, err = run_cli("loo", "--workspace", str(root))
    assert code == 0, err
    return root, json.loads((root / "state" / "lesson-thompson" / "loo-results.json").read_text())


def test_the_dashboard_finds_every_lesson_with_a_delta(written: tuple[Path, dict[str, Any]]) -> None:
    _, data = written
    ours = {r.get("lesson", r["path"]): r["delta"] for r in data["results"] if r["delta"] is not None}
    assert len(ours) >= 4  # A, B, D and the two riding with A at least; C has too few sessions
    assert dashboard_reads(data) == ours


def test_the_mcp_server_finds_every_lesson_file_with_a_delta(written: tuple[Path, dict[str, Any]]) -> None:
    root, data = written
    ours = {r.get("lesson", r["path"]): r["delta"] for r in data["results"] if r["delta"] is not None}
    assert mcp_reads(data, root / "lessons") == ours


def test_our_fields_are_kept(written: tuple[Path, dict[str, Any]]) -> None:
    _, data = written
    assert {"generated", "sessions", "method"} <= set(data["meta"])
    by_lesson = {r["lesson"]: r for r in data["results"]}
    assert set(by_lesson) == set(LESSONS)
    for row in by_lesson.values():
        assert {"delta", "p_value_approx", "n_with", "n_without", "effect", "confounded"} <= set(row)
    assert by_lesson[NESTED]["path"] == "git/worktree" and by_lesson[ROOT_LEVEL]["path"] == "plain"
    assert (by_lesson[A]["path"], by_lesson[C]["path"]) == ("tools/a", "workflow/c")
