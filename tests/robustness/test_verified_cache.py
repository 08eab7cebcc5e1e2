"""No wrong numbers without a warning: the log is the truth on every read path.

A fresh read with no cache, a read through the parsed-log cache and an incremental read by a
long-lived Workspace must print the same numbers whatever happened to the files in between:
edits in place, truncation, flipped bits in the log or in any cache file, glued lines,
appends by a tool that forgot a newline. Or they fail with a clean one-line error.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.log.events import decode_raw, decode_raw_lines
from lesson_credit.core.log.store import StoreError, parse_chunk
from lesson_credit.core.workspace import Workspace
from tests.robustness.hostile_helpers import LOG_REL, lesson, make_ws
from tests.support.cli_run import run_process

STATE_REL = LOG_REL.parent / "bandit-state.json"
CACHE_REL = LOG_REL.parent / ".cache"
LIBRARY = {"a.md": lesson(["alpha", "modifying"]), "tools/zeta.md": lesson(["zeta"])}


@pytest.fixture(autouse=True)
def cache_every_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small logs take the cache path too (the threshold is 4 MB in use)."""
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)


def _session(i: int, reward: float | None, salience: float = 0.25) -> dict[str, Any]:
    return {
        "type": "session",
        "session_id": f"s{i:06d}",
        "base_reward": reward,
        "lessons": [{"path": "a.md", "salience": salience}, {"path": "tools/zeta.md", "salience": 1.0}],
    }


def _numbers(ws: Workspace) -> tuple[Any, list[str]]:
    return ws.lesson_table(details=False).as_json(), [str(p) for p in ws.log_problems()]


def _fresh(root: Path) -> tuple[Any, list[str]]:
    return _numbers(Workspace(root, use_cache=False))


def _write_log(root: Path, n: int) -> Path:
    make_ws(root, LIBRARY)
    log = root / LOG_REL
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(json.dumps(_session(i, 0.1)) + "\n" for i in range(n)))
    return log


def _big_log(root: Path) -> Path:
    """Past 1 MB, where the old fingerprint hashed only the last 4 KB."""
    log = _write_log(root, 8000)
    assert log.stat().st_size > 1 << 20
    return log


def test_a_same_length_rewrite_deep_in_the_log_is_noticed(tmp_path: Path) -> None:
    log = _big_log(tmp_path)
    long_lived = Workspace(tmp_path)
    before = _numbers(long_lived)  # and the cache is written
    assert (tmp_path / CACHE_REL / "derived-log.sqlite").exists()
    with open(log, "r+b") as handle:  # the first session's reward, 0.1 -> 0.9, in place
        data = handle.read(400)
        handle.seek(data.index(b'"base_reward": 0.1'))
        handle.write(b'"base_reward": 0.9')
    expected = _fresh(tmp_path)
    assert expected != before
    assert _numbers(Workspace(tmp_path)) == expected  # through the cache
    long_lived.refresh()
    assert _numbers(long_lived) == expected  # incremental
    # a copy over the file (new inode, same size) and a delete-and-recreate
    text = log.read_bytes().replace(b'"base_reward": 0.1', b'"base_reward": 0.5', 3)
    log.unlink()
    log.write_bytes(text)
    assert _numbers(Workspace(tmp_path)) == _fresh(tmp_path)


