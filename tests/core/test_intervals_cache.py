"""The credible intervals kept from one `status` to the next (core/model/intervals.py): a warm `status`
does not import scipy (its import was most of a warm status's own work), and a row is only
used for exactly its (alpha, beta)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.model import intervals

# Closed forms (the second way): Beta(1, 1) is uniform, quantile p; Beta(2, 1) has cdf x^2, quantile
# sqrt(p); Beta(1, 2) has cdf 1 - (1 - x)^2, quantile 1 - sqrt(1 - p). The 95% interval: p = .025, .975.
ALPHA = np.array([1.0, 2.0, 1.0])
BETA = np.array([1.0, 1.0, 2.0])
LOW = [0.025, math.sqrt(0.025), 1 - math.sqrt(0.975)]
HIGH = [0.975, math.sqrt(0.975), 1 - math.sqrt(0.025)]


def _no_quantiles(*_: object) -> None:
    raise AssertionError("computed, not taken from the cache")


def test_a_second_call_takes_every_row_from_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / ".cache" / "intervals"
    low, high = intervals.interval(ALPHA, BETA, cache)
    assert np.allclose(low, LOW, rtol=1e-12) and np.allclose(high, HIGH, rtol=1e-12)
    monkeypatch.setattr(beta_mod, "interval", _no_quantiles)
    low, high = intervals.interval(ALPHA, BETA, cache)
    assert np.allclose(low, LOW, rtol=1e-12) and np.allclose(high, HIGH, rtol=1e-12)


def test_only_the_rows_it_lacks_are_computed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "intervals"
    intervals.interval(ALPHA[:2], BETA[:2], cache)  # Beta(1, 1) and Beta(2, 1) kept
    asked: list[list[float]] = []
    real = beta_mod.interval

    def counted(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        asked.append([*a.tolist(), *b.tolist()])
        return real(a, b, level)

    monkeypatch.setattr(beta_mod, "interval", counted)
    low, high = intervals.interval(np.array([2.0, 1.0]), np.array([1.0, 2.0]), cache)
    assert asked == [[1.0, 2.0]]  # Beta(1, 2) only
    assert np.allclose(low, LOW[1:], rtol=1e-12) and np.allclose(high, HIGH[1:], rtol=1e-12)


def test_a_damaged_or_other_level_file_is_no_cache(tmp_path: Path) -> None:
    cache = tmp_path / "intervals"
    intervals.interval(ALPHA, BETA, cache)
    data = bytearray(cache.read_bytes())
    data[-3] ^= 0xFF  # a flipped bit in the numbers: the checksum no longer holds
    cache.write_bytes(bytes(data))
    low, high = intervals.interval(ALPHA, BETA, cache)
    assert np.allclose(low, LOW, rtol=1e-12) and np.allclose(high, HIGH, rtol=1e-12)
    # the file kept rows at 95%: a 50% interval is computed (Beta(1, 1): (.25, .75))
    low, high = intervals.interval(ALPHA[:1], BETA[:1], cache, level=0.5)
    assert np.allclose([low[0], high[0]], [0.25, 0.75], rtol=1e-12)


STATUS = """
import contextlib, io, json, sys
from lesson_credit.cli.main import main
root = sys.argv[1]
if sys.argv[2] == "record":
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["record", "-w", root, "--session-id", "s1", "--journal", root + "/j.txt",
                     "--lessons", "tools/git.md", "--reward", "0.5"]) == 0
out = io.StringIO()
with contextlib.redirect_stdout(out):
    assert main(["status", "-w", root, "--json"]) == 0
print(json.dumps({"scipy": "scipy.special" in sys.modules, "out": out.getvalue()}))
"""


def test_a_warm_status_does_not_import_scipy(tmp_path: Path) -> None:
    # fails on the old code: every status computed its intervals with scipy.special.betaincinv
    lessons = tmp_path / "lessons" / "tools"
    lessons.mkdir(parents=True)
    (lessons / "git.md").write_text("---\nmatch:\n  keywords: [git]\n---\n# Git\n")
    (tmp_path / "j.txt").write_text("git push")
    runs = []
    for first in ("record", "status only"):
        cmd = [sys.executable, "-c", STATUS, str(tmp_path), first]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.splitlines()[-1]))
    assert runs[0]["scipy"] is True  # the first status computed its lessons' intervals
    assert runs[1]["scipy"] is False  # the second took them from the file
    assert runs[1]["out"] == runs[0]["out"]
