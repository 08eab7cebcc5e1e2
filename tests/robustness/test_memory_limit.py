"""Out of memory is one line, never a traceback or a hang: `loo` under an
address-space limit (`ulimit -v`)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from lesson_credit.core.base import memory
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import process_env, run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, make_workspace, session

LIMIT_BYTES = 200 << 20  # the attack's limit
FINISHED_S = 120.0  # "it finished" (the run takes about 2 s; a hang never does): never a speed assertion


def _ws(tmp_path: Path) -> Path:
    lessons = {"tools/git.md": 0.5, "tools/quote.md": 1.0}
    events = [session(f"s{i}", (i % 5) / 4, lessons, category="code" if i % 2 else "docs") for i in range(40)]
    return make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def test_loo_under_200_mb_is_one_line(tmp_path: Path) -> None:
    """Under 200 MB the first import of scipy.linalg (the joint fit) used to hang in OpenBLAS, and a
    MemoryError elsewhere was a traceback. Now: one line (or, where the limit leaves room, a result)."""
    root = _ws(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "lesson_credit.cli.main", "loo", "--no-write", "--workspace", str(root)],
        env=process_env(), capture_output=True, text=True, timeout=FINISHED_S, check=False, preexec_fn=_limited,
    )  # fmt: skip
    if done.returncode == 0:
        return  # this machine's libraries fit (a hang or a traceback would not get here)
    assert done.returncode == 1 and done.stdout == "", done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("lesson-credit: not enough memory for loo"), (
        done.stderr
    )


def test_no_room_for_scipy_linalg_is_a_memory_error_before_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _ws(tmp_path)
    monkeypatch.setattr(memory, "address_space_left", lambda: memory.LINALG_ROOM_BYTES - 1)
    monkeypatch.delitem(sys.modules, "scipy.linalg", raising=False)  # as in a fresh process
    code, out, err = run_cli("loo", "--no-write", "--workspace", str(root))
    assert (code, out) == (1, "")
    assert err == (
        "lesson-credit: not enough memory for loo: the joint fit needs 128 MB of address space left under the "
        "limit (`ulimit -v`)\n"
    )
    monkeypatch.setattr(memory, "address_space_left", lambda: memory.LINALG_ROOM_BYTES)
    assert run_cli("loo", "--no-write", "--workspace", str(root))[0] == 0


def test_a_memory_error_anywhere_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _ws(tmp_path)

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(Workspace, "loo_run", exhausted)
    code, out, err = run_cli("loo", "--workspace", str(root))
    assert (code, out, err) == (1, "", "lesson-credit: not enough memory for loo\n")