@pytest.mark.smoke
def test_tampered_cache_contents_are_never_used(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    _write_log(tmp_path, 200)
    expected = _numbers(Workspace(tmp_path))
    capfd.readouterr()
    for name, old, new in (
        ("derived-log.sqlite", b"tools/zeta.md", b"tools/zetb.md"),
        ("lessons.msgpack", b"modifying", b"modibying"),
    ):
        path = tmp_path / CACHE_REL / name
        data = path.read_bytes()
        assert old in data
        path.write_bytes(data.replace(old, new))
    ws = Workspace(tmp_path)
    assert _numbers(ws) == expected
    lesson_a = ws.library().get("a.md")
    assert lesson_a is not None and lesson_a.keywords == ("alpha", "modifying")
    notice = capfd.readouterr().err
    assert "derived-log.sqlite" in notice and "rebuilding" in notice and notice.count("\n") == 1


GLUED = [
    b'{"type":"session","session_id":"a","base_reward":0.2,"lessons":[{"path":"a.md","salience":1.0}]}'
    b'{"type":"session","session_id":"b","base_reward":0.9,"lessons":[{"path":"a.md","salience":1.0}]}\n',
    b'{"type":"grade","session_id":"a",\n',
    b'"base_reward":1.0,"grader":"manual"}\n',
    b'{"type":"session","session_id":"c","base_reward":0.4,"lessons":[{"path":"a.md","salience":0.5}]}\n',
]


def test_one_line_is_one_event_on_the_fast_path() -> None:
    """Two values glued on one line and one value split over two lines balance the count: the
    batch decoder must still not take them, and agree with the line-by-line reading."""
    data = b"".join(GLUED)
    fast = parse_chunk(data, 0, 1, at_eof=True, decode=decode_raw, decode_lines=decode_raw_lines)
    slow = parse_chunk(data, 0, 1, at_eof=True, decode=decode_raw)
    assert [line for line, _ in fast.events] == [line for line, _ in slow.events] == [4]
    assert [p.line for p in fast.problems] == [p.line for p in slow.problems] == [1, 2, 3]


def test_an_append_glued_to_a_last_line_without_newline(tmp_path: Path) -> None:
    make_ws(tmp_path, LIBRARY)
    log = tmp_path / LOG_REL
    log.parent.mkdir(parents=True)
    first = json.dumps(_session(1, 0.2)).encode()
    log.write_bytes(first)  # a complete event, no newline
    long_lived = Workspace(tmp_path)
    assert long_lived.lesson_table().as_json()["sessions"] == 1
    with open(log, "ab") as handle:  # another tool appends without a newline first
        handle.write(json.dumps(_session(2, 0.9)).encode() + b"\n")
    expected = _fresh(tmp_path)
    assert expected[0]["sessions"] == 0 and expected[1] and "line 1" in expected[1][0]
    long_lived.refresh()
    assert _numbers(long_lived) == expected
    assert _numbers(Workspace(tmp_path)) == expected


def test_status_and_lint_notice_a_stale_bandit_state_and_status_rewrites_it(tmp_path: Path) -> None:
    make_ws(tmp_path, LIBRARY)
    (tmp_path / "j.md").write_text("alpha zeta")
    done = run_process(
        "record", "--session-id", "s1", "--journal", "j.md", "--lessons", "a.md", "--reward", "1", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    with open(tmp_path / LOG_REL, "ab") as handle:  # killed after the append, before the rewrite
        handle.write(b'{"type":"grade","session_id":"s1","base_reward":0.0,"grader":"manual"}\n')
    lint = run_process("lint", cwd=tmp_path)
    assert "stale-bandit-state" in lint.stdout and "disagrees with the log" in lint.stdout
    status = run_process("status", cwd=tmp_path)
    assert status.returncode == 0
    assert [x for x in status.stderr.splitlines() if "bandit-state.json" in x][0].endswith("rewritten from the log")
    arm = json.loads((tmp_path / STATE_REL).read_text())["arms"]["a.md"]
    assert (arm["alpha"], arm["beta"]) == (1.0, 2.0)  # reward 0 at salience 1: beta += 1
    again = run_process("status", cwd=tmp_path)
    assert "bandit-state.json" not in again.stderr
    assert "stale-bandit-state" not in run_process("lint", cwd=tmp_path).stdout


# ---------------------------------------------------------------- the three-way property

EXAMPLES = int(os.environ.get("INTEGRITY_EXAMPLES", "120"))

rewards = st.one_of(st.none(), st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]))
ids = st.sampled_from(["s0", "s1", "s2", "s3", "s4", "s5"])
paths = st.sampled_from(["a.md", "tools/zeta.md", "lessons/a.md", "gone.md"])
sessions = st.builds(
    lambda sid, base, ls: {"type": "session", "session_id": sid, "base_reward": base, "lessons": ls},
    ids,
    rewards,
    st.lists(st.fixed_dictionaries({"path": paths, "salience": st.sampled_from([0.0, 0.5, 1.0])}), max_size=3),
)
grades = st.builds(
    lambda sid, base: {"type": "grade", "session_id": sid, "base_reward": base, "grader": "manual"},
    ids,
    st.sampled_from([0.0, 0.3, 1.0]),
)
selections = st.builds(
    lambda sid, seed: {"type": "selection", "session_id": sid, "candidates": ["a.md"], "seed": seed},
    ids,
    st.sampled_from([1, 2**64, 2**70]),
)
priors = st.just({"type": "prior", "arms": {"a.md": {"alpha": 2.0, "beta": 3.0, "n": 4}}})
events = st.lists(st.one_of(sessions, sessions, grades, selections, priors), min_size=1, max_size=12)

