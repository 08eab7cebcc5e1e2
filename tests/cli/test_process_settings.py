"""What `lesson-credit` sets in its process before the engine (and numpy) is imported (cli/process.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# records OPENBLAS_NUM_THREADS as it is when numpy is first imported, then runs `sessions` on the demo
PROBE = """
import os, sys
seen = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" and not seen:
            seen.append(os.environ.get("OPENBLAS_NUM_THREADS"))
        return None
sys.meta_path.insert(0, Watch())
from lesson_credit.cli.main import main
code = main(["sessions", "--workspace", sys.argv[1], "--limit", "1", "--json"])  # (a warm status imports no numpy)
print("BLAS", seen, code, file=sys.stderr)
"""


def probe(env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(ROOT)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), **env},  # a fresh environment: not the test run's own settings
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    return next(line for line in out.stderr.splitlines() if line.startswith("BLAS "))


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "BLAS ['1'] 0"),  # one BLAS thread: OpenBLAS's spinning threads cost 0.2 s of CPU per command
        ({"OPENBLAS_NUM_THREADS": "4"}, "BLAS ['4'] 0"),  # what the user set wins
        # set but empty: OpenBLAS reads it as a count of 0, i.e. unset (one thread per CPU), so one is set
        ({"OPENBLAS_NUM_THREADS": ""}, "BLAS ['1'] 0"),
        ({"OPENBLAS_NUM_THREADS": " "}, "BLAS ['1'] 0"),
    ],
)
def test_blas_threads_are_set_before_numpy_is_imported(env: dict[str, str], expected: str) -> None:
    assert probe(env) == expected
