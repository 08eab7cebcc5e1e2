"""Trajectories: gptme, Claude Code and Codex session files read as one list; where they may be read."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.sessions.locate import locate
from lesson_credit.core.sessions.trajectory import (
    CLAUDE_CODE,
    CODEX,
    GPTME,
    TOOL_CALL,
    TOOL_RESULT,
    TrajectoryError,
    gptme_tool_calls,
    parse_trajectory,
    read_trajectory,
)
from lesson_credit.core.sessions.transcript import collapse, find_all, transcript
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import make_workspace, session


def jsonl(rows: list[Any]) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()


T = "2026-03-01T10:00:0"
GPTME_ROWS = [
    {"role": "system", "content": "You are gptme.", "timestamp": T + "0"},
    {"role": "user", "content": "Fix the stale git worktree", "timestamp": T + "1"},
    {"role": "assistant", "content": "Let me look.\n```shell\ngit worktree list\n```\n", "timestamp": T + "2"},
    {"role": "system", "content": "Ran command: `git worktree list`\n/repo abc [main]", "timestamp": T + "3"},
    {"role": "assistant", "content": '@save(call-1): {"path": "x.py"}\n@shell(call-2): {"cmd": "ls"}'},
    "not json",
]
CLAUDE_ROWS = [
    {"type": "queue-operation", "operation": "dequeue"},
    {"type": "user", "message": {"role": "user", "content": "Run the tests"}, "timestamp": "2026-03-01T10:00:00Z"},
    {
        "type": "assistant",
        "message": {
            "model": "claude-sonnet-4-6",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "Running pytest."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}},
            ],
        },
    },
    {
        "type": "user",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1 failed", "is_error": True}]},
    },
    {"type": "result", "result": "Done: 1 test fails."},
]
ITEM = "response_item"
CODEX_ROWS = [
    {"type": "session_meta", "payload": {"id": "0199", "originator": "codex_exec", "model": "gpt-5.3-codex"}},
    {"type": ITEM, "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}},
    {"type": ITEM, "payload": {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "ls"}'}},
    {"type": ITEM, "payload": {"type": "function_call_output", "output": "a.py"}},
    {"type": ITEM, "payload": {"type": "reasoning", "summary": []}},
    {"type": "event_msg", "payload": {"type": "token_count"}},
]


def test_gptme_messages_and_tool_calls_in_order() -> None:
    t = parse_trajectory(jsonl(GPTME_ROWS), "conversation.jsonl")
    assert t.format == GPTME and [m.role for m in t.messages] == ["system", "user", "assistant", "system", "assistant"]
    # one ```shell fence in message 3, two @tool lines in message 5
    assert [m.tool_calls for m in t.messages] == [0, 0, 1, 0, 2] and t.tool_calls == 3
    assert t.skipped_lines == 1
    assert t.as_json() == {"path": "conversation.jsonl", "format": "gptme", "messages": 5, "tool_calls": 3}


def test_fences_that_are_not_tools_are_not_calls() -> None:
    assert gptme_tool_calls("```python\nx\n```\n```text\ny\n```\n```save a.md\nz\n```") == 2
    assert gptme_tool_calls("a @shell(x): in the middle of a line") == 0


def test_claude_code_blocks_become_messages() -> None:
    t = parse_trajectory(jsonl(CLAUDE_ROWS), "u.jsonl")
    assert t.format == CLAUDE_CODE and t.model == "claude-sonnet-4-6"
    got = [(m.role, m.tool, m.is_error, m.text) for m in t.messages]
    assert got == [
        ("user", None, False, "Run the tests"),
        ("assistant", None, False, "Running pytest."),
        (TOOL_CALL, "Bash", False, '{"command": "pytest -q"}'),
        (TOOL_RESULT, None, True, "1 failed"),
        ("system", None, False, "Done: 1 test fails."),
    ]
    assert t.tool_calls == 1 and t.skipped_lines == 0


def test_codex_rollouts() -> None:
    t = parse_trajectory(jsonl(CODEX_ROWS), "rollout.jsonl")
    assert t.format == CODEX and t.model == "gpt-5.3-codex"
    assert [(m.role, m.tool, m.text) for m in t.messages] == [
        ("user", None, "hi"),
        (TOOL_CALL, "exec_command", '{"cmd": "ls"}'),
        (TOOL_RESULT, None, "a.py"),
    ]


def test_a_file_of_another_kind_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(jsonl([{"hello": 1}]))
    with pytest.raises(TrajectoryError, match="not a gptme, Claude Code or Codex"):
        read_trajectory(path)
    os.mkfifo(tmp_path / "fifo.jsonl")
    with pytest.raises(TrajectoryError, match="FIFO"):
        read_trajectory(tmp_path / "fifo.jsonl")
    with pytest.raises(TrajectoryError, match="not found"):
        read_trajectory(tmp_path / "nope.jsonl")


def test_long_outputs_are_collapsed_and_say_what_was_left_out() -> None:
    text = "\n".join(f"line {i}" for i in range(100))
    short, cut = collapse(text, lines=3, chars=1000)
    # 100 lines of "line N": 10 * 6 + 90 * 7 = 690 characters + 99 newlines = 789; kept "line 0\nline 1\nline 2"
    # = 20, so 769 more characters; lines 3 to 99 are 97 more lines
    assert cut and short == "line 0\nline 1\nline 2\n[… 769 more characters, 97 more lines]"
    assert collapse("short", lines=3, chars=10) == ("short", False)
    t = parse_trajectory(jsonl([{"role": "system", "content": text}]), "c.jsonl")
    shown = transcript(t)
    assert shown.collapsed == 1 and "more lines]" in shown.text and shown.text.startswith("── 1. system")
    assert transcript(t, expand=True).text.count("line ") == 100


def test_search_within_is_case_insensitive() -> None:
    assert find_all("Git git GIT", "git") == [(0, 3), (4, 7), (8, 11)]
    assert find_all("abc", "") == []


def test_where_a_trajectory_may_be_read(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {}, [])
    outside = tmp_path / "logs"
    (outside / "2026-03-01-dancing-abcd1234").mkdir(parents=True)
    (outside / "2026-03-01-dancing-abcd1234" / "conversation.jsonl").write_bytes(jsonl(GPTME_ROWS[:2]))
    (outside / "proj").mkdir()
    (outside / "proj" / "eeee5555-0000.jsonl").write_bytes(jsonl(CLAUDE_ROWS))
    named = str(outside / "proj" / "eeee5555-0000.jsonl")
    refused = locate(root, named, "x", (), allow_outside=False)
    assert refused.path is None and refused.problem is not None and "outside the workspace" in refused.problem
    assert locate(root, named, "x", (str(outside),), allow_outside=False).path == Path(named)
    assert locate(root, named, "x", (), allow_outside=True).path == Path(named)
    assert locate(root, None, "abcd1234", (str(outside),), False).path == (
        outside / "2026-03-01-dancing-abcd1234" / "conversation.jsonl"
    )
    assert locate(root, None, "eeee5555", (str(outside),), False).path == outside / "proj" / "eeee5555-0000.jsonl"
    none = locate(root, None, "abcd1234", (), False)
    assert none.path is None and none.problem is not None and "trajectory_dirs" in none.problem
    (outside / "proj" / "abcd1234.jsonl").write_bytes(jsonl(CLAUDE_ROWS))
    two = locate(root, None, "abcd1234", (str(outside),), False)
    assert two.path is None and two.problem is not None and "2 trajectories" in two.problem


def test_show_a_sessions_trajectory_through_the_workspace(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {}, [session("s1234", 0.5, {})])
    (root / "state/sessions").mkdir(parents=True)
    (root / "state/sessions/t.jsonl").write_bytes(jsonl(CLAUDE_ROWS))
    records = root / "state/sessions/session-records.jsonl"
    records.write_text(json.dumps({"session_id": "s1234", "trajectory_path": "state/sessions/t.jsonl"}) + "\n")
    found, problem = Workspace(root).trajectory_of("s1234")
    assert problem is None and found is not None and found.path == "state/sessions/t.jsonl" and len(found.messages) == 5
    records.write_text(json.dumps({"session_id": "s1234", "trajectory_path": "/etc/passwd"}) + "\n")
    found, problem = Workspace(root).trajectory_of("s1234")
    assert found is None and problem is not None and "outside the workspace" in problem


def test_a_trajectory_found_or_named_must_not_lead_out_by_a_symlink(tmp_path: Path) -> None:
    """The search of trajectory_dirs, and a named gptme folder, used to read
    whatever a symlink in them pointed to."""
    root = make_workspace(tmp_path, {}, [])
    secret = tmp_path / "secret.jsonl"  # outside the workspace and the trajectory folder
    secret.write_bytes(jsonl(CLAUDE_ROWS))
    logs = root / "logs"
    logs.mkdir()
    os.symlink(secret, logs / "abcd1234.jsonl")
    found = locate(root, None, "abcd1234", ("logs",), allow_outside=False)
    assert found.path is None and found.problem is not None
    assert found.problem.startswith(f"trajectory {logs / 'abcd1234.jsonl'} is outside the workspace")
    assert locate(root, None, "abcd1234", ("logs",), allow_outside=True).path == logs / "abcd1234.jsonl"
    folder = root / "gptme-log"  # a gptme log folder inside the workspace whose conversation links out
    folder.mkdir()
    os.symlink(secret, folder / "conversation.jsonl")
    named = locate(root, "gptme-log", "x", (), allow_outside=False)
    assert named.path is None and named.problem is not None and "outside the workspace" in named.problem
    inside = root / "logs" / "real-eeee5555.jsonl"  # a link that stays inside is followed
    inside.write_bytes(jsonl(CLAUDE_ROWS))
    os.symlink(inside, logs / "eeee5555.jsonl")
    assert locate(root, "logs/eeee5555.jsonl", "x", (), allow_outside=False).path == logs / "eeee5555.jsonl"