EDITS = ["rewrite", "truncate", "flip-log", "flip-index", "flip-lessons", "glue", "foreign-append", "append"]


def _flip(path: Path, position: int, bit: int) -> None:
    data = bytearray(path.read_bytes())
    if data:
        data[position % len(data)] ^= 1 << bit
        path.write_bytes(bytes(data))


def _edit(root: Path, kind: str, position: int, bit: int, extra: dict[str, Any]) -> None:
    log = root / LOG_REL
    data = log.read_bytes()
    if kind == "rewrite":  # same length, in place: a digit becomes another
        digits = [i for i, c in enumerate(data) if chr(c).isdigit()]
        if digits:
            i = digits[position % len(digits)]
            with open(log, "r+b") as handle:
                handle.seek(i)
                handle.write(b"9" if data[i : i + 1] != b"9" else b"1")
    elif kind == "truncate":
        with open(log, "r+b") as handle:
            handle.truncate(position % (len(data) + 1))
    elif kind == "flip-log":
        _flip(log, position, bit)
    elif kind in ("flip-index", "flip-lessons"):
        name = "derived-log.sqlite" if kind == "flip-index" else "lessons.msgpack"
        cache = root / CACHE_REL / name
        if cache.exists():
            _flip(cache, position, bit)
    elif kind == "glue":  # a newline becomes a space: two lines become one
        newlines = [i for i, c in enumerate(data) if c == 10]
        if newlines:
            i = newlines[position % len(newlines)]
            with open(log, "r+b") as handle:
                handle.seek(i)
                handle.write(b" ")
    elif kind == "foreign-append":  # another tool, no newline before or after
        with open(log, "ab") as handle:
            handle.write(json.dumps(extra).encode())
    else:
        with open(log, "ab") as handle:
            handle.write(json.dumps(extra).encode() + b"\n")


def _outcome(read: Any) -> Any:
    try:
        return read()
    except (StoreError, WorkspaceError) as exc:
        assert "\n" not in str(exc)
        return ("error", str(exc))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    events,
    st.booleans(),
    st.lists(
        st.tuples(st.sampled_from(EDITS), st.integers(0, 10_000), st.integers(0, 7), st.one_of(sessions, grades)),
        min_size=1,
        max_size=3,
    ),
)
def test_fresh_cached_and_incremental_reads_agree(
    log_events: list[dict[str, Any]], newline_at_end: bool, edits: list[tuple[str, int, int, dict[str, Any]]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = make_ws(Path(tmp), LIBRARY)
        log = root / LOG_REL
        log.parent.mkdir(parents=True)
        text = "\n".join(json.dumps(e) for e in log_events) + ("\n" if newline_at_end else "")
        log.write_text(text)
        long_lived = Workspace(root)
        _outcome(lambda: _numbers(long_lived))  # reads, and writes both caches
        for kind, position, bit, extra in edits:
            _edit(root, kind, position, bit, extra)
            fresh = _outcome(lambda: _fresh(root))
            cached = _outcome(lambda: _numbers(Workspace(root)))
            long_lived.refresh() if not isinstance(fresh, tuple) or fresh[0] != "error" else None
            incremental = _outcome(lambda: _numbers(long_lived))
            assert cached == fresh, kind
            assert incremental == fresh, kind
