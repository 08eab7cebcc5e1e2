"""Randomized dropout (core.dropout): gptme's log format read into per-lesson kept-minus-withheld
estimates, by hand; bounded reading; `select --dropout` writing the same format."""

from __future__ import annotations

import io
import json
import math
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import fixed_clock, make_workspace, session
from scipy import stats

from cli.main import main
from core import attribution
from core import dropout as dropout_mod
from core.dropout import read_dropout_logs
from core.workspace import Workspace

A, B, C = "tools/a.md", "tools/b.md", "workflow/c.md"
LESSONS = {A: (["alpha"], "active"), B: (["beta"], "active"), C: (["gamma"], "active")}
AGENT = "/home/bob/agent/lessons/"  # gptme logs absolute paths


def gptme_line(sid: str, kept: list[str], withheld: list[str], eps: float = 0.3) -> dict[str, Any]:
    """One record exactly as gptme's auto-include writes it."""
    return {
        "ts": 1764500000.0,
        "session_id": sid,
        "epsilon": eps,
        "withheld": [
            {"path": AGENT + p, "title": p, "policy_class": "holdout", "policy_version": "v1"} for p in withheld
        ],
        "matched": [{"path": AGENT + p, "title": p, "policy_class": "holdout", "policy_version": "v1"} for p in kept],
    }


def write_logs(root: Path, records: dict[str, list[dict[str, Any]]]) -> Path:
    folder = root / "state" / "lesson-dropout"
    folder.mkdir(parents=True, exist_ok=True)
    for sid, lines in records.items():
        (folder / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return folder


def dropout_workspace(tmp_path: Path) -> Path:
    # A kept in s1 s2 s3 (0.8 0.6 0.7), withheld in s4 s5 (0.4 0.5); s3 logs two calls: A withheld in the
    # first and kept in the second -> kept. B withheld in s1 only: too few for an estimate.
    # s6 is pending and s7 is not in the log: neither counts.
    rewards = {"s1": 0.8, "s2": 0.6, "s3": 0.7, "s4": 0.4, "s5": 0.5, "s6": None}
    events = [session(sid, r, {A: 0.5} if sid in ("s1", "s2", "s3", "s6") else {C: 0.5}) for sid, r in rewards.items()]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    write_logs(
        root,
        {
            "s1": [gptme_line("s1", [A], [B])],
            "s2": [gptme_line("s2", [A], [])],
            "s3": [gptme_line("s3", [], [A]), gptme_line("s3", [A], [])],
            "s4": [gptme_line("s4", [C], [A])],
            "s5": [gptme_line("s5", [C], [A])],
            "s6": [gptme_line("s6", [], [A])],
            "s7": [gptme_line("s7", [A], [])],
        },
    )
    return root


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
    assert rows[C].randomized is not None and rows[C].randomized.n_withheld == 0
    assert rows[A].headline == pytest.approx(0.25)  # randomized evidence leads
    assert ws.loo_meta["dropout_sessions"] == 7


def test_loo_json_carries_randomized_only_where_dropout_logs_exist(tmp_path: Path) -> None:
    root = dropout_workspace(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["loo", "--workspace", str(root), "--json"])
    assert code == 0, err.getvalue()
    rows = {r["path"]: r for r in json.loads(out.getvalue())["results"]}
    assert rows[A]["randomized"]["estimate"] == pytest.approx(0.25)
    assert set(rows[A]["randomized"]) == {"estimate", "ci_low", "ci_high", "n_kept", "n_withheld"}
    plain = make_workspace(tmp_path, lessons=LESSONS, events=[session("x", 0.5, {A: 0.5})], name="plain")
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert main(["loo", "--workspace", str(plain), "--json", "--no-write"]) == 0
    assert all("randomized" not in r for r in json.loads(out.getvalue())["results"])


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


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_select_dropout_writes_gptmes_format(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS)
    context = tmp_path / "ctx.txt"
    context.write_text("alpha beta gamma")
    code, out, err = run_cli(
        "select", "-w", str(root), "--context", str(context), "--session-id", "t1", "--seed", "3", "--dropout", "1",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    payload = json.loads(out)
    assert payload["selected"] == [] and sorted(payload["withheld"]) == sorted([A, B, C])
    assert all(p == 0.0 for p in payload["propensity"].values())  # withheld for sure: never injected
    line = json.loads((root / "state" / "lesson-dropout" / "t1.jsonl").read_text())
    assert line["session_id"] == "t1" and line["epsilon"] == 1.0 and line["matched"] == []
    assert sorted(w["path"] for w in line["withheld"]) == sorted([A, B, C])
    assert {w["title"] for w in line["withheld"]} == {f"Lesson {p}" for p in (A, B, C)}
    assert isinstance(line["ts"], float)
    ws = Workspace(root, clock=fixed_clock)
    assert attribution.dropout_log(ws.root, ws.library()).sessions["t1"].withheld == {A, B, C}
    # epsilon 0.5 over many draws: about half withheld, the selection event shows only the kept ones
    withheld = kept = 0
    for i in range(40):
        code, out, err = run_cli(
            "select", "-w", str(root), "--context", str(context), "--session-id", f"h{i}", "--seed", str(i),
            "--dropout", "0.5", "--json",
        )  # fmt: skip
        assert code == 0, err
        payload = json.loads(out)
        withheld += len(payload["withheld"])
        kept += len(payload["selected"])
        assert math.isclose(sum(payload["propensity"].values()), 3 * 0.5, rel_tol=1e-9)  # k >= 3: all chosen
    assert kept + withheld == 120 and 40 < withheld < 80
    assert not (root / "state" / "lesson-dropout" / "nodrop.jsonl").exists()
    code, _, _ = run_cli("select", "-w", str(root), "--context", str(context), "--session-id", "nodrop")
    assert code == 0 and not (root / "state" / "lesson-dropout" / "nodrop.jsonl").exists()


@pytest.mark.parametrize("bad", ["a/b", "..", "x\\y"])
def test_select_dropout_refuses_ids_that_cannot_name_a_file(tmp_path: Path, bad: str) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS)
    context = tmp_path / "ctx.txt"
    context.write_text("alpha")
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    args = ("--context", str(context), "--session-id", bad, "--dropout", "0.2")
    code, out, err = run_cli("select", "-w", str(root), *args)
    assert code == 1 and "dropout log" in err and len(err.strip().splitlines()) == 1
    assert not log.exists() or b"selection" not in log.read_bytes()
    with pytest.raises(SystemExit) as usage:
        run_cli("select", "-w", str(root), "--context", str(context), "--dropout", "1.5")
    assert usage.value.code == 2
