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
    assert err.count("\n") == 1 and err.startswith("warning: ") and "not enough memory" in err, err
    assert err.endswith("(the command succeeded: its event is logged)\n"), err


def test_a_library_that_cannot_be_mapped_once_a_record_is_logged_is_a_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library that cannot be mapped (`ulimit -v`) is no memory as a MemoryError is: once the session is
    in the log, the record succeeded (exit 0, a warning). It exited 75, and a hook that retried was refused
    the duplicate."""
    root = _ws(tmp_path)

    def unmapped(*args: object, **kwargs: object) -> None:
        raise ImportError("libscipy_openblas.so: failed to map segment from shared object")

    monkeypatch.setattr(Workspace, "explain", unmapped)
    journal = str(root / "j.txt")
    code, out, err = run_cli(
        "record", "--session-id", "new", "--journal", journal, "--lessons", "tools/git.md", "-w", str(root)
    )
    logged = [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()]
    assert [e["session_id"] for e in logged if e.get("type", "session") == "session"][-1] == "new"
    assert (code, out) == (0, ""), err
    assert err.count("\n") == 1 and err.startswith("warning: ") and "not enough memory" in err, err
    assert err.endswith("(the command succeeded: its event is logged)\n"), err


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


GRADE = ("grade", "s3", "0.9")
RECORD = ("record", "--session-id", "n1", "--journal", "j.txt", "--lessons", "tools/git.md", "--reward", "0.5")


@pytest.mark.parametrize(
    ("argv", "step"),
    [
        (GRADE, "refresh"),  # the log read back
        (GRADE, "explain"),  # the session's credit shown
        (("undo", "s3"), "explain"),
        (RECORD, "refresh"),
        (RECORD, "explain"),
        (RECORD + ("--json",), "explain"),
        (("import-gptme", "{state}"), "refresh"),
    ],
    ids=["grade", "grade-shown", "undo-shown", "record", "record-shown", "record-json", "import-gptme"],
)
def test_no_memory_to_read_the_log_back_after_its_event_is_logged_says_it_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...], step: str
) -> None:
    """The event is in the log, the fold that shows it had no memory: as a store that cannot be read back, a
    warning saying the event was stored, and exit 0 (the write succeeded). It said only 'not enough memory for
    grade', exit 75, as if nothing were written, and a retry logged the grade twice or was refused as a
    duplicate record."""
    root = _ws(tmp_path)
    state = tmp_path / "gptme-state.json"
    state.write_text(json.dumps({"arms": {"tools/git.md": {"alpha": 2.0, "beta": 1.0}}}))
    if argv[0] == "undo":
        assert run_cli(*GRADE, "--workspace", str(root))[0] == 0  # a grade to undo
    log = root / LOG_REL
    before = log.read_bytes()
    original = getattr(Workspace, step)

    def exhausted_once_logged(self: Workspace, *args: object, **kwargs: object) -> object:
        if log.read_bytes() != before:
            raise MemoryError
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Workspace, step, exhausted_once_logged)
    code, out, err = run_cli(*(a.format(state=state) for a in argv), "--workspace", str(root))
    assert log.read_bytes()[len(before) :].count(b"\n") == 1  # the event is logged, once
    assert code == 0, err
    if "--json" in argv:  # an object saying so (tests/cli/test_logged_json.py)
        assert json.loads(out)["logged"] is True, out
    else:
        assert out == "", out
    assert err.count("\n") == 1 and "stored" in err and "not enough memory" in err, err
    assert err.endswith("(the command succeeded: its event is logged)\n"), err


def test_no_memory_to_read_the_log_back_after_a_selection_is_logged_prints_the_logged_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As when the store cannot be read back: the selection logged is the one printed, with a warning (exit 0);
    it exited 75 'not enough memory', and the hook's retry drew and logged a second selection."""
    root = _ws(tmp_path)
    (root / "ctx.txt").write_text("git quote")
    log = root / LOG_REL
    before = log.read_bytes()
    refresh = Workspace.refresh

    def exhausted_once_logged(self: Workspace, *args: object, **kwargs: object) -> object:
        if log.read_bytes() != before:
            raise MemoryError
        return refresh(self, *args, **kwargs)

    monkeypatch.setattr(Workspace, "refresh", exhausted_once_logged)
    code, out, err = run_cli("select", "--context", str(root / "ctx.txt"), "--json", "--workspace", str(root))
    [logged] = [json.loads(line) for line in log.read_bytes()[len(before) :].splitlines()]
    assert code == 0, err
    shown = json.loads(out)
    assert (shown["session_id"], shown["selected"]) == (logged["session_id"], logged["selected"])
    assert [w for w in shown["warnings"] if "the selection is logged" in w and "not enough memory" in w], shown
