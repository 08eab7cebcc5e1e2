"""The benchmarks run: `python -m bench.run --smoke` runs every case once (the scale ones on tiny
data) in a child process and must finish without an exception. Benchmarks nothing runs rot: issue
25 found `bench.run --quick` failing on an import that had moved and `--scale` on a removed method."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PG_CASES = ("record_pg", "read_pg", "follow_pg", "write_pg", "push_pg", "scale_read_pg", "tui_live_pg")


def _postgres_available() -> bool:
    try:
        import psycopg  # noqa: F401

        from tests.pg.pg_server import NoServer, _bindir

        _bindir()
    except (ImportError, NoServer):
        return False
    return True


@pytest.mark.long
@pytest.mark.parametrize("half", ["plain", "scale"])
def test_every_benchmark_case_runs(tmp_path: Path, half: str) -> None:
    """In two halves (bench.run's cases, then bench/scale.py's), which a parallel run runs side by side."""
    from bench.run import CASES
    from bench.scale import SCALE_CASES

    skip = [] if os.environ.get("CI") or _postgres_available() else list(PG_CASES)
    skip += list(SCALE_CASES if half == "plain" else CASES)
    cmd = [sys.executable, "-m", "bench.run", "--smoke", *(f"--skip={name}" for name in skip)]
    env = {**os.environ, "LESSON_CREDIT_BENCH_DATA": str(tmp_path)}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    results = json.loads((tmp_path / "results-smoke.json").read_text())
    assert results["mode"] == "smoke"
    ran = {r["case"] for r in results["results"]}
    # every case group produced at least one result (a group names its results by its own prefix)
    missing = [name for name in [*CASES, *SCALE_CASES] if name not in skip and not _produced(name, ran)]
    assert not missing, f"cases that produced no result: {missing}"


def _produced(group: str, ran: set[str]) -> bool:
    prefixes = {"cold_load": ("cold_load",), "warm": ("warm_",), "analysis": ("joint_fit", "loo_cli"),
                "tui_start": ("tui_first_paint",), "tui": ("tui_open",), "scale_status": ("scale_status",),
                "scale_regrade": ("scale_regrade", "scale_grade"), "tui_live_pg": ("tui_live_commit_pg",),
                "distinct_lessons": ("distinct_",)}  # fmt: skip
    return any(r.startswith(p) for r in ran for p in prefixes.get(group, (group,)))
