"""Two workspaces (two event logs) and one gptme bandit-state.json between them: a file `export-gptme` of one
log wrote is another bandit's file to the other, whose `import-gptme` logs its arms as a prior. That log's
export onto the same file would write that prior back into it, the first log's own sessions inside it, under a
`created` the first log never wrote: its next `import-gptme` takes the file for another bandit's and counts its
own sessions a second time. So the export is refused in one line, nothing written. The numbers are worked out
by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, make_workspace, session
from tests.support.two_arms import LESSONS, A, B, ok, rows


def test_an_export_onto_another_logs_export_it_imported_is_refused(tmp_path: Path) -> None:
    # ws1: a in s1 (0.5) and s2 (1.0), salience 1 (w = 1): Beta(1 + 0.5 + 1.0, 1 + 0.5 + 0.0) = (2.5, 1.5) n 2
    one = make_workspace(tmp_path, LESSONS, events=[session("s1", 0.5, {A: 1.0}), session("s2", 1.0, {A: 1.0})])
    # ws2: b in t1 (1.0): Beta(2, 1) n 1
    two = make_workspace(tmp_path, LESSONS, events=[session("t1", 1.0, {B: 1.0})], name="ws2")
    shared = tmp_path / "gptme" / "bandit-state.json"
    shared.parent.mkdir()
    ok("export-gptme", str(shared), "-w", str(one))  # the file: a at (2.5, 1.5) n 2
    ok("import-gptme", str(shared), "-w", str(two))  # ws2: a's prior (2.5, 1.5) n 2, another bandit's evidence
    assert rows(two) == {A: (2.5, 1.5, 2), B: (2.0, 1.0, 1)}
    before, log_two = shared.read_bytes(), (two / LOG_REL).read_bytes()
    code, _, err = run_cli("export-gptme", str(shared), "-w", str(two))
    # before: written (a at ws1's (2.5, 1.5) n 2 under ws2's created), and ws1's next import took it for another
    # bandit's file: a's prior (2.5, 1.5) n 2 under s1 and s2 again, (4.0, 2.0) n 4
    assert code == 1 and "another lesson-credit workspace" in err and len(err.strip().splitlines()) == 1, err
    assert shared.read_bytes() == before and (two / LOG_REL).read_bytes() == log_two  # nothing written or logged
    ok("import-gptme", str(shared), "-w", str(one))  # the file as ws1 exported it: nothing new
    assert rows(one) == {A: (2.5, 1.5, 2), B: (1.0, 1.0, 0)}  # s1 and s2 once, as by hand above


def test_an_export_onto_another_logs_file_with_gptmes_sessions_imported_is_refused(tmp_path: Path) -> None:
    """gptme's bandit updated the file ws1 exported (a, reward 1.0: alpha + 1, n + 1); ws2 imports it (its
    prior, ws1's two sessions and gptme's one inside). ws2's export onto it is refused: ws1 would count its two
    sessions and gptme's twice."""
    one = make_workspace(tmp_path, LESSONS, events=[session("s1", 0.5, {A: 1.0}), session("s2", 1.0, {A: 1.0})])
    two = make_workspace(tmp_path, LESSONS, events=[session("t1", 1.0, {B: 1.0})], name="ws2")
    shared = tmp_path / "gptme" / "bandit-state.json"
    shared.parent.mkdir()
    ok("export-gptme", str(shared), "-w", str(one))
    state = json.loads(shared.read_text())  # gptme-sessions' update_session: alpha += 1.0, beta += 0.0
    arm = state["arms"][A]
    arm.update(
        alpha=arm["alpha"] + 1.0, total_selections=arm["total_selections"] + 1, last_updated="2026-12-06T11:00:00+00:00"
    )
    state["total_sessions"] += 1
    shared.write_text(json.dumps(state, indent=2) + "\n")
    ok("import-gptme", str(shared), "-w", str(two))
    assert rows(two)[A] == (3.5, 1.5, 3)  # ws1's (2.5, 1.5) n 2 + gptme's +1 / +0, n + 1
    code, _, err = run_cli("export-gptme", str(shared), "-w", str(two))
    assert code == 1 and "another lesson-credit workspace" in err, err
    ok("import-gptme", str(shared), "-w", str(one))  # gptme's session, as increments over the export
    assert rows(one) == {A: (3.5, 1.5, 3), B: (1.0, 1.0, 0)}  # s1, s2 and gptme's once


def test_a_file_holding_this_logs_export_back_from_another_log_is_not_imported(tmp_path: Path) -> None:
    """Two files: ws2 exports g2; ws1 imports it (a prior: t1 inside) and exports its posteriors to g1; ws2's import
    of g1 would take ws2's own session t1 a second time. g1 names the `created` of the files whose evidence it holds
    as imports (g2's), and ws2, which wrote g2, refuses it in one line, nothing logged."""
    one = make_workspace(tmp_path, LESSONS, events=[session("s1", 0.5, {A: 1.0})])  # a (1.5, 1.5) n 1
    two = make_workspace(tmp_path, LESSONS, events=[session("t1", 1.0, {B: 1.0})], name="ws2")  # b (2, 1) n 1
    g1, g2 = tmp_path / "g1" / "bandit-state.json", tmp_path / "g2" / "bandit-state.json"
    g1.parent.mkdir()
    g2.parent.mkdir()
    ok("export-gptme", str(g2), "-w", str(two))
    ok("import-gptme", str(g2), "-w", str(one))  # ws1: b's prior (2, 1) n 1 (t1)
    ok("export-gptme", str(g1), "-w", str(one))  # g1: a (1.5, 1.5) n 1 and b (2, 1) n 1, t1 inside
    log_two = (two / LOG_REL).read_bytes()
    code, _, err = run_cli("import-gptme", str(g1), "-w", str(two))
    # before: imported, b's prior (2, 1) n 1 replacing Beta(1, 1) under t1: b (3, 1) n 2, t1 counted twice
    assert code == 1 and "this workspace's own sessions" in err and len(err.strip().splitlines()) == 1, err
    assert (two / LOG_REL).read_bytes() == log_two
    assert rows(two) == {A: (1.0, 1.0, 0), B: (2.0, 1.0, 1)}
