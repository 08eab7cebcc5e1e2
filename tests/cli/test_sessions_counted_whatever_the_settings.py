"""bandit-state.json's `total_sessions` counts the sessions the log gave a result, whatever config.toml says now
(docs/format.md §7): gptme's bandit counted them and never counts back, and the file's count is a floor a rewrite
keeps. Before, a session counted only while the priority read its score's source (or `[outcomes]` mapped its
word): `[rewards] priority` or `[outcomes]` edited took sessions out of the log's count, the file's number held
the count up, and the next session graded was swallowed by it (S1, priority changed, S2: 1, not 2); the file
written again from the log then counted fewer sessions than gptme had (it went down)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_retracted_sessions_counted import ok, record, total, workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import CONFIG_REL, STATE_REL
from tests.support.records_helpers import judged_workspace


def test_a_priority_leaving_out_a_sessions_source_keeps_it_counted(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    record(root, "S1", "0.8")  # the heuristic's (a record's own reward without --grader)
    assert total(root) == 1
    (root / CONFIG_REL).write_text('[rewards]\npriority = ["human"]\n')  # S1 pending from now on
    ok("status", "-w", str(root))
    assert total(root) == 1
    record(root, "S2", "0.6", "--grader", "alice")
    assert total(root) == 2  # S1 and S2 (was 1: S2 swallowed by the file's count)
    (root / STATE_REL).unlink()  # derived: written again from the log, the same count
    record(root, "S3")  # pending: adds nothing
    assert total(root) == 2  # (was 1)
    (root / CONFIG_REL).write_text("")  # the default priority back: still S1 and S2
    ok("status", "-w", str(root))
    assert total(root) == 2


def test_an_outcome_word_no_longer_mapped_keeps_its_session_counted(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / CONFIG_REL).parent.mkdir(parents=True, exist_ok=True)
    (root / CONFIG_REL).write_text("[outcomes]\npartial = 0.5\n")
    record(root, "S1", "partial")
    assert total(root) == 1
    (root / CONFIG_REL).write_text("")  # `partial` unmapped: S1 pending
    record(root, "S2", "0.6")
    assert total(root) == 2  # (was 1)
    (root / STATE_REL).unlink()
    record(root, "S3")
    assert total(root) == 2  # (was 1)


def test_a_record_of_unknown_outcome_is_not_counted(tmp_path: Path) -> None:
    """`unknown` is no result (docs/format.md §5.2: it always leaves the session pending)."""
    root = workspace(tmp_path)
    record(root, "S1", "unknown")
    record(root, "S2", "0.6")
    assert total(root) == 1


def _record_judged(root: Path, session_id: str) -> None:
    argv = ["record", "-w", str(root), "--session-id", session_id, "--journal", str(root / "j.md"), "--lessons"]
    code, _, err = run_cli(*argv, "a.md", "--reward", "0.5")
    assert code == 0, err


def test_records_scores_left_out_of_the_priority_stay_counted(tmp_path: Path) -> None:
    """The judge's scores of s1 and s2 come from gptme-sessions records, not the log."""
    root = judged_workspace(tmp_path)
    _record_judged(root, "s3")
    assert total(root) == 3
    (root / CONFIG_REL).write_text('[rewards]\npriority = ["human", "heuristic"]\n')  # the judge's left out
    _record_judged(root, "s4")
    assert total(root) == 4  # s1 to s4 (was 3: s4 swallowed)
