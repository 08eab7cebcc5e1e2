"""gptme's randomized-dropout logs as tests write them: records in gptme's exact shape and a
workspace whose kept-minus-withheld estimate is worked out by hand (tests/core/test_dropout.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.engine_helpers import make_workspace, session

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
    # A kept in s1 s2 (0.8 0.6), withheld in s3 s4 s5 (0.7 0.4 0.5); s3 logs two calls: A withheld in the
    # first and kept in the second -> withheld (the first coin). B withheld in s1 only: too few for an estimate.
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
