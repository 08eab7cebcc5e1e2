"""Workspaces with gptme-sessions records and trajectories that the core, CLI and dashboard tests share."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.support.engine_helpers import grade, make_workspace, session

AGREEMENT_LESSONS = {"a.md": (["alpha"], "active")}
RECORDS = Path("state/sessions/session-records.jsonl")
HUMAN = [0.9, 0.2, 0.7, 0.4, 1.0]  # s1..s5 by manual; s6 by manual only, s7 by the judge only
JUDGE = [0.8, 0.6, 0.4, 0.3, 0.9]


def agreement_workspace(tmp_path: Path) -> Path:
    """s1-s3 in category tools, s4-s5 workflow. The judge's s1-s3 come from gptme-sessions records, its
    s4-s5 from judge grade events; bob graded s1 and s2 before manual did (manual's are in force)."""
    cats = ["tools", "tools", "tools", "workflow", "workflow", "tools", "tools"]
    events: list[dict[str, object]] = [session(f"s{i + 1}", None, {"a.md": 1.0}, category=cats[i]) for i in range(7)]
    events += [grade("s1", 0.8, "bob"), grade("s2", 0.3, "bob")]
    events += [grade(f"s{i + 1}", h, "manual") for i, h in enumerate(HUMAN)]
    events += [grade("s6", 0.5, "manual"), grade("s4", 0.3, "judge"), grade("s5", 0.9, "judge")]
    root = make_workspace(tmp_path, AGREEMENT_LESSONS, events)
    records = root / "state/sessions/session-records.jsonl"
    records.parent.mkdir(parents=True)
    rows = [("s1", 0.8), ("s2", 0.6), ("s3", 0.4), ("s7", 0.7)]
    records.write_text("".join(json.dumps({"session_id": s, "llm_judge_score": j}) + "\n" for s, j in rows))
    return root


# By hand, person (a) against judge (b) over s1..s5 (s6 has no judge score, s7 no person's):
#   a = 0.9 0.2 0.7 0.4 1.0, b = 0.8 0.6 0.4 0.3 0.9
#   MAE = (0.1 + 0.4 + 0.3 + 0.1 + 0.1) / 5 = 0.2
#   Pearson: means 0.64 and 0.6; deviations a 0.26 -0.44 0.06 -0.24 0.36, b 0.2 0 -0.2 -0.3 0.3;
#     sum of products 0.052 + 0 - 0.012 + 0.072 + 0.108 = 0.22; sums of squares 0.452 and 0.26;
#     r = 0.22 / sqrt(0.452 * 0.26) = 0.22 / sqrt(0.11752) = 0.641751...
#   Spearman: ranks a 4 1 3 2 5, b 4 3 2 1 5; d = 0 -2 1 1 0, sum d^2 = 6; rho = 1 - 6*6 / (5*24) = 0.7
#   at 0.5: a positive s1 s3 s5, b positive s1 s2 s5 -> tp 2 (s1 s5), fp 1 (s2), fn 1 (s3), tn 1 (s4)
#   kappa: observed (2 + 1) / 5 = 0.6; chance ((2+1)(2+1) + (1+1)(1+1)) / 25 = 13/25 = 0.52;
#     (0.6 - 0.52) / (1 - 0.52) = 0.08 / 0.48 = 1/6
# bob (a) against manual (b) over s1 s2: a = 0.8 0.3, b = 0.9 0.2: MAE 0.1, Pearson and Spearman none
#   (two sessions: two points lie on a line, r is +-1 whatever the scores),
#   tp 1 (s1), tn 1 (s2): observed 1, chance (1*1 + 1*1) / 4 = 0.5, kappa (1 - 0.5) / 0.5 = 1
# tools only (s1 s2 s3): a = 0.9 0.2 0.7, b = 0.8 0.6 0.4: MAE (0.1 + 0.4 + 0.3) / 3 = 0.8/3
HAND = {
    ("human", "judge"): (5, 0.2, 0.22 / np.sqrt(0.452 * 0.26), 0.7, 1 / 6, (2, 1, 1, 1)),
    ("bob", "manual"): (2, 0.1, None, None, 1.0, (1, 0, 0, 1)),
}


def judged_workspace(tmp_path: Path) -> Path:
    """s1, s2 pending in the log, their judge's scores 0.8 and 0.6 in the records; a.md in both at salience 1."""
    events = [session("s1", None, {"a.md": 1.0}), session("s2", None, {"a.md": 1.0})]
    root = make_workspace(tmp_path, {"a.md": (["alpha"], "active")}, events, journals={"j.md": "alpha"})
    (root / RECORDS).parent.mkdir(parents=True)
    write_judge_records(root)
    return root


def write_judge_records(root: Path) -> None:
    rows = [{"session_id": "s1", "llm_judge_score": 0.8}, {"session_id": "s2", "llm_judge_score": 0.6}]
    (root / RECORDS).write_text("".join(json.dumps(r) + "\n" for r in rows))
