"""A deleted log is said, naming its path, and bandit-state.json is not wiped by a fold of nothing
: `status` warns, `lint` has an error finding; the dashboard: tests/tui/test_tui_trust.py. A log
emptied (truncated to nothing, or holding no readable event) is the same fold of nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, make_workspace, session


def _ws_without_its_log(tmp_path: Path) -> tuple[Path, bytes]:
    root = make_workspace(
        tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {"tools/git.md": 0.5})], journals={"j.txt": BASIC_JOURNAL}
    )
    assert run_cli("record", "--workspace", str(root), "--session-id", "s2", "--journal", str(root / "j.txt"),
                   "--lessons", "tools/git.md", "--reward", "0.6")[0] == 0  # fmt: skip
    state = (root / STATE_REL).read_bytes()
    assert json.loads(state)["arms"]["tools/git.md"]["total_selections"] == 2  # what gptme reads
    (root / LOG_REL).unlink()
    return root, state


def test_status_says_the_log_is_missing_and_keeps_the_state_file(tmp_path: Path) -> None:
    root, state = _ws_without_its_log(tmp_path)
    code, out, err = run_cli("status", "--workspace", str(root))
    assert code == 0 and "tools/git.md" in out
    assert err == (
        f"warning: {root / LOG_REL}: the event log is missing (deleted or moved?); every lesson shows as never used, "
        "and bandit-state.json is left as it is\n"
    )
    assert (root / STATE_REL).read_bytes() == state  # not rewritten from an empty fold
    code, out, _ = run_cli("status", "--workspace", str(root), "--json")
    assert code == 0 and any("the event log is missing" in w for w in json.loads(out)["warnings"])


def test_lint_names_the_missing_log(tmp_path: Path) -> None:
    root, state = _ws_without_its_log(tmp_path)
    code, out, _ = run_cli("lint", "--workspace", str(root), "--json")
    findings = {f["code"]: f for f in json.loads(out)["findings"]}
    assert code == 1 and findings["log-missing"]["severity"] == "error"
    assert str(root / LOG_REL) in findings["log-missing"]["message"]
    assert "stale-bandit-state" not in findings  # (whose advice, `status`, would have wiped it)
    assert (root / STATE_REL).read_bytes() == state


def test_a_fresh_workspace_is_not_a_missing_log(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, BASIC_LESSONS)
    code, _, err = run_cli("status", "--workspace", str(root))
    assert (code, err) == (0, "")


def test_recording_again_starts_a_new_log(tmp_path: Path) -> None:
    root, _ = _ws_without_its_log(tmp_path)
    code, _, err = run_cli("record", "--workspace", str(root), "--session-id", "s3", "--journal", str(root / "j.txt"),
                           "--lessons", "tools/git.md", "--reward", "0.5")  # fmt: skip
    assert (code, err) == (0, "")
    assert json.loads((root / STATE_REL).read_bytes())["arms"]["tools/git.md"]["total_selections"] == 1


@pytest.mark.parametrize("content", [b"", b"\n\n", b"not json\n"], ids=["empty", "blank-lines", "unreadable"])
def test_an_emptied_log_keeps_the_state_file(tmp_path: Path, content: bytes) -> None:
    """`status` on a log truncated to nothing rewrote bandit-state.json with `"arms": {}` (exit 0):
    a read command threw away the only other copy of the posteriors."""
    root, state = _ws_without_its_log(tmp_path)
    (root / LOG_REL).write_bytes(content)
    code, out, err = run_cli("status", "--workspace", str(root))
    assert code == 0 and "tools/git.md" in out
    assert (
        f"{root / LOG_REL}: the event log holds no session (emptied?)" in err
        and "bandit-state.json is left as it is" in err
    )
    assert (root / STATE_REL).read_bytes() == state
    code, out, _ = run_cli("lint", "--workspace", str(root), "--json")
    findings = {f["code"]: f for f in json.loads(out)["findings"]}
    assert code == 1 and findings["log-missing"]["severity"] == "error"
    assert "stale-bandit-state" not in findings
    assert (root / STATE_REL).read_bytes() == state


def test_sessions_without_lessons_are_not_an_emptied_log(tmp_path: Path) -> None:
    """Sessions recorded with no lesson (a baseline period) make no arm: the log was taken for emptied
    ('holds no session'), lint had a log-missing error, and bandit-state.json was never rewritten."""
    root = make_workspace(tmp_path, BASIC_LESSONS, journals={"j.txt": BASIC_JOURNAL})
    for sid in ("s1", "s2"):
        argv = ["record", "-w", str(root), "--session-id", sid, "--journal", str(root / "j.txt"), "--reward", "0.6"]
        code, _, err = run_cli(*argv, "--lessons")
        assert (code, err) == (0, ""), err
    assert json.loads((root / STATE_REL).read_bytes())["total_sessions"] == 2
    code, _, err = run_cli("status", "--workspace", str(root))
    assert (code, err) == (0, "")
    code, out, _ = run_cli("lint", "--workspace", str(root), "--json")
    assert "log-missing" not in {f["code"] for f in json.loads(out)["findings"]}


def test_export_onto_the_state_file_with_the_log_gone_refuses(tmp_path: Path) -> None:
    """`export-gptme state/lesson-thompson/bandit-state.json` (the advice to put the log's numbers back)
    with the log deleted wrote the empty fold over the file: every arm gone."""
    root, state = _ws_without_its_log(tmp_path)
    code, out, err = run_cli("export-gptme", "--workspace", str(root), str(root / STATE_REL))
    assert code == 1 and out == "" and len(err.splitlines()) == 1 and "the event log is missing" in err, err
    assert (root / STATE_REL).read_bytes() == state
