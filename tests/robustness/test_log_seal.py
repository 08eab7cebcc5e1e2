"""The log seal (core/log/logcheck.py): after our own appends a reader trusts the log without
re-reading it, and any change our appends did not make is still caught.

Every test here runs on the fast path (the parsed-log cache and the seal in use) and checks that
the numbers are those of a fresh parse; `full_hashes` counts the full verifications (every block
of the prefix hashed again), so the tests also say which path was taken.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core import grading
from lesson_credit.core.log import logcheck
from lesson_credit.core.log.store import EventLog
from lesson_credit.core.workspace import Workspace
from tests.robustness.hostile_helpers import LOG_REL, lesson, make_ws

LIBRARY = {"a.md": lesson(["alpha"]), "b.md": lesson(["beta"])}
SEAL_REL = LOG_REL.parent / ".cache" / "log-seal"


@pytest.fixture(autouse=True)
def cache_every_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small logs take the cache path too (the threshold is 4 MB in use), and are digested in blocks
    of 256 bytes (1 MB in use), so that a log of a few KB has full blocks a seal can vouch for."""
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)
    monkeypatch.setattr(logcheck, "BLOCK_BYTES", 256)


@pytest.fixture
def full_hashes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ends of the prefixes hashed again block by block (the full verification)."""
    calls: list[int] = []
    real = logcheck.digest_of

    def counting(log: Any, end: int) -> Any:
        calls.append(end)
        return real(log, end)

    monkeypatch.setattr(logcheck, "digest_of", counting)
    return calls


def _session(i: int, reward: float) -> str:
    lessons = [{"path": "a.md", "salience": 0.5}, {"path": "b.md", "salience": 1.0}]
    return json.dumps({"type": "session", "session_id": f"s{i}", "base_reward": reward, "lessons": lessons})


def _workspace(root: Path, n: int = 40) -> Workspace:
    make_ws(root, LIBRARY)
    (root / "j.md").write_text("alpha beta")
    log = root / LOG_REL
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(_session(i, 0.1 * (i % 10)) + "\n" for i in range(n)))
    ws = Workspace(root)
    ws.data()  # parses and writes the cache
    ws.record("ours-1", root / "j.md", ["a.md"], reward=0.9)  # our appends, under the lock
    ws.grade("s3", 0.7)
    return ws


def _numbers(ws: Workspace) -> tuple[Any, list[str]]:
    return ws.lesson_table(details=False).as_json(), [str(p) for p in ws.log_problems()]


def _fresh(root: Path) -> tuple[Any, list[str]]:
    return _numbers(Workspace(root, use_cache=False))


def test_after_our_appends_a_new_reader_reads_only_what_is_new(tmp_path: Path, full_hashes: list[int]) -> None:
    ws = _workspace(tmp_path)
    assert (tmp_path / SEAL_REL).exists()
    full_hashes.clear()
    cached = Workspace(tmp_path)
    assert _numbers(cached) == _fresh(tmp_path)
    assert cached.session("ours-1").base_reward == 0.9 and cached.grade_history("s3")[-1].base_reward == 0.7
    assert full_hashes == []  # the seal vouched for the cache's prefix: nothing hashed again
    other = Workspace(tmp_path)  # another process of ours appends
    other.grade("s5", 0.2)
    ws.refresh()  # the long-lived reader: the seal vouches for its prefix too
    assert _numbers(ws) == _fresh(tmp_path) and ws.grade_history("s5")[-1].base_reward == 0.2
    assert full_hashes == []  # (a fresh parse hashes as it reads: no second pass either)


def test_a_same_length_rewrite_after_our_appends_is_caught(tmp_path: Path, full_hashes: list[int]) -> None:
    ws = _workspace(tmp_path)
    log = tmp_path / LOG_REL
    before = _numbers(ws)
    sealed = log.stat()
    data = log.read_bytes()
    at = data.index(b'"base_reward": 0.1')  # s1's reward, deep in the prefix the cache covers
    with open(log, "r+b") as handle:
        handle.seek(at)
        handle.write(b'"base_reward": 0.8')
    os.utime(log, ns=(sealed.st_atime_ns, sealed.st_mtime_ns))  # even with the mtime put back (ctime moves)
    assert log.stat().st_size == sealed.st_size
    expected = _fresh(tmp_path)
    assert expected != before
    full_hashes.clear()
    assert _numbers(Workspace(tmp_path)) == expected  # a new reader, through the cache
    assert full_hashes  # the seal no longer vouched: the prefix was hashed again (and differed)
    ws.refresh()
    assert _numbers(ws) == expected  # the long-lived reader


def test_a_cut_after_our_appends_is_caught(tmp_path: Path, full_hashes: list[int]) -> None:
    ws = _workspace(tmp_path)
    log = tmp_path / LOG_REL
    data = log.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1  # our appends and half the sessions go
    with open(log, "r+b") as handle:
        handle.truncate(cut)
    expected = _fresh(tmp_path)
    assert expected[0]["sessions"] < 40
    full_hashes.clear()
    fresh_reader = Workspace(tmp_path)
    assert _numbers(fresh_reader) == expected
    with pytest.raises(Exception, match="unknown session"):
        fresh_reader.session("ours-1")
    ws.refresh()
    assert _numbers(ws) == expected


def test_a_foreign_append_after_ours_is_read_after_a_full_check(tmp_path: Path, full_hashes: list[int]) -> None:
    ws = _workspace(tmp_path)
    log = tmp_path / LOG_REL
    with open(log, "ab") as handle:  # another program, not through our lock: no seal for this
        handle.write(_session(99, 1.0).encode() + b"\n")
    expected = _fresh(tmp_path)
    full_hashes.clear()
    reader = Workspace(tmp_path)
    assert _numbers(reader) == expected and reader.session("s99").base_reward == 1.0
    assert full_hashes  # the log changed behind our back: its prefix was hashed again, then trusted
    ws.refresh()
    assert _numbers(ws) == expected


def test_an_edit_made_while_we_append_is_caught(
    tmp_path: Path, full_hashes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program (which takes no lock of ours) edits the log while a grade holds the lock, after
    the grade read the log and before it appends: the prefix read is no longer the log's, so the grade
    neither trusts it nor seals it. Before, its seal vouched for the edited log with the digest of the
    bytes read, and every later reader, through the cache, kept s1's old reward."""
    ws = _workspace(tmp_path)
    log = tmp_path / LOG_REL
    real = grading.grade_event

    def edited_first(*args: Any) -> Any:  # the grade has read the log under the lock and decided its event
        data = log.read_bytes()
        at = data.index(b'"base_reward": 0.1')  # s1's reward, in the prefix the cache covers
        with open(log, "r+b") as handle:
            handle.seek(at)
            handle.write(b'"base_reward": 0.8')
        return real(*args)

    monkeypatch.setattr(grading, "grade_event", edited_first)
    ws.grade("s4", 0.6)
    monkeypatch.setattr(grading, "grade_event", real)
    expected = _fresh(tmp_path)
    assert Workspace(tmp_path, use_cache=False).session("s1").base_reward == 0.8
    # a (salience 0.5 in the 40 sessions, w 0.65; seed): their rewards 0.1 * (i % 10) sum to 18, + 0.7 (s1 now 0.8),
    # + 0.4 (s3 graded 0.7), + 0.2 (s4 graded 0.6) = 19.3; alpha 1 + 0.65 * 19.3 + 0.9 (ours-1, salience 1) = 14.445
    # (the edit missed: 13.99)
    assert [row["alpha"] for row in expected[0]["lessons"] if row["path"] == "a.md"] == [pytest.approx(14.445)]
    assert _numbers(Workspace(tmp_path)) == expected  # a new reader, through the cache and the seal
    assert _numbers(ws) == expected  # the grade's own reader


