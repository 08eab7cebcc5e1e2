"""`lint`'s prefixed-ids: every lesson entry of the log spelled otherwise than its library id is counted (a
`lessons/` prefix, gptme's absolute paths in any of their spellings, backslashes, surrounding spaces, a bare
id string), and an absolute path that names no `lessons` folder is told apart: it is an arm of its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lesson_credit.core.health import Finding, lint
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session
from tests.support.health_logs import LESSONS, clean_events


def finding(root: Path) -> Finding:
    return next(f for f in lint(Workspace(root, clock=fixed_clock)) if f.code == "prefixed-ids")


def test_every_spelling_of_a_library_id_is_counted(tmp_path: Path) -> None:
    # each of these is read as a.md or tools/c.md (core/base/ids.py normalize_id): 6 entries, one per spelling
    spelled = {
        "\\\\server\\share\\lessons\\a.md": 1.0,  # a UNC path
        "lessons\\tools\\c.md": 1.0,  # backslashes, relative
    }
    bare = {"type": "session", "session_id": "p3", "base_reward": 0.5, "lessons": [".\\lessons\\a.md"]}
    events: list[dict[str, Any] | str] = [
        *clean_events(),
        session("p1", 0.5, spelled),
        session("p2", 0.6, {" lessons/a.md": 1.0, "././lessons/tools/c.md": 1.0}),
        json.dumps(bare) + "\n",
        session("p4", 0.6, {"/home/agent/lessons/a.md": 1.0}),
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    got = finding(root)
    assert got.message.startswith("6 lesson entries") and "absolute path" in got.message
    ws = Workspace(root, clock=fixed_clock)
    assert set(ws.lesson_usage()) == set(LESSONS)  # every spelling is one of the library's arms


def test_an_absolute_path_outside_a_lessons_folder_is_said_to_be_an_arm_of_its_own(tmp_path: Path) -> None:
    events = [
        *clean_events(),
        session("p1", 0.5, {"/srv/guidance/a.md": 1.0, "lessons/b.md": 1.0}),
    ]
    got = finding(make_workspace(tmp_path, lessons=LESSONS, events=events))
    # lessons/b.md is b.md; /srv/guidance/a.md is read as itself, never a.md
    assert got.message.startswith("1 lesson entry ")
    assert "; 1 more names a lesson by an absolute path with no `lessons` folder" in got.message
    assert "import-gptme" in got.advice
