"""`lint`'s `selected-never-recorded`: a selection whose session was never recorded, though a later session was
(the session-end hook did not run); a session still running is not listed. (Read from the parsed-log cache's
blocks: tests/robustness/test_cache_selections.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lesson_credit.core.health import WARNING, Finding, lint
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import fixed_clock, make_workspace, session
from tests.support.health_logs import LESSONS, VARIED

CODE = "selected-never-recorded"


def selection(session_id: str | None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "selection", "candidates": ["a.md", "b.md"], "selected": ["a.md"]}
    event["propensity"] = {"a.md": 0.6, "b.md": 0.4}
    return event if session_id is None else {**event, "session_id": session_id}


def recorded(session_id: str, i: int) -> dict[str, Any]:
    return session(session_id, VARIED[i], {"a.md": 1.0, "b.md": 0.5, "tools/c.md": 0.25})


def found(root: Path) -> dict[str, Finding]:
    return {f.code: f for f in lint(Workspace(root, clock=fixed_clock))}


# line by line: which selections have no record, and whether a session was recorded after them
EVENTS = [
    selection("s0"),  # 1: recorded on line 3
    selection("lost-1"),  # 2: no record; s0 (line 3) came after: listed, line 2
    recorded("s0", 0),  # 3
    selection("lost-2"),  # 4: drawn again on line 5
    selection("lost-2"),  # 5: its latest selection; s1 (line 6) came after: listed, line 5
    recorded("s1", 1),  # 6
    selection(None),  # 7: names no session: nothing to record
    recorded("s2", 2),  # 8: the last record
    selection("running"),  # 9: nothing recorded after it (still running): not listed
]


def test_sessions_selected_but_never_recorded_are_a_warning(tmp_path: Path) -> None:
    f = found(make_workspace(tmp_path, lessons=LESSONS, events=EVENTS))[CODE]
    assert f.severity == WARNING
    assert f.items == ("lost-1", "lost-2")
    assert f.reasons == ("selected at line 2; no record", "selected at line 5; no record")
    assert f.message == (
        "2 sessions selected but never recorded, though a session was recorded after their selection: lost-1, lost-2"
    )
    assert "lesson-credit record --session-id ID" in f.advice and "still running" in f.advice


def test_recording_them_clears_the_warning_and_a_running_session_is_listed_once_one_ends_after_it(
    tmp_path: Path,
) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=EVENTS)
    ws = Workspace(root, clock=fixed_clock)
    journal = root / "j.md"
    journal.write_text("alpha")
    ws.record("s3", journal, ["a.md"], reward=0.5)  # line 10: a record after "running"'s selection (line 9)
    assert ws.selected_never_recorded() == [("lost-1", 2), ("lost-2", 5), ("running", 9)]
    for session_id in ("lost-1", "lost-2", "running"):
        ws.record(session_id, journal, ["a.md"])
    assert CODE not in found(root)


def test_no_selection_or_no_record_means_no_finding(tmp_path: Path) -> None:
    only_selected = make_workspace(tmp_path, lessons=LESSONS, events=[selection("a"), selection("b")], name="sel")
    assert CODE not in found(only_selected)  # nothing recorded at all: every session may still be running
    records_first = [recorded("s0", 0), selection("later")]
    assert CODE not in found(make_workspace(tmp_path, lessons=LESSONS, events=records_first, name="first"))


def test_the_names_are_capped_and_every_session_is_an_item(tmp_path: Path) -> None:
    events = [*(selection(f"lost-{i:02d}") for i in range(10)), recorded("s0", 0)]
    f = found(make_workspace(tmp_path, lessons=LESSONS, events=events))[CODE]
    assert f.items == tuple(f"lost-{i:02d}" for i in range(10))
    # 8 names shown, 10 - 8 = 2 more
    assert f.message.endswith(": lost-00, lost-01, lost-02, lost-03, lost-04, lost-05, lost-06, lost-07 and 2 more")
    assert f.message.startswith("10 sessions selected but never recorded")


def test_json_lists_each_session_with_the_line_of_its_selection(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=EVENTS)
    code, out, _ = run_cli("lint", "--workspace", str(root), "--json")
    assert code == 0  # a warning
    (finding,) = [f for f in json.loads(out)["findings"] if f["code"] == CODE]
    assert finding["severity"] == "warning"
    assert finding["items"] == [
        {"item": "lost-1", "reason": "selected at line 2; no record"},
        {"item": "lost-2", "reason": "selected at line 5; no record"},
    ]
