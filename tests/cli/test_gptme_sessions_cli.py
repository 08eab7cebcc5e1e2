"""The CLI side of docs/records.md: show's record, trajectory and sources; agreement; sessions
--order informative; replay --priority. Missing, broken or disallowed inputs are one line, never a crash."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.cli_fixtures import make_ws, run, run_json
from tests.support.engine_helpers import grade, session
from tests.support.records_helpers import HAND, agreement_workspace

CLAUDE = [
    {"type": "user", "message": {"content": "Run the tests"}},
    {
        "type": "assistant",
        "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "pytest"}}]},
    },
    {"type": "user", "message": {"content": [{"type": "tool_result", "content": "ok"}]}},
]
RECORD = {
    "session_id": "abcd1234",
    "timestamp": "2026-03-05T16:00:00Z",
    "harness": "claude-code",
    "model": "claude-sonnet-4-6",
    "outcome": "productive",
    "exit_code": 0,
    "duration_seconds": 845,
    "deliverables": ["3f2a9c1", "https://github.com/o/r/pull/7"],
    "grades": {"productivity": 0.8, "alignment": 0.6},
    "trajectory_grade": 0.7,
    "llm_judge_score": 0.4,
    "llm_judge_reason": "Ran tests but did not fix the failure.",
    "llm_judge_model": "claude-haiku-4-5",
    "trajectory_path": "state/sessions/traj/abcd1234-5678.jsonl",
    "journal_path": "journal/x.md",
    "cascade_intent": {"kept": True},
}


def records_ws(tmp_path: Path, record: dict[str, object] | None = None) -> Path:
    root = make_ws(tmp_path, {"a.md": ["alpha"]}, [session("abcd1234-5678", None, {"a.md": 1.0})])
    folder = root / "state/sessions/traj"
    folder.mkdir(parents=True)
    (folder / "abcd1234-5678.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CLAUDE))
    (root / "state/sessions/session-records.jsonl").write_text(json.dumps(record or RECORD) + "\n")
    return root


def test_show_json_has_the_record_the_trajectory_and_every_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = records_ws(tmp_path)
    out = run_json(capsys, "show", "abcd", "-w", str(root))
    record = out["record"]
    assert record["joined_by"] == "prefix" and record["harness"] == "claude-code" and record["exit_code"] == 0
    assert record["cascade_intent"] == {"kept": True}  # an unknown key, kept
    assert record["grade_weights"] == {"productivity": 0.40, "alignment": 0.35}
    # (0.8 * 0.40 + 0.6 * 0.35) / 0.75 = (0.32 + 0.21) / 0.75 = 0.70666...
    assert record["weighted_grade"] == pytest.approx(0.53 / 0.75)
    assert out["trajectory"] == {
        "path": "state/sessions/traj/abcd1234-5678.jsonl",
        "format": "claude-code",
        "messages": 3,
        "tool_calls": 1,
    }
    # pending in the log: the record's judge 0.4 is in force; heuristic 0.7 and productive (1.0) are shown
    assert out["base_reward"] == 0.4 and out["grader"] == "record:judge"
    assert [(s["source"], s["score"], s["in_force"]) for s in out["sources"]] == [
        ("judge", 0.4, True),
        ("heuristic", 0.7, False),
        ("outcome", 1.0, False),
    ]
    code, text, _ = run(capsys, "show", "abcd", "-w", str(root))
    said = " ".join(text.split())  # (wrapped to no width here: one line each, but say it as read)
    assert (
        code == 0
        and "claude-code · claude-sonnet-4-6 · 14m 05s · outcome productive (reward 1.000) · exit code 0" in said
    )
    # the record's id abcd1234 starts the session's abcd1234-5678
    assert "exit code 0 · record abcd1234, joined by id (one id starts the other)" in said
    assert "judge 0.40 (claude-haiku-4-5): Ran tests but did not fix the failure." in text
    assert "(claude-code, 3 messages, 1 tool call)" in text


def test_show_says_what_was_joined_to_what_and_what_unknown_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`show` printed `unknown (exit 0) · joined by time to record d738902d`: what is unknown, and what was
    joined? The record's outcome word and the reward it maps to (none for unknown), and the record joined
    to this session, by time (their ids differ)."""
    root = make_ws(
        tmp_path,
        {"a.md": ["alpha"]},
        [session("2026-10-26-167", None, {"a.md": 1.0}, timestamp="2026-10-26T13:40:00Z")],
    )
    record: dict[str, object] = {
        "session_id": "d738902d",
        "timestamp": "2026-10-26T13:39:45+00:00",
        "harness": "claude-code",
    }
    record |= {"model": "claude-opus-4-6", "outcome": "unknown", "exit_code": 0, "duration_seconds": 1196}
    (root / "state/sessions").mkdir(parents=True)
    (root / "state/sessions/session-records.jsonl").write_text(json.dumps(record) + "\n")
    code, text, _ = run(capsys, "show", "2026-10-26-167", "-w", str(root))
    said = " ".join(text.split())
    assert code == 0
    assert (
        "record claude-code · claude-opus-4-6 · 19m 56s · outcome unknown (maps to no reward) · exit code 0 · "
        "record d738902d, joined by time (the ids differ) deliverables: none" in said
    ), text
    assert "joined by time to record" not in said and "unknown (exit 0)" not in said


