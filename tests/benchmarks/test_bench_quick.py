"""`python -m bench.run --quick` runs a case for each row of docs/performance.md's constant-factor table
and stays small enough for about a minute; nothing is timed here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.harness import FULL, QUICK

# each row of the constant-factor table: the case that measures it
CONSTANT_FACTOR_ROWS = {
    "record at 1M against gptme-sessions' update": "record_vs_gptme",
    "warm status at 1M against gptme-sessions' status": "status_vs_gptme",
    "status with the caches deleted (at 1M: --scale's scale_status_cold)": "status_cli",
    "the dashboard's peak memory with its fit": "dashboard_memory",
    "first paint against a bare Textual app": "tui_start",
    "loo --json": "analysis",
    "record through PostgreSQL against a plain INSERT": "write_pg",
}
DATABASE_CASES = {"write_pg"}  # each starts a PostgreSQL server of its own: full sizes only


def test_quick_runs_a_case_for_each_row_of_the_issue_but_the_database_one() -> None:
    from bench.run import CASES, quick_cases

    assert set(CONSTANT_FACTOR_ROWS.values()) <= set(CASES)
    quick = quick_cases()
    missing = [row for row, case in CONSTANT_FACTOR_ROWS.items() if case not in quick and case not in DATABASE_CASES]
    assert not missing, missing
    assert not DATABASE_CASES & set(quick)
    assert set(quick_cases(["flat"])) == set(CASES)  # --quick --only NAME: any case


def test_the_gptme_cases_compare_on_the_same_arms_at_a_million_sessions() -> None:
    # the issue's rows are at 1,000,000 sessions and 1,000 arms; --quick uses flat's big workspace
    assert FULL["gptme"]["sessions"] == 1_000_000 and FULL["gptme"]["lessons"] == 1000
    flat = QUICK["flat"]
    assert (QUICK["gptme"]["lessons"], QUICK["gptme"]["sessions"]) == (flat["lessons"], flat["big"])


def test_the_gptme_baseline_updates_the_arms_named_and_writes_the_whole_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.baselines import gptme_status_main, gptme_update_main

    path = tmp_path / "bandit-state.json"
    arm = {"alpha": 3.0, "beta": 2.0, "total_selections": 3, "total_rewards": 2, "last_updated": ""}
    path.write_text(
        json.dumps({"arms": {"a": {"arm_id": "a", **arm}, "b": {"arm_id": "b", **arm}}, "total_sessions": 4})
    )
    gptme_update_main(str(path), "0.6", "a", "c")
    state = json.loads(path.read_text())
    # a: 3 + 0.6, 2 + 0.4, one more selection, rewarded (0.6 > 0.5); c: new at Beta(1, 1), then the same
    assert [state["arms"]["a"][k] for k in ("alpha", "beta", "total_selections", "total_rewards")] == [3.6, 2.4, 4, 3]
    assert [state["arms"]["c"][k] for k in ("alpha", "beta", "total_selections", "total_rewards")] == [1.6, 1.4, 1, 1]
    assert state["arms"]["b"]["alpha"] == 3.0 and state["total_sessions"] == 5
    assert path.read_text().startswith('{\n  "arms"')  # indented as gptme-sessions writes it
    capsys.readouterr()
    gptme_status_main(str(path))
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line[:1] in "abc" and " " in line]
    assert rows == ["a", "b", "c"]  # by mean: 3.6/6 = .6, 3/5 = .6 (a first: stable), 1.6/3 = .53
