"""Two workspaces (two event logs) and one gptme bandit-state.json between them: a file `export-gptme` of one
log wrote is another bandit's file to the other, whose `import-gptme` logs its arms as a prior. That log's
export onto the same file would write that prior back into it, the first log's own sessions inside it, under a
`created` the first log never wrote: its next `import-gptme` takes the file for another bandit's and counts its
own sessions a second time. So the export is refused in one line, nothing written. The numbers are worked out
by hand in the comments."""

from __future__ import annotations

import datetime as dt
import json
from functools import partial
from pathlib import Path

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, STATE_REL, make_workspace, session
from tests.support.two_arms import GPTME_TIME, LESSONS, A, B, ok, rows

START = dt.datetime(2026, 12, 6, 9, 0, tzinfo=dt.UTC)


def at(minute: int) -> dt.datetime:
    """A clock `minute` minutes after START (steps of a person's, a minute apart)."""
    return START + dt.timedelta(minutes=minute)


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


def test_a_file_holding_this_workspaces_own_file_back_from_another_log_is_not_imported(tmp_path: Path) -> None:
    """ws1 imports ws2's own bandit-state.json (a prior: t1 inside) and exports to g1; once ws2 has recorded t2 (its
    own file rewritten), its import of g1 took t1 a second time: g1 names the own file's `created` then, which the
    workspace knows from its kept copies. (Each step a minute apart, as a person's would be.)"""
    one = make_workspace(tmp_path, LESSONS, journals={"j.md": "alpha"})
    two = make_workspace(tmp_path, LESSONS, journals={"j.md": "beta"}, name="ws2")
    g1 = tmp_path / "g1" / "bandit-state.json"
    g1.parent.mkdir()
    record = ("record", "--journal", "j.md", "--reward", "1", "--session-id")
    steps = [
        (*record, "s1", "--lessons", A, "-w", str(one)),  # a (2, 1) n 1
        (*record, "t1", "--lessons", B, "-w", str(two)),  # b (2, 1) n 1, ws2's own file written
        ("import-gptme", str(two / STATE_REL), "-w", str(one)),  # ws1: b's prior (2, 1) n 1
        ("export-gptme", str(g1), "-w", str(one)),
        (*record, "t2", "--lessons", B, "-w", str(two)),  # b (3, 1) n 2
    ]
    for minute, argv in enumerate(steps):
        code, _, err = run_cli(*argv, clock=partial(at, minute))
        assert code == 0, err
    log_two = (two / LOG_REL).read_bytes()
    code, _, err = run_cli("import-gptme", str(g1), "-w", str(two), clock=partial(at, 9))
    # before: imported, b's prior (2, 1) n 1 under t1 and t2: (4, 1) n 3, t1 counted twice
    assert code == 1 and "this workspace's own sessions" in err and len(err.strip().splitlines()) == 1, err
    assert (two / LOG_REL).read_bytes() == log_two and rows(two)[B] == (3.0, 1.0, 2)


def test_a_file_whose_imported_prior_was_replaced_names_only_the_one_in_force(tmp_path: Path) -> None:
    """ws1 imports ws2's export g2, then another bandit's file g3 replacing b's prior: g1, exported after, holds g3's
    evidence, not g2's, and named both; ws2's import of it was refused as holding its own sessions."""
    one = make_workspace(tmp_path, LESSONS, events=[session("s1", 0.5, {A: 1.0})])
    two = make_workspace(tmp_path, LESSONS, events=[session("t1", 1.0, {B: 1.0})], name="ws2")
    g1, g2, g3 = (tmp_path / name / "bandit-state.json" for name in ("g1", "g2", "g3"))
    for path in (g1, g2, g3):
        path.parent.mkdir()
    ok("export-gptme", str(g2), "-w", str(two))
    ok("import-gptme", str(g2), "-w", str(one))
    other = {
        "alpha": 5.0,
        "beta": 2.0,
        "total_selections": 5,
        "total_rewards": 4,
        "last_updated": "2026-11-01T00:00:00+00:00",
    }
    g3.write_text(json.dumps({"arms": {B: other}, "total_sessions": 5, "created": "2026-11-01T00:00:00+00:00"}))
    ok("import-gptme", str(g3), "-w", str(one))  # b's prior now g3's (5, 2) n 5
    assert rows(one)[B] == (5.0, 2.0, 5)
    ok("export-gptme", str(g1), "-w", str(one))
    assert json.loads(g1.read_text())["lesson_credit_holds"] == ["2026-11-01T00:00:00+00:00"]
    ok("import-gptme", str(g1), "-w", str(two))  # g3's evidence and s1, none of ws2's own


def test_a_file_holding_an_arm_of_an_earlier_import_of_a_file_imported_again_names_that_file(tmp_path: Path) -> None:
    """ws2 imports ws1's export g1 (a and b), then g1 again once gptme's prune dropped b there (its stamp over 90
    days old) and gptme's session moved a: b's prior in force is still the first import's, ws1's s1 inside. Then
    another bandit's file y replaces a's prior. g2, exported after, named y's `created` alone, and ws1's import of
    it took s1 a second time: b (3, 1) n 2 for its one session's (2, 1) n 1."""
    events = [session("s1", 1.0, {B: 1.0}, timestamp="2026-06-01T10:00:00Z"), session("s2", 1.0, {A: 1.0})]
    one = make_workspace(tmp_path, LESSONS, events=events)  # a (2, 1) n 1, b (2, 1) n 1
    two = make_workspace(tmp_path, LESSONS, name="ws2")
    g1, g2, y = (tmp_path / name / "bandit-state.json" for name in ("g1", "g2", "y"))
    for path in (g1, g2, y):
        path.parent.mkdir()
    ok("export-gptme", str(g1), "-w", str(one))
    ok("import-gptme", str(g1), "-w", str(two))  # b's prior (2, 1) n 1: s1
    state = json.loads(g1.read_text())
    del state["arms"][B]  # gptme's prune (b's stamp is s1's, 2026-06-01), then its session on a at reward 1
    state["arms"][A].update(alpha=3.0, total_selections=2, total_rewards=2, last_updated=GPTME_TIME)
    state["total_sessions"] += 1
    g1.write_text(json.dumps(state, indent=2) + "\n")
    ok("import-gptme", str(g1), "-w", str(two))  # a's prior (3, 1) n 2; b's still the first import's
    other = {"arm_id": A, "alpha": 1.0, "beta": 2.0, "total_selections": 1, "total_rewards": 0}
    y.write_text(json.dumps({"arms": {A: other}, "total_sessions": 1, "created": GPTME_TIME}))
    ok("import-gptme", str(y), "-w", str(two))  # a's prior now y's (1, 2) n 1
    assert rows(two) == {A: (1.0, 2.0, 1), B: (2.0, 1.0, 1)}
    ok("export-gptme", str(g2), "-w", str(two))
    assert json.loads(g2.read_text())["lesson_credit_holds"] == sorted([state["created"], GPTME_TIME])
    log_one = (one / LOG_REL).read_bytes()
    code, _, err = run_cli("import-gptme", str(g2), "-w", str(one))
    assert code == 1 and "this workspace's own sessions" in err and (one / LOG_REL).read_bytes() == log_one, err
    assert rows(one) == {A: (2.0, 1.0, 1), B: (2.0, 1.0, 1)}
