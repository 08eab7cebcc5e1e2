"""The workspace the earlier-copy tests share (an export of ours told arm by arm from the log), and the CLI checks
they make."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, make_workspace, session

GIT, QUOTE = "tools/git.md", "tools/quote.md"


def refused(*argv: str) -> str:
    """The command's one-line error (exit 1, nothing on stdout, no traceback)."""
    code, out, err = run_cli(*argv)
    assert (code, out) == (1, ""), (code, out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def rows(root: Path) -> dict[str, tuple[float, float, int]]:
    """`status --json`'s (alpha, beta, n) per lesson with evidence."""
    code, out, err = run_cli("status", "--workspace", str(root), "--json")
    assert code == 0, err
    return {r["path"]: (r["alpha"], r["beta"], r["n"]) for r in json.loads(out)["lessons"] if r["n"]}


def timed_workspace(tmp_path: Path) -> Path:
    """s1 (0.8; git salience 1, quote 0.5) and s2 (0.4; git salience 0), each with its time; the seed strategy,
    floor 0.3: w = 0.3 + 0.7 * salience, alpha += base * w, beta += 1 - base * w.
    git: s1 w 1 +0.8/+0.2, s2 w 0.3 +0.12/+0.88: Beta(1.92, 2.08) n 2, stamped with s2's time;
    quote: s1 w 0.65 +0.52/+0.48: Beta(1.52, 1.48) n 1, stamped with s1's time."""
    events = [
        session("s1", 0.8, {GIT: 1.0, QUOTE: 0.5}, timestamp="2026-11-01T10:00:00Z"),
        session("s2", 0.4, {GIT: 0.0}, timestamp="2026-11-02T10:00:00Z"),
    ]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL}, name="timed")
    code, _, err = run_cli("grade", "s2", "0.4", "--workspace", str(root))  # writes bandit-state.json from the log
    assert code == 0, err
    return root


GPTME_TIME = "2026-11-20T09:00:00Z"  # when gptme's bandit saved its sessions (no session of the log's)
GPTME_KEYS = ("arms", "total_sessions", "created", "last_updated")  # what gptme's bandit saves (our stamp dropped)


def gptme_saved(state: dict[str, Any], added: dict[str, tuple[float, float, int, int]], sessions: int) -> str:
    """The state file `state` (parsed) as gptme's bandit saves it after `sessions` of its own: each arm of `added`
    up by its (alpha, beta, total_selections, total_rewards), from Beta(1, 1) for an arm it lacks, restamped with
    gptme's time; its own keys only (our stamp gone, our `created` kept)."""
    for key, (a, b, n, r) in added.items():
        new = {"arm_id": key, "alpha": 1.0, "beta": 1.0, "total_selections": 0, "total_rewards": 0}
        arm = state["arms"].setdefault(key, new)
        arm.update(alpha=arm["alpha"] + a, beta=arm["beta"] + b, last_updated=GPTME_TIME)
        arm["total_selections"] += n
        arm["total_rewards"] += r
    state["total_sessions"] += sessions
    return json.dumps({k: state[k] for k in GPTME_KEYS})
