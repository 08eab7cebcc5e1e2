"""A session's kind of work is shown by its kind's name wherever one session is shown: the `sessions` table and
its --json, `show`, `explain`, as it is where sessions are grouped (the spelling most of ALL the kind's sessions
use). The log keeps what was written: --json gives it as `recorded_category`. `select --category` logs the
spelling the log already uses for a kind it has (CODE for code), so the log gains no new spelling of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_fixtures import LOG_REL, make_ws, run, run_json, session

FIX = "tools/fix.md"
# the bugfix kind spelt three ways: " bugfix" once, "Bugfix" once, "bugfix" twice (s4 graded, s5 pending); by
# hand its name is "bugfix", the spelling 2 of its 4 sessions use. "Ops" is the only spelling of its kind.
RECORDED = {"s1": " bugfix", "s2": "Bugfix", "s3": "Ops", "s4": "bugfix", "s5": "bugfix"}
NAMES = {"s1": "bugfix", "s2": "bugfix", "s3": "Ops", "s4": "bugfix", "s5": "bugfix"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    rewards = {"s1": 0.5, "s2": 0.6, "s3": 0.4, "s4": 0.7, "s5": None}
    events = [
        session(sid, rewards[sid], {FIX: 1.0}, category=RECORDED[sid], timestamp=f"2026-03-0{i}T10:00:00Z")
        for i, sid in enumerate(RECORDED, 1)
    ]
    root = make_ws(tmp_path, lessons={FIX: ["flaky"]}, events=events)
    (root / "task.md").write_text("the flaky test again\n")
    return root


def category_cells(text: str) -> dict[str, str]:
    """Each session's cell of the `sessions` table's category column (read under its header, spaces kept)."""
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("session"))
    start, end = header.index("category"), header.index("reward")
    return {line.split()[0]: line[start:end].rstrip() for line in lines if line[:2] in RECORDED}


def test_sessions_shows_each_session_by_its_kinds_name(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "sessions", "-w", str(ws))
    assert code == 0, err
    assert category_cells(out) == NAMES  # was " bugfix" and "Bugfix" for s1 and s2
    payload = run_json(capsys, "sessions", "-w", str(ws))
    assert {s["session_id"]: s["category"] for s in payload["sessions"]} == NAMES
    assert {s["session_id"]: s["recorded_category"] for s in payload["sessions"]} == RECORDED  # as logged


def test_sessions_sorted_by_category_keeps_a_kind_together(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "sessions", "-w", str(ws), "--sort", "category")
    # by hand, the names in code-point order, ties in log order: Ops (s3), then bugfix (s1, s2, s4, s5); by the
    # spellings it was " bugfix", "Bugfix", "Ops", "bugfix", "bugfix": s3 between two bugfix sessions
    assert [s["session_id"] for s in payload["sessions"]] == ["s3", "s1", "s2", "s4", "s5"]
    for spelling in ("BUGFIX", " Bugfix"):  # the filter takes any spelling of the kind, and lists them by its name
        payload = run_json(capsys, "sessions", "-w", str(ws), "--category", spelling)
        assert [(s["session_id"], s["category"]) for s in payload["sessions"]] == [
            (sid, "bugfix") for sid in ("s1", "s2", "s4", "s5")
        ]


def test_show_and_explain_name_the_kind(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for sid in ("s1", "s2"):
        code, out, err = run(capsys, "show", "-w", str(ws), sid)
        assert code == 0, err
        (line,) = [line for line in out.splitlines() if line.startswith("category")]
        assert line == f"category  bugfix (recorded as {RECORDED[sid]!r})"
        payload = run_json(capsys, "show", "-w", str(ws), sid)
        assert (payload["category"], payload["recorded_category"]) == ("bugfix", RECORDED[sid])
        code, out, err = run(capsys, "explain", "-w", str(ws), sid)
        assert code == 0, err
        assert out.splitlines()[0].endswith("  category bugfix")
    code, out, err = run(capsys, "show", "-w", str(ws), "s4")  # spelt as its kind is named: nothing more said
    assert [line for line in out.splitlines() if line.startswith("category")] == ["category  bugfix"]


def selections(ws: Path) -> dict[str, str | None]:
    lines = [json.loads(line) for line in (ws / LOG_REL).read_text().splitlines() if line.strip()]
    return {e["session_id"]: e.get("category") for e in lines if e.get("type") == "selection"}


def test_select_logs_the_spelling_the_log_uses_for_the_kind(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("select", "-w", str(ws), "--context", str(ws / "task.md"), "--seed", "3")
    chosen = {}
    for sid, typed in (("n1", "BUGFIX"), ("n2", " Bugfix "), ("n3", "bugfix"), ("n4", "ops"), ("n5", "Docs")):
        payload = run_json(capsys, *argv, "--session-id", sid, "--category", typed)
        chosen[sid] = payload["selected"]
        assert payload["category"] == selections(ws)[sid]
    # a kind the log has: its most used spelling (bugfix: 2 of 4 sessions; ops: its one session's "Ops"); a kind
    # it has not (Docs) as typed
    assert {sid: selections(ws)[sid] for sid in chosen} == {
        "n1": "bugfix",
        "n2": "bugfix",
        "n3": "bugfix",
        "n4": "Ops",
        "n5": "Docs",
    }
    assert chosen["n1"] == chosen["n2"] == chosen["n3"] == [FIX]  # the same lessons whatever the spelling
    code, out, err = run(capsys, *argv, "--session-id", "n6", "--category", "BUGFIX")
    assert code == 0, err
    assert "category bugfix)" in err  # the summary names what is logged
    # a record without --category takes the selection's: the log's spelling
    journal = ws / "j.md"
    journal.write_text("flaky\n")
    code, out, err = run(capsys, "record", "-w", str(ws), "--session-id", "n1", "--journal", str(journal), "--lessons")
    assert code == 0, err
    recorded = [json.loads(line) for line in (ws / LOG_REL).read_text().splitlines() if '"n1"' in line][-1]
    assert recorded["category"] == "bugfix"


def test_a_category_config_finds_is_logged_in_the_logs_spelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """config.toml's [categories] names the kind `BugFix`; the log's sessions spell it `bugfix` (2 of 3)."""
    events = [session(f"s{i}", 0.5, {FIX: 1.0}, category=c) for i, c in enumerate(["bugfix", "Bugfix", "bugfix"])]
    root = make_ws(tmp_path, lessons={FIX: ["flaky"]}, events=events, config='[categories]\nBugFix = ["flaky"]\n')
    (root / "task.md").write_text("the flaky test again\n")
    argv = ("select", "-w", str(root), "--context", str(root / "task.md"), "--seed", "3", "--session-id", "n1")
    assert run_json(capsys, *argv)["category"] == "bugfix"
    assert selections(root) == {"n1": "bugfix"}


def test_select_logs_no_spelling_a_category_could_not_be_given_as(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The log's sessions spell the kind `code` with a tab after it twice (written by another tool: the reader
    takes any string) and `code` once. `select --category code` logs `code`: a category given to `select` or
    `record` must be one printable line, and the spelling most used is not one."""
    events = [session(f"s{i}", 0.5, {FIX: 1.0}, category=c) for i, c in enumerate(["code\t", "code\t", "code"])]
    root = make_ws(tmp_path, lessons={FIX: ["flaky"]}, events=events)
    (root / "task.md").write_text("the flaky test again\n")
    argv = ("select", "-w", str(root), "--context", str(root / "task.md"), "--seed", "3", "--session-id", "n1")
    # before: exit 1, "category must be one line of at most 200 printable characters" (it would log "code\t")
    assert run_json(capsys, *argv, "--category", "code")["category"] == "code"
    assert selections(root) == {"n1": "code"}
    # shown by the spelling most used all the same (its tab escaped where it is printed)
    assert {s["session_id"]: s["category"] for s in run_json(capsys, "sessions", "-w", str(root))["sessions"]} == {
        "s0": "code\t",
        "s1": "code\t",
        "s2": "code\t",
    }
