"""Every JSON file we accept goes through one reader (core/base/safe_json.py)
with a depth limit and numbers a float holds; a bad file or line is one line naming the file
and the line, never a traceback, and a bad session record never stops `record` from logging.
Symbolic link loops in a journal, trajectory or lesson folder path are one line too."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest

from lesson_credit.core.analysis.dropout import read_dropout_logs
from lesson_credit.core.base.safe_json import JSON_MAX_DEPTH, JsonError, decode_json
from lesson_credit.core.sessions.locate import locate
from lesson_credit.core.sessions.record_file import DEFAULT_WEIGHTS, parse_records, read_weights
from lesson_credit.core.sessions.trajectory import parse_trajectory
from tests.robustness.hostile_helpers import log_bytes
from tests.support.cli_run import run_process
from tests.support.engine_helpers import BASIC_LESSONS, STATE_REL, make_workspace, session

DEEP_LINE = b"[" * 1000 + b"]" * 1000  # 2 KB: past Python's recursion limit inside msgspec
HUGE_INT = b"1" + b"0" * 400  # a JSON integer no float holds (1e400)


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_the_reader_refuses_past_the_depth_limit_naming_file_and_line() -> None:
    assert decode_json(nested(JSON_MAX_DEPTH), "f.json") == json.loads(nested(JSON_MAX_DEPTH))
    with pytest.raises(JsonError) as deep:
        decode_json(nested(JSON_MAX_DEPTH + 1), "f.json", 7)
    assert str(deep.value) == f"f.json, line 7: JSON nested too deeply (over {JSON_MAX_DEPTH} levels)"
    # a whole file: the line is where the nesting passes the limit (101 objects, one per line)
    text = b'{"a":\n' * (JSON_MAX_DEPTH + 1) + b"1" + b"}" * (JSON_MAX_DEPTH + 1)
    with pytest.raises(JsonError, match=r"^f\.json, line 101: JSON nested too deeply"):
        decode_json(text, "f.json")
    with pytest.raises(JsonError, match=r"^f\.json, line 2: a number too big for a float$"):
        decode_json(b"[1,\n" + HUGE_INT + b"]", "f.json")
    with pytest.raises(JsonError, match=r"^f\.json, line 2: not valid JSON \(.*\)$"):
        decode_json(b'{"a": 1,\n x}', "f.json")
    assert decode_json(b'["[[[[[[", 1e308]', "f.json") == ["[[[[[[", 1e308]  # brackets in strings do not nest


def test_a_million_deep_document_is_refused_in_bounded_memory() -> None:
    data = nested(1_000_000)  # 2 MB
    tracemalloc.start()
    try:
        with pytest.raises(JsonError, match="nested too deeply"):
            decode_json(data, "deep.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak  # no tree is built past the limit: a few copies of the 2 MB input at most


def test_a_deep_record_line_is_reported_and_skipped_not_raised() -> None:
    good = json.dumps({"session_id": "s1", "llm_judge_score": 0.5}).encode()
    records, problems, count = parse_records(b"\n".join([DEEP_LINE, good, HUGE_INT]) + b"\n")
    assert [r.session_id for r in records] == ["s1"]
    assert count == 2
    assert str(problems[0]) == f"line 1: JSON nested too deeply (over {JSON_MAX_DEPTH} levels); skipped"
    assert str(problems[1]) == "line 3: a number too big for a float; skipped"


def test_a_deep_trajectory_line_is_a_skipped_line() -> None:
    rows = [json.dumps({"role": "user", "content": "hi"}).encode(), DEEP_LINE]
    rows.append(json.dumps({"role": "assistant", "content": "ok"}).encode())
    found = parse_trajectory(b"\n".join(rows) + b"\n", "t.jsonl")
    assert [m.text for m in found.messages] == ["hi", "ok"]
    assert found.skipped_lines == 1


def test_grading_weights_deep_huge_or_overflowing_fall_back_to_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "state" / "grading-weights.json"
    path.parent.mkdir(parents=True)
    cases = {
        DEEP_LINE: "state/grading-weights.json, line 1: JSON nested too deeply",
        b'{"productivity":\n' + HUGE_INT + b"}": "state/grading-weights.json, line 2: a number too big for a float",
        # each is finite, their sum is not: every weighted grade would be inf / inf = NaN
        b'{"productivity": 1e308, "alignment": 1e308}': "state/grading-weights.json: not an object of non-negative",
    }
    for content, start in cases.items():
        path.write_bytes(content)
        weights, problem = read_weights(tmp_path)
        assert weights == DEFAULT_WEIGHTS
        assert problem is not None and problem.startswith(start) and "\n" not in problem, problem


def test_record_logs_its_session_whatever_the_records_and_weights_hold(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, BASIC_LESSONS, [session("s0", 0.5, {"tools/git.md": 0.5})])
    (ws / "state" / "sessions").mkdir(parents=True)
    good = json.dumps({"session_id": "s1", "grades": {"productivity": 0.8}}).encode()
    (ws / "state" / "sessions" / "session-records.jsonl").write_bytes(DEEP_LINE + b"\n" + good + b"\n")
    (ws / "state" / "grading-weights.json").write_bytes(b'{"productivity": 1e308, "alignment": 1e308}')
    (ws / "j.md").write_text("git worktree\n")
    done = run_process("record", "--session-id", "s1", "--journal", "j.md", "--lessons", "tools/git.md", cwd=ws)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert b'"session_id":"s1"' in log_bytes(ws)
    for argv in (["show", "s1", "--json"], ["sessions", "--json"], ["status"]):
        done = run_process(*argv, cwd=ws)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (argv, done.stderr[-2000:])
        assert "not JSON compliant" not in done.stderr
    lint = run_process("lint", cwd=ws).stdout
    assert "line 1: JSON nested too deeply (over 100 levels); skipped" in lint, lint
    assert "state/grading-weights.json: not an object of non-negative weights with a finite sum" in lint, lint
    # the defaults weigh the one grade: productivity 0.8 -> 0.8
    assert '"weighted_grade": 0.8' in run_process("show", "s1", "--json", cwd=ws).stdout


def test_state_file_integers_no_float_holds_are_one_line(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, BASIC_LESSONS, [session("s1", 0.8, {"tools/git.md": 0.5})])
    state = b'{"arms": {"tools/git.md": {"alpha": ' + HUGE_INT + b', "beta": 1}}}'
    outside = tmp_path / "bandit-state.json"
    outside.write_bytes(state)
    done = run_process("import-gptme", str(outside), cwd=ws)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [f"lesson-credit: {outside}, line 1: a number too big for a float"], (
        done.stderr
    )
    (ws / STATE_REL).write_bytes(state)
    (ws / "ctx.txt").write_text("git")
    for argv in (["select", "--context", "ctx.txt", "--offline-ok"], ["status"], ["lint"]):
        done = run_process(*argv, cwd=ws, env={"LESSON_CREDIT_STORE": ""})
        assert "Traceback" not in done.stderr and done.returncode in (0, 1), (argv, done.stderr[-2000:])


def test_a_deep_dropout_line_is_a_problem_line(tmp_path: Path) -> None:
    folder = tmp_path / "drop"
    folder.mkdir()
    good = json.dumps({"session_id": "ok", "matched": ["lessons/a.md"], "withheld": []})
    (folder / "ok.jsonl").write_bytes(good.encode() + b"\n" + DEEP_LINE + b"\n")
    log = read_dropout_logs(folder, lambda raw: raw.rsplit("lessons/", 1)[-1])
    assert set(log.sessions) == {"ok"}
    assert log.problems == (f"{folder / 'ok.jsonl'}:2: JSON nested too deeply (over {JSON_MAX_DEPTH} levels); skipped",)


def loop(at: Path) -> Path:
    """`at` made a symbolic link loop (at -> at.2 -> at)."""
    other = at.with_name(at.name + ".2")
    os.symlink(other.name, at)
    os.symlink(at.name, other)
    return at


def test_symlink_loops_are_one_line_naming_the_path(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, BASIC_LESSONS, [session("s1", 0.8, {"tools/git.md": 0.5}, journal_path="jl")])
    loop(ws / "jl")
    done = run_process("record", "--session-id", "s2", "--journal", "jl", "--lessons", "tools/git.md", cwd=ws)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [f"lesson-credit: journal {ws / 'jl'}: a symbolic link loop; not read"]
    done = run_process("explain", "s1", cwd=ws)
    assert "Traceback" not in done.stderr and "symbolic link loop" in done.stderr + done.stdout, done.stderr[-2000:]
    loop(ws / "tl")
    found = locate(ws, "tl", "s1", (), allow_outside=False)
    assert found.path is None and found.problem == f"trajectory {ws / 'tl'}: a symbolic link loop; not read"
    dirs = locate(ws, None, "s1234", (str(loop(ws / "tdir")),), allow_outside=False)
    assert dirs.path is None
    assert dirs.problem == f"[records] trajectory_dirs: {ws / 'tdir'}: a symbolic link loop; not read"
    (ws / "gptme.toml").write_text('[lessons]\ndirs = ["lessons", "ld"]\n')
    loop(ws / "ld")
    done = run_process("lint", cwd=ws)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "[lessons] dir 'ld' is a symbolic link loop" in done.stdout, done.stdout
