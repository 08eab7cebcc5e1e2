"""`lesson-credit loo`: --json prints the file it writes, --no-write writes nothing, the table
lists the lessons with too little data (docs/format.md §8, on the crafted log of tests/core/test_analysis.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import run_cli
from tests.support.crafted_loo import LESSONS, A, B, C, D, crafted_events, crafted_workspace
from tests.support.engine_helpers import log_bytes, make_workspace, session


@pytest.fixture
def crafted(tmp_path: Path) -> Path:
    return crafted_workspace(tmp_path)


def state_listing(root: Path) -> dict[str, bytes]:
    """Files under state/, except derived read caches (.cache/), which hold nothing the log does not."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in (root / "state").rglob("*")
        if p.is_file() and ".cache" not in p.relative_to(root).parts
    }


def test_cli_loo_json_prints_the_written_file(crafted: Path) -> None:
    code, out, err = run_cli("loo", "--workspace", str(crafted), "--json")
    assert code == 0, err
    written = (crafted / "state" / "lesson-thompson" / "loo-results.json").read_text()
    assert json.loads(out) == {**json.loads(written), "warnings": []}
    assert json.loads(out)["results"][0]["lesson"] in {A, B, C, D}


def test_cli_loo_no_write_writes_nothing(crafted: Path) -> None:
    before = state_listing(crafted)
    log_before = log_bytes(crafted)
    code, out, err = run_cli("loo", "--workspace", str(crafted), "--json", "--no-write", "--min-with", "3")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["meta"]["min_with"] == 3
    assert {r["lesson"]: r["p_value_approx"] is not None for r in payload["results"]}[C]
    code, out, err = run_cli("loo", "--workspace", str(crafted), "--no-write")
    assert code == 0, err
    assert "written to" not in out
    assert not (crafted / "state" / "lesson-thompson" / "loo-results.json").exists()
    assert state_listing(crafted) == before
    assert log_bytes(crafted) == log_before


def test_cli_loo_table_lists_insufficient_rows(crafted: Path) -> None:
    code, out, err = run_cli("loo", "--workspace", str(crafted))
    assert code == 0, err
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith(("tools/", "workflow/"))}
    assert set(lines) == {A, B, C, D}
    assert "insufficient data" in lines[C] and "insufficient data" not in lines[A]
    assert "+0.300" in lines[A]
    assert "written to" in out


@pytest.mark.parametrize("columns", ["80", "200"])
def test_cli_loo_table_counts_sessions_that_included_a_lesson_during_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    """Two graded sessions included C during them (`"included": "during"`): --json's during n is 2 for C and 0
    for the others, and the table shows the same count in a `during` column, fitting 80 columns (it had none)."""
    events = crafted_events()
    for i, reward in enumerate([0.2, 0.4]):
        events.append(session(f"d{i}", reward, {B: 0.5}))
        events[-1]["lessons"].append({"path": C, "salience": 0.5, "included": "during"})
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    monkeypatch.setenv("COLUMNS", columns)
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write")
    assert code == 0, err
    table = out[out.index("\nlesson ") + 1 :].split("\n\n")[0].splitlines()
    assert max(map(len, table)) <= int(columns), table
    start = table[0].index(" during") + 1  # a column of counts, right-aligned under its header
    rows = [line for line in table if line.startswith(("tools/", "workflow/"))]
    cells = {line.split()[0]: line[start : start + len("during")].strip() for line in rows}
    assert cells == {A: "0", B: "0", C: "2", D: "0"}
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write", "--json")
    assert {r["lesson"]: r["during"]["n"] for r in json.loads(out)["results"]} == {A: 0, B: 0, C: 2, D: 0}
