"""The README promises that `scripts/make_demo.py` rebuilds the tracked demo `state/` byte for byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _demo_files(state: Path) -> list[Path]:
    """The demo's files, without what any run leaves beside them (the parsed-log cache, lock files)."""
    return sorted(
        p.relative_to(state)
        for p in state.rglob("*")
        if p.is_file() and ".cache" not in p.relative_to(state).parts and p.suffix != ".lock"
    )


def test_make_demo_rebuilds_the_tracked_state_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_demo.py"), "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    tracked = _demo_files(ROOT / "state")
    rebuilt = _demo_files(out / "state")
    assert rebuilt == tracked
    differing = [
        str(rel) for rel in tracked if (ROOT / "state" / rel).read_bytes() != (out / "state" / rel).read_bytes()
    ]
    assert differing == []