def test_a_seal_written_in_the_same_clock_tick_as_the_change_is_not_trusted(
    tmp_path: Path, full_hashes: list[int]
) -> None:
    """On a file system whose clock is coarse, an edit in the tick of the seal would keep the stat:
    a seal counts only while it is younger than the log's last change."""
    _workspace(tmp_path)
    log, seal = tmp_path / LOG_REL, tmp_path / SEAL_REL
    ctime = log.stat().st_ctime_ns
    os.utime(seal, ns=(ctime, ctime))  # as if written in the same tick
    full_hashes.clear()
    assert _numbers(Workspace(tmp_path)) == _fresh(tmp_path)
    assert full_hashes and full_hashes[0] > 0  # checked the hard way first
    reread, resigned = Workspace(tmp_path).log, Workspace(tmp_path).log
    assert isinstance(reread, EventLog) and isinstance(resigned, EventLog)
    read = logcheck.Seal.read(reread)
    assert read is not None and not read.vouches(logcheck.signature_of(resigned))


def test_a_damaged_seal_is_no_seal(tmp_path: Path, full_hashes: list[int]) -> None:
    _workspace(tmp_path)
    seal = tmp_path / SEAL_REL
    data = bytearray(seal.read_bytes())
    data[-3] ^= 0x10  # a digest of the sealed file
    seal.write_bytes(bytes(data))
    os.utime(seal, ns=(seal.stat().st_atime_ns, (tmp_path / LOG_REL).stat().st_ctime_ns + 10**9))
    full_hashes.clear()
    assert _numbers(Workspace(tmp_path)) == _fresh(tmp_path)
    assert full_hashes and full_hashes[0] > 0


def test_a_log_files_check_continues_only_from_a_digest_of_a_log_file(tmp_path: Path) -> None:
    """The store seam types the checker's digest as any hasher; the file's check refuses one that is
    not a digest of the file's bytes (a database cache's xxh3 handed to it would vouch for nothing)."""
    import xxhash

    check = logcheck.PrefixCheck(EventLog(tmp_path / "log.jsonl"))
    with pytest.raises(TypeError):
        check.adopt(xxhash.xxh3_64())
    digest = logcheck.PrefixDigest()
    check.adopt(digest)
    assert check.hasher is digest
