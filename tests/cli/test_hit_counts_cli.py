"""explain's keyword counts: exact from one pass, and plainly not counted past that pass's budget
(core/library/hit_counts.py, docs/format.md §3), the salience the same either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_credit.core.library import hit_counts
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import make_workspace, session

JOURNAL = "aaaa aaaa b"  # 11 characters
KEYWORDS = ["a", "aa", "b", "zzz"]  # 3 of 4 hit: salience 0.75


def _workspace(tmp_path: Path) -> Path:
    return make_workspace(
        tmp_path,
        {"n.md": (KEYWORDS, "active")},
        events=[session("s1", None, {"n.md": 0.75}, journal_path="j.md")],
        journals={"j.md": JOURNAL},
    )


def test_explain_counts_overlapping_keywords_as_str_count_does(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    code, out, err = run_cli("explain", "s1", "--workspace", str(root))
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("  hit ")]
    # `aa` in `aaaa` at 0 and 2 (1 and 3 overlap the one before), in the second at 5 and 7
    assert [line.split(":")[0] for line in lines] == [
        "  hit   'a' x8 at 0, 1, 2, 3, 5 ...",
        "  hit   'aa' x4 at 0, 2, 5, 7",
        "  hit   'b' x1 at 10",
    ]
    assert "not counted" not in out


def test_past_the_budget_explain_says_which_counts_were_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # occurrences the pass reports: `a` 8, `aa` 3 in each `aaaa` (6), `b` 1: 15, past a budget of 10; then the
    # first keyword (of 1 counted one at a time) is counted by itself, the others are not
    monkeypatch.setattr(hit_counts, "COUNT_WORK_FLOOR", 10)
    monkeypatch.setattr(hit_counts, "ONE_AT_A_TIME", 1)
    monkeypatch.setattr(hit_counts, "ONE_AT_A_TIME_CHARS", 0)
    root = _workspace(tmp_path)
    code, out, err = run_cli("explain", "s1", "--workspace", str(root))
    assert code == 0, err
    assert "salience 0.750" in out
    lines = out.splitlines()
    assert "  hit   'a' x8 at 0, 1, 2, 3, 5 ...: aaaa aaaa b" in lines
    assert "  hit   'aa' x? (not counted)" in lines and "  hit   'b' x? (not counted)" in lines
    assert "  miss  'zzz'" in lines
    (note,) = [line for line in lines if "not counted:" in line]
    assert note == (
        "  note: hit keywords not counted: together they occur more than once every 4 characters of the journal "
        "(and more than 10 times), past what counting them together may go through; the first ones (at least 1) "
        "were counted one at a time"
    )
    code, out, err = run_cli("explain", "s1", "--workspace", str(root), "--json")
    assert code == 0, err
    (lesson,) = json.loads(out)["lessons"]
    assert lesson["salience"] == 0.75
    assert lesson["keywords"] == [
        {"keyword": "a", "hit": True, "count": 8, "offsets": [0, 1, 2, 3, 5, 6, 7, 8]},
        {"keyword": "aa", "hit": True, "count": None, "offsets": [], "counted": False},
        {"keyword": "b", "hit": True, "count": None, "offsets": [], "counted": False},
        {"keyword": "zzz", "hit": False, "count": 0, "offsets": []},
    ]
    monkeypatch.setattr(hit_counts, "COUNT_WORK_FLOOR", 15)  # 15 occurrences: within it
    code, out, err = run_cli("explain", "s1", "--workspace", str(root))
    assert "  hit   'aa' x4 at 0, 2, 5, 7: aaaa aaaa b" in out.splitlines() and "not counted" not in out