@pytest.mark.parametrize(
    ("change", "note"),
    [
        ({"trajectory_path": "/etc/hostname"}, "outside the workspace"),
        ({"trajectory_path": "state/sessions/traj/missing.jsonl"}, "not found"),
        ({"trajectory_path": "state/sessions/fifo.jsonl"}, "FIFO"),
        ({"trajectory_path": "state/sessions/session-records.jsonl"}, "not a gptme, Claude Code or Codex"),
    ],
)
def test_a_missing_broken_or_disallowed_trajectory_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, str], note: str
) -> None:
    root = records_ws(tmp_path, {**RECORD, **change})
    os.mkfifo(root / "state/sessions/fifo.jsonl")
    out = run_json(capsys, "show", "abcd1234-5678", "-w", str(root))
    assert out["trajectory"] is None and note in out["trajectory_note"] and "\n" not in out["trajectory_note"]
    assert out["record"] is not None


def test_broken_records_are_one_line_and_the_session_still_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = records_ws(tmp_path)
    (root / "state/sessions/session-records.jsonl").write_bytes(b"\x00\xff{garbage\n")
    out = run_json(capsys, "show", "abcd1234-5678", "-w", str(root))
    assert out["record"] is None and "no gptme-sessions record" in out["record_note"]
    assert out["base_reward"] is None  # pending: nothing scores it
    (root / "state/sessions/session-records.jsonl").unlink()
    os.mkfifo(root / "state/sessions/session-records.jsonl")
    out = run_json(capsys, "show", "abcd1234-5678", "-w", str(root))
    assert out["record"] is None and "FIFO" in out["record_note"]
    code, lint_out, _ = run(capsys, "lint", "-w", str(root), "--json")
    assert "records-unreadable" in lint_out


def test_agreement_json_equals_the_hand_computation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "agreement", "-w", str(agreement_workspace(tmp_path)))
    found = {(p["source_a"], p["source_b"]): p for p in out["pairs"]}
    for key, (n, mae, r, rho, k, (tp, fp, fn, tn)) in HAND.items():
        p = found[key]
        assert (p["n"], p["threshold"], p["confusion"]) == (n, 0.5, {"tp": tp, "fp": fp, "fn": fn, "tn": tn})
        assert (p["mae"], p["pearson"], p["spearman"], p["kappa"]) == pytest.approx((mae, r, rho, k))
    code, text, _ = run(capsys, "agreement", "-w", str(agreement_workspace(tmp_path / "b")))
    row = next(line.split() for line in text.splitlines() if line.split()[:2] == ["human", "judge"])
    assert code == 0 and row[3] == "0.200" and row[6] == "0.167" and row[7] == "2/1/1/1", text


def test_agreement_with_nothing_to_compare_says_what_would_give_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A heuristic's rewards and a judge's grade, no person's: every n is 0, and the table alone said nothing."""
    events = [session("s1", 0.6, {"a.md": 1.0}), session("s2", None, {"a.md": 1.0}), grade("s2", 0.9, "judge")]
    root = make_ws(tmp_path, lessons={"a.md": ["a"]}, events=events)
    code, text, _ = run(capsys, "agreement", "-w", str(root))
    assert code == 0
    assert text.rstrip().endswith(
        "No session has both a person's grade and another source's score yet: grade sessions by hand "
        "(`lesson-credit grade ID R`, or 0-9 in a session of the dashboard) to compare."
    ), text
    code, text, _ = run(capsys, "agreement", "-w", str(agreement_workspace(tmp_path / "b")))
    assert code == 0 and "No session has both" not in text


