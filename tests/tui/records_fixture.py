"""The dashboard fixture workspace with gptme-sessions records, trajectories and people's grades.

s1 (heuristic 0.8) is also graded 0.7 by a person; its record's judge says 0.3, and it has a gptme
trajectory with a long pytest output. s2 (heuristic 0.4): person 0.3, judge 0.5, a Claude Code
trajectory. s3 (heuristic 0.6): person 0.9, judge 0.8, no trajectory. s4 is pending in the log:
its record's judge 0.7 is in force until a person grades it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lesson_credit.core.workspace import Workspace
from tests.tui.tui_fixture import build_workspace, fixed_clock

PYTEST = "\n".join(f"tests/test_{i}.py::test_case PASSED" for i in range(40))
T = "2026-03-01T09:"
GPTME = [
    {"role": "system", "content": "You are gptme.", "timestamp": T + "40:00"},
    {"role": "user", "content": "Fix the stale git worktree before the release.", "timestamp": T + "40:05"},
    {"role": "assistant", "content": "Checking.\n```shell\ngit worktree list\n```", "timestamp": T + "41:00"},
    {"role": "system", "content": "Ran command: `git worktree list`\n/repo  abc123 [main]", "timestamp": T + "41:02"},
    {"role": "assistant", "content": "Now the tests.\n```shell\npytest -q\n```", "timestamp": T + "50:00"},
    {"role": "system", "content": "Ran command: `pytest -q`\n" + PYTEST, "timestamp": T + "52:00"},
    {"role": "assistant", "content": "All green; the git worktree is clean now.", "timestamp": T + "59:00"},
]  # fmt: skip
CLAUDE = [
    {"type": "user", "timestamp": "2026-03-02T10:40:00Z", "message": {"content": "Quote the shell glob."}},
    {
        "type": "assistant",
        "timestamp": "2026-03-02T10:41:00Z",
        "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "ls '*.md'"}}]},
    },
    {
        "type": "user",
        "timestamp": "2026-03-02T10:41:05Z",
        "message": {"content": [{"type": "tool_result", "content": "ls: cannot access", "is_error": True}]},
    },
]


def _record(session_id: str, judge: float | None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "session_id": session_id,
        "harness": "gptme",
        "model": "anthropic/claude-sonnet-4-6",
        "outcome": "productive",
        "exit_code": 0,
        "duration_seconds": 1140,
        "deliverables": ["3f2a9c1"],
        "grades": {"productivity": 0.8, "alignment": judge if judge is not None else 0.5, "harm": 1.0},
        "llm_judge_reason": "Fixed the worktree but skipped the flaky test.",
        "llm_judge_model": "claude-haiku-4-5",
        **extra,
    }
    if judge is not None:
        out["llm_judge_score"] = judge
    return out


def build_records_workspace(root: Path) -> Path:
    build_workspace(root)
    folder = root / "state" / "sessions"
    (folder / "logs" / "2026-03-01-s1").mkdir(parents=True)
    (folder / "logs" / "2026-03-01-s1" / "conversation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in GPTME))
    (folder / "cc-s2.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CLAUDE))
    records = [
        _record("s1", 0.3, trajectory_path="state/sessions/logs/2026-03-01-s1/conversation.jsonl"),
        _record(
            "s2", 0.5, harness="claude-code", model="claude-opus-4-6", trajectory_path="state/sessions/cc-s2.jsonl"
        ),
        _record("s3", 0.8),
        _record("s4", 0.7, outcome="unknown"),
    ]
    (folder / "session-records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    ws = Workspace(root, clock=fixed_clock)
    for session_id, value in (("s1", 0.7), ("s2", 0.3), ("s3", 0.9)):
        ws.grade(session_id, value, grader="manual")
    return root
