"""Randomized dropout (lesson_credit.core.analysis.dropout): gptme's log format read into per-lesson kept-minus-withheld
estimates, by hand; bounded reading. `select --dropout` and `loo --json` are in tests/cli/test_dropout_cli.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from scipy import stats

from lesson_credit.core.analysis import dropout as dropout_mod
from lesson_credit.core.analysis.dropout import read_dropout_logs
from lesson_credit.core.workspace import Workspace
from tests.support.dropout_logs import A, B, C, dropout_workspace, gptme_line
from tests.support.engine_helpers import fixed_clock


def test_dropout_log_in_gptmes_shape_gives_the_hand_computed_estimate(tmp_path: Path) -> None:
    root = dropout_workspace(tmp_path)
    ws = Workspace(root, clock=fixed_clock)
    rows = {r.path: r for r in ws.loo(write=False)}
    a = rows[A].randomized
    assert a is not None
    assert (a.n_kept, a.n_withheld) == (3, 2)
    # kept 0.8 0.6 0.7 (mean 0.7, variance 0.01); withheld 0.4 0.5 (mean 0.45, variance 0.005) -> +0.25
    assert a.estimate == pytest.approx(0.25)
    # moderated variances: pooled over the five graded dropout sessions (mean 0.6) = 0.1 / 4 = 0.025
    # kept (2 * 0.01 + 4 * 0.025) / 6 = 0.02, /3 = 0.0066667; withheld (0.005 + 0.1) / 5 = 0.021, /2 = 0.0105
    # se = sqrt(0.0171667) = 0.131022; df = 0.0171667^2 / (0.0066667^2 / 6 + 0.0105^2 / 5) = 10.004
    half = stats.t.ppf(0.975, 10.004) * 0.131022
    assert a.ci_low == pytest.approx(0.25 - half, rel=1e-4)
    assert a.ci_high == pytest.approx(0.25 + half, rel=1e-4)
    b = rows.get(B)
    assert b is None or b.randomized is None or (b.randomized.estimate is None and b.randomized.n_withheld == 1)
    c_trial = rows[C].randomized
    assert c_trial is not None and c_trial.n_withheld == 0
    # 3 kept against 2 withheld: too few for the trial to be the headline (MIN_RANDOMIZED each); it stays beside it
    joint = rows[A].joint
    a_effect = rows[A].effect
    assert joint is not None and a_effect is not None and a_effect.method == "joint"
    assert rows[A].headline == joint.estimate
    assert ws.loo_run(write=False)[1]["dropout_sessions"] == 7


def test_reading_is_bounded_and_reports_bad_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "ok.jsonl").write_text(json.dumps(gptme_line("ok", ["a.md"], ["b.md"])) + "\nnot json\n[1]\n")
    (folder / "big.jsonl").write_text(json.dumps(gptme_line("big", ["a.md"], [])) + "\n" + " " * 600)
    (folder / "notes.txt").write_text("ignored: not .jsonl")
    target = tmp_path / "elsewhere.jsonl"
    target.write_text(json.dumps(gptme_line("link", ["a.md"], [])) + "\n")
    os.symlink(target, folder / "link.jsonl")
    os.mkfifo(folder / "fifo.jsonl")
    monkeypatch.setattr(dropout_mod, "MAX_FILE_BYTES", 400)
    log = read_dropout_logs(folder, lambda raw: raw.rsplit("lessons/", 1)[-1])
    assert set(log.sessions) == {"ok"}
    assert log.sessions["ok"].kept == {"a.md"} and log.sessions["ok"].withheld == {"b.md"}
    text = "\n".join(log.problems)
    for name in ("big.jsonl", "link.jsonl", "fifo.jsonl", "ok.jsonl:2", "ok.jsonl:3"):
        assert name in text
    assert read_dropout_logs(tmp_path / "missing", str).sessions == {}
