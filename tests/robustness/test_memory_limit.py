"""Out of memory is one line, never a traceback or a hang: `loo` under an
address-space limit (`ulimit -v`)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from lesson_credit.core.base import memory
from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import process_env, run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, make_workspace, session

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
    assert done.returncode == 75 and done.stdout == "", done.stderr[-2000:]
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
    assert (code, out) == (75, "")
    assert err == (
        "lesson-credit: not enough memory for loo: the joint fit needs 128 MB of address space left under the "
        "limit (`ulimit -v`)\n"
    )
    monkeypatch.setattr(memory, "address_space_left", lambda: memory.LINALG_ROOM_BYTES)
    assert run_cli("loo", "--no-write", "--workspace", str(root))[0] == 0


def test_a_memory_error_anywhere_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of memory is a resource failure, not bad input: exit 75 (the error root's temporary branch, a
    hook retries later), where it was 1 (a hook read "your input is wrong" and dropped the session)."""
    root = _ws(tmp_path)

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(Workspace, "loo_run", exhausted)
    code, out, err = run_cli("loo", "--workspace", str(root))
    assert (code, out, err) == (75, "", "lesson-credit: not enough memory for loo\n")


def test_a_library_that_cannot_be_mapped_is_a_resource_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _ws(tmp_path)

    def unmapped(*args: object, **kwargs: object) -> None:
        raise ImportError("libscipy_openblas.so: failed to map segment from shared object")

    monkeypatch.setattr(Workspace, "loo_run", unmapped)
    code, out, err = run_cli("loo", "--workspace", str(root))
    assert (code, out, err) == (75, "", "lesson-credit: not enough memory for loo (a library could not be loaded)\n")


def test_no_memory_for_bandit_state_after_a_grade_is_logged_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The grade is in the log: the command succeeded (exit 0), and bandit-state.json, a derived file the
    next write rewrites, not rewritten is a warning. It exited 1 (bad input, nothing written), and a hook
    that tried again was refused the duplicate."""
    root = _ws(tmp_path)
    before = (root / LOG_REL).read_bytes()

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(Workspace, "write_state", exhausted)
    code, out, err = run_cli("grade", "s3", "0.9", "--workspace", str(root))
    added = [json.loads(line) for line in (root / LOG_REL).read_bytes()[len(before) :].splitlines()]
    assert code == 0 and [(e["type"], e["session_id"], e["base_reward"]) for e in added] == [("grade", "s3", 0.9)], err
    assert err.count("\n") == 1 and "not enough memory" in err and "the event is logged" in err, err


def test_no_memory_to_show_a_record_once_it_is_logged_is_a_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session is in the log: the record succeeded (exit 0, a warning), whatever runs out of memory
    after it (here the explanation it prints). It exited 75, and the hook that retried was refused: the
    session was already recorded."""
    root = _ws(tmp_path)

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(Workspace, "explain", exhausted)
    journal = str(root / "j.txt")
    code, out, err = run_cli(
        "record", "--session-id", "new", "--journal", journal, "--lessons", "tools/git.md", "-w", str(root)
    )
    logged = [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()]
    assert [e["session_id"] for e in logged if e.get("type", "session") == "session"][-1] == "new"
    assert (code, out) == (0, ""), err
    assert err == "warning: not enough memory to finish record (the command succeeded: its event is logged)\n"


def test_no_memory_before_the_event_is_logged_is_still_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nothing stored: retry later (75), and a read command the same whatever it logged on the way
    root = _ws(tmp_path)
    before = (root / LOG_REL).read_bytes()

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(Workspace, "record", exhausted)
    journal = str(root / "j.txt")
    code, out, err = run_cli(
        "record", "--session-id", "new", "--journal", journal, "--lessons", "tools/git.md", "-w", str(root)
    )
    assert (code, out, err) == (75, "", "lesson-credit: not enough memory for record\n")
    assert (root / LOG_REL).read_bytes() == before
