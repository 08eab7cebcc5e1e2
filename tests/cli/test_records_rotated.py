"""gptme-sessions rotates its active records file: older sessions move to session-records-archive-*.jsonl, or the
whole file to session-records.jsonl.bak-* and a new one is started (gptme-sessions' blame.py reads those beside
the active file). Only the active file was read: every rotated session's judge score fell back to another source
(its reward moved), and a rotation that left the active file new or empty froze bandit-state.json ("no record can
be read from it"). The rotated files are read now: the same numbers, nothing said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import run_cli
from tests.support.records_helpers import RECORDS, judged_workspace

STATE = Path("state/lesson-thompson/bandit-state.json")
BAK = RECORDS.with_name("session-records.jsonl.bak-1")
ARCHIVE = RECORDS.with_name("session-records-archive-2026-11.jsonl")
SUMMARY = Path("state/lesson-thompson/.cache/status-summary")


def _arm(root: Path) -> tuple[float, float, int]:
    arm = json.loads((root / STATE).read_text())["arms"]["a.md"]
    return arm["alpha"], arm["beta"], arm["total_selections"]


def _recorded(tmp_path: Path) -> Path:
    root = judged_workspace(tmp_path)
    argv = ["record", "-w", str(root), "--session-id", "s3", "--journal", str(root / "j.md"), "--lessons", "a.md"]
    assert run_cli(*argv, "--reward", "0.5")[0] == 0
    # seed, floor 0.3, salience 1 (w 1): alpha 1 + 0.8 + 0.6 + 0.5, beta 1 + 0.2 + 0.4 + 0.5
    assert _arm(root) == pytest.approx((2.9, 2.1, 3))
    return root


def test_a_file_renamed_to_a_backup_and_a_new_one_started_changes_nothing(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    (root / RECORDS).rename(root / BAK)
    (root / RECORDS).write_text("")
    code, out, err = run_cli("status", "-w", str(root))
    assert code == 0 and "gptme-sessions records" not in err and "left as it is" not in err, err
    assert _arm(root) == pytest.approx((2.9, 2.1, 3))
    code, out, _ = run_cli("lint", "-w", str(root))
    assert "records-missing" not in out and "records-unreadable" not in out, out
    code, out, err = run_cli("show", "s1", "-w", str(root))
    assert code == 0 and "record s1 (session-records.jsonl.bak-1 line 1), joined by id" in out, out + err
    code, out, _ = run_cli("show", "s2", "-w", str(root), "--json")
    record = json.loads(out)["record"]
    assert (record["records_file"], record["line"], record["llm_judge_score"]) == (
        "session-records.jsonl.bak-1",
        2,
        0.6,
    )


def test_older_lines_moved_to_an_archive_change_nothing(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    lines = (root / RECORDS).read_text().splitlines(keepends=True)
    (root / ARCHIVE).write_text(lines[0])  # s1's
    (root / RECORDS).write_text(lines[1])  # s2's
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and "gptme-sessions records" not in err, err
    assert _arm(root) == pytest.approx((2.9, 2.1, 3))
    code, out, _ = run_cli("show", "s2", "-w", str(root))
    assert "record s2, joined by id" in out, out  # the active file's line: no file named


def test_a_warm_status_is_not_shown_after_an_archive_appears_or_changes(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    (root / RECORDS).write_text(json.dumps({"session_id": "s1", "llm_judge_score": 0.8}) + "\n")  # s2 has none
    assert run_cli("status", "-w", str(root))[0] == 0  # (says bandit-state.json is rewritten without s2's 0.6)
    code, before, err = run_cli("status", "-w", str(root))
    assert code == 0 and not err and (root / SUMMARY).exists(), err
    # s2 pending: alpha 1 + 0.8 + 0.5 = 2.3, beta 1 + 0.2 + 0.5 = 1.7
    assert _arm(root) == pytest.approx((2.3, 1.7, 2))
    (root / ARCHIVE).write_text(json.dumps({"session_id": "s2", "llm_judge_score": 0.6}) + "\n")  # only it is new
    code, appeared, err = run_cli("status", "-w", str(root))
    assert code == 0 and appeared != before, err
    assert _arm(root) == pytest.approx((2.9, 2.1, 3))  # as before the rotation
    (root / ARCHIVE).write_text(json.dumps({"session_id": "s2", "llm_judge_score": 0.1}) + "\n")  # the same size
    code, changed, err = run_cli("status", "-w", str(root))
    assert code == 0 and changed != appeared, err
    # alpha 1 + 0.8 + 0.1 + 0.5 = 2.4, beta 1 + 0.2 + 0.9 + 0.5 = 2.6
    assert _arm(root) == pytest.approx((2.4, 2.6, 3))
    (root / SUMMARY).unlink()
    assert run_cli("status", "-w", str(root))[1] == changed  # what a full run prints


def test_the_file_gone_and_its_rotated_files_holding_no_record_is_said(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    written = (root / STATE).read_bytes()
    (root / RECORDS).rename(root / BAK)
    (root / BAK).write_text("{not a record\n")
    code, _, err = run_cli("status", "-w", str(root))
    said = "(it is missing, and no record can be read from the rotated files beside it (session-records.jsonl.bak-1))"
    assert code == 0 and said in err and "left as it is" in err, err
    assert (root / STATE).read_bytes() == written
    (root / RECORDS).write_text("")
    code, _, err = run_cli("status", "-w", str(root))
    said = "(no record can be read from it or the rotated files beside it (session-records.jsonl.bak-1))"
    assert code == 0 and said in err, err