def test_agreement_refuses_a_bad_threshold_or_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = agreement_workspace(tmp_path)
    with pytest.raises(SystemExit) as usage:  # a usage error: exit 2
        run(capsys, "agreement", "-w", str(root), "--threshold", "2")
    assert usage.value.code == 2
    capsys.readouterr()
    code, _, err = run(capsys, "agreement", "-w", str(root), "--source", "robot")
    assert code == 1 and err.count("\n") == 1 and "unknown source" in err


def test_sessions_in_the_informative_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = [
        session("s1", None, {"a.md": 1.0}),
        grade("s1", 1.0),
        session("s2", None, {"a.md": 1.0}),
        session("s3", None, {"a.md": 0.0}),
        grade("s3", 0.2, "judge"),
    ]
    root = make_ws(tmp_path, {"a.md": ["alpha"]}, events)
    out = run_json(capsys, "sessions", "-w", str(root), "--order", "informative")
    # by hand in tests/core/test_agreement.py: s2 (0.01274) before s3 (0.00047); s1, graded by a person, last
    assert [s["session_id"] for s in out["sessions"]] == ["s2", "s3", "s1"]
    assert out["sessions"][0]["information"] == pytest.approx((1 / 12 + 0.485**2) / 25)
    assert out["sessions"][2]["information"] == 0.0
    pending = run_json(capsys, "sessions", "-w", str(root), "--order", "informative", "--pending")
    assert [s["session_id"] for s in pending["sessions"]] == ["s2"]


def test_the_informative_order_as_text_reads_like_the_other_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table printed rewards as `1` / `0.2` and the score as `1.27e-02`; now three places, as every
    other command, and a `shift` the line under the table explains."""
    events = [
        session("s1", None, {"a.md": 1.0}),
        grade("s1", 1.0),
        session("s2", None, {"a.md": 1.0}),
        session("s3", None, {"a.md": 0.0}),
        grade("s3", 0.2, "judge"),
    ]
    root = make_ws(tmp_path, {"a.md": ["alpha"]}, events)
    code, out, _ = run(capsys, "sessions", "-w", str(root), "--order", "informative")
    assert code == 0
    lines = out.split("\n")
    assert lines[0].split() == ["session", "time", "category", "reward", "grader", "lessons", "salience", "shift"]
    # shift = the square root of the information worked out above: s2 sqrt(0.0127423) = 0.11288, s3
    # sqrt(0.00047) = 0.0217 (0.00047 to two figures: between 0.02156 and 0.02179), s1 (a person's) 0
    cells = {line.split()[0]: line.split() for line in lines[2:5]}
    assert [cells[s][3] for s in ("s1", "s2", "s3")] == ["1.000", "pending", "0.200"]
    assert [cells[s][-1] for s in ("s2", "s3", "s1")] == ["0.113", "0.022", "0.000"]
    said = " ".join(out.split())
    assert "shift: how far a person's grade is expected to move the means of the session's lessons" in said
    assert "the root of --json's information" in said


def test_a_record_grader_is_explained_under_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # s7's only score is the judge's in its gptme-sessions record (0.7): the grader column says record:judge
    root = agreement_workspace(tmp_path)
    code, out, _ = run(capsys, "sessions", "-w", str(root))
    assert code == 0
    s7 = next(line.split() for line in out.split("\n") if line.startswith("s7 "))
    assert s7[3:5] == ["0.700", "record:judge"]
    assert (
        "record:judge: the judge score from the session's gptme-sessions record (no grade event in the log)"
        in " ".join(out.split())
    )


def test_replay_with_another_priority(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_ws(
        tmp_path, {"a.md": ["alpha"]}, [session("s1", None, {"a.md": 1.0}), grade("s1", 0.9), grade("s1", 0.2, "judge")]
    )
    what_if = run_json(capsys, "replay", "-w", str(root), "--priority", "judge,human")
    assert what_if["priority"] == ["judge", "human"] and what_if["lessons"][0]["alpha"] == pytest.approx(1.2)
    assert run_json(capsys, "status", "-w", str(root))["lessons"][0]["alpha"] == pytest.approx(1.9)
    with pytest.raises(SystemExit) as usage:  # an option's value: a usage error
        run(capsys, "replay", "-w", str(root), "--priority", "judge,robot")
    assert usage.value.code == 2 and "unknown reward source 'robot'" in capsys.readouterr().err


def test_agreement_says_what_a_row_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows were headed `a` and `b`, and a row `bob  manual` (two people who graded the same sessions)
    beside `human  judge` said nothing of what it was. The columns are the reference and the compared score,
    and a line above the table says what each name in a row is, at 80 columns too."""
    monkeypatch.setenv("COLUMNS", "80")
    code, text, _ = run(capsys, "agreement", "-w", str(agreement_workspace(tmp_path)))
    assert code == 0
    lines = text.split("\n")
    header = next(line for line in lines if line.startswith("reference"))
    assert header.split() == ["reference", "compared", "n", "MAE", "Pearson", "Spearman", "kappa", "tp/fp/fn/tn"]
    assert max(len(line) for line in lines) <= 80, text
    prose = " ".join(text[: text.index("\nreference")].split())
    assert "Each row sets a score against a reference: human (the latest grade of any person) against judge" in prose
    assert (
        "two grader names (bob against manual) are two people who graded the same sessions, bob the reference" in prose
    )
    rows = [line.split()[:3] for line in lines if line.startswith(("human ", "bob "))][:4]
    # n by hand (records_helpers): the judge 5 sessions with a person's grade (s1-s5), bob and manual s1 s2
    assert ["bob", "manual", "2"] in rows and ["human", "judge", "5"] in rows, rows


