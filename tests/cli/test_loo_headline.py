"""`loo`: the table and `loo --json` show one headline (the same numbers, the same order, the same
method), and say so in one line when no lesson is distinguishable from zero."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_run import run_cli
from tests.support.headline_logs import (
    NOTHING,
    X,
    documented_order,
    noise_workspace,
    parse_table,
    shown,
    two_by_two_workspace,
)


def test_table_and_json_show_the_same_headline(tmp_path: Path) -> None:
    root = two_by_two_workspace(tmp_path)
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write")
    assert code == 0, err
    code, js, err = run_cli("loo", "--workspace", str(root), "--no-write", "--json")
    assert code == 0, err
    results = json.loads(js)["results"]
    _, rows = parse_table(out)
    assert [row["lesson"] for row in rows] == documented_order(results)
    by_path = {r["lesson"]: r for r in results}
    for row in rows:
        effect = by_path[row["lesson"]]["effect"]
        assert row["effect"] == shown(effect)
        assert row["from"] in {"joint", "randomized", "later half", "group", "unidentified"}
    x = by_path[X]
    assert x["effect"]["method"] == "joint" and x["randomized"]["n_kept"] == 2
    assert x["joint"]["estimate"] == x["effect"]["estimate"]  # both stay available
    assert next(row for row in rows if row["lesson"] == X)["from"] == "joint"


def test_one_line_says_when_nothing_is_distinguishable(tmp_path: Path) -> None:
    root = noise_workspace(tmp_path)
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write")
    assert code == 0, err
    above, rows = parse_table(out)
    assert sum(NOTHING in line for line in above) == 1 and rows
    code, js, _ = run_cli("loo", "--workspace", str(root), "--no-write", "--json")
    meta = json.loads(js)["meta"]
    assert meta["distinguishable"] == 0 and NOTHING in meta["nothing_distinguishable"]
    # a log where a lesson does help: no such line
    helped = two_by_two_workspace(tmp_path)
    code, out, _ = run_cli("loo", "--workspace", str(helped), "--no-write")
    assert NOTHING not in out
    code, js, _ = run_cli("loo", "--workspace", str(helped), "--no-write", "--json")
    assert json.loads(js)["meta"]["nothing_distinguishable"] is None
