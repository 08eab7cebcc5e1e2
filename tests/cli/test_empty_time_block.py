"""A whole time block of the log that injected no lesson (the first sessions of a workspace whose library came
later, a period with a broken lessons folder) made `loo` and `select` exit 70 with an internal error: the baseline
steps' finder indexed past an empty block. Both answer now."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_fixtures import make_ws, run, run_json, session


def sessions() -> list[dict[str, object]]:
    """s0-s14 with no lesson (0.5); then a.md in every odd session from s15 (0.7), the even ones without (0.5)."""
    out = [session(f"s{i}", 0.5, {}) for i in range(15)]
    out += [session(f"s{i}", 0.7 if i % 2 else 0.5, {"a.md": 0.5} if i % 2 else {}) for i in range(15, 30)]
    return out


def test_loo_and_select_answer_after_a_block_with_no_lesson(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_ws(tmp_path, {"a.md": ["alpha"]}, sessions())
    (root / "ctx").write_text("alpha\n", encoding="utf-8")
    results = run_json(capsys, "--workspace", str(root), "loo", "--no-write")
    (lesson,) = [r for r in results["results"] if r["lesson"] == "a.md"]
    # a.md in s15, s17, ..., s29 (8 sessions, all 0.7), the other 22 at 0.5: +0.2 whatever the baselines
    assert (lesson["n_with"], lesson["n_without"]) == (8, 22)
    assert lesson["effect"]["estimate"] == pytest.approx(0.2, abs=1e-3)
    code, out, err = run(capsys, "--workspace", str(root), "select", "--context", str(root / "ctx"), "--dry-run")
    assert code == 0, err
    assert "a.md" in out