def test_show_and_the_dashboard_say_the_record_in_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`show` spelled the record out ("gptme-sessions record abcd1234, joined to this session by id (one id
    starts the other)", "outcome productive (reward 1.000) · exit code 0") where the dashboard's panel said
    "productive (exit 0) · joined by id to record abcd1234"; and with the judge's 0.58 logged since, the panel
    said "superseded by the judge's 0.58 · judge 0.40" (what superseded?) and `show` did not say it at all."""
    from lesson_credit.core.workspace import Workspace
    from lesson_credit.tui.records_views import _outside
    from lesson_credit.tui.widgets.record_panel import outside_text

    root = records_ws(tmp_path)
    Workspace(root).grade("abcd1234-5678", 0.58, grader="judge")  # line 2
    code, text, _ = run(capsys, "show", "abcd", "-w", str(root))
    assert code == 0
    said = " ".join(text.split())
    summary = (
        "claude-code · claude-sonnet-4-6 · 14m 05s · outcome productive (reward 1.000) · exit code 0 · "
        "record abcd1234, joined by id (one id starts the other)"
    )
    judge = (
        "judge 0.40 (claude-haiku-4-5), replaced by the judge's 0.58 logged on line 2, the score in force; "
        "the record's reason: "
        "Ran tests but did not fix the failure."
    )
    assert f"record {summary} deliverables:" in said and judge in said, text
    panel = outside_text(_outside(Workspace(root), "abcd1234-5678"), compact=True).plain.splitlines()
    assert panel[:2] == [judge, f"record {summary}"]  # the 80x24 form: two lines, wrapped by the panel


def test_an_information_summed_a_hair_below_zero_shifts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sum of squares summed in floating point may come out as -1e-18: its root raised "math domain error"
    and `sessions --order informative` ended with a traceback. Such a shift is none: 0.000."""
    from lesson_credit.core.analysis import informative

    real = informative._entry_scores
    monkeypatch.setattr(informative, "_entry_scores", lambda *args: real(*args) * 0.0 - 1e-18)
    root = make_ws(tmp_path, {"a.md": ["alpha"]}, [session("s1", None, {"a.md": 1.0})])
    code, out, _ = run(capsys, "sessions", "-w", str(root), "--order", "informative")
    assert code == 0
    assert out.split("\n")[2].split()[-1] == "0.000"
