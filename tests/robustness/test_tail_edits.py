"""Edits of the log's tail, and of the cache files, between commands: every number is the log's.

The parsed-log cache's head is rewritten only after a big read, while the per-block sums beside it
are saved after every write: the sums may describe sessions past what the head covers. They are
used only when the log still holds the bytes they were computed from (core/log/cache.py `_sums`,
core/reader.py); these tests cut, tear and change the last session, copy a sums file from another
workspace, and (a state machine) mix records, grades and such edits, comparing each cached read
with a read that uses no cache at all.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from lesson_credit.core.workspace import Workspace
from tests.robustness.hostile_helpers import LOG_REL, lesson, make_ws
from tests.support import derived_cache
from tests.support.derived_cache import DB_NAME
from tests.support.engine_helpers import machine_settings

CACHE_REL = LOG_REL.parent / ".cache"
LIBRARY = {"a.md": lesson(["alpha", "modifying"]), "tools/zeta.md": lesson(["zeta"])}
HEAD_EVERY = 2048  # bytes a read must parse before it rewrites the cache's head (4 MB in use)


@pytest.fixture(autouse=True)
def small_cache_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """A small log takes the cache path, and the head is rewritten only after 2 KB of new log: the sums
    saved after each write then cover sessions the head does not (as a big log's do)."""
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", HEAD_EVERY)


def _session(i: int, reward: float | None, salience: float) -> dict[str, Any]:
    return {
        "type": "session",
        "session_id": f"s{i:06d}",
        "base_reward": reward,
        "lessons": [{"path": "a.md", "salience": salience}, {"path": "tools/zeta.md", "salience": 1.0}],
    }


def _numbers(ws: Workspace) -> Any:
    return ws.lesson_table(details=False).as_json(), [str(p) for p in ws.log_problems()]


def _fresh(root: Path) -> Any:
    return _numbers(Workspace(root, use_cache=False))


def _append(root: Path, event: dict[str, Any]) -> None:
    """What `record` and `grade` do: a locked append, the state file rewritten and the sums kept."""
    ws = Workspace(root)
    ws._append(event)
    assert not [w for w in ws.warnings if "bandit-state" not in w and "a torn last line" not in w]


def _workspace(root: Path, n: int = 50, salience: float = 0.25) -> Path:
    make_ws(root, LIBRARY)
    log = root / LOG_REL
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps(_session(i, 0.1, salience)) + "\n" for i in range(n)))
    _numbers(Workspace(root))  # a read past HEAD_EVERY: the head, a part and the sums are written
    assert (root / CACHE_REL / DB_NAME).exists()
    return root


def _edit_last_line(root: Path, kind: str) -> None:
    log = root / LOG_REL
    lines = log.read_bytes().splitlines(keepends=True)
    if kind == "cut":
        log.write_bytes(b"".join(lines[:-1]))
    elif kind == "torn":  # as a crash mid-append leaves it
        log.write_bytes(b"".join(lines[:-1]) + lines[-1][:20])
    else:  # one digit of the last session's salience: 0.25 -> 0.75, the same length
        changed = lines[-1].replace(b'"salience":0.25', b'"salience":0.75', 1)
        assert changed != lines[-1]
        log.write_bytes(b"".join(lines[:-1]) + changed)


@pytest.mark.parametrize("kind", ["cut", "torn", "digit"])
def test_an_edit_of_the_last_session_then_a_record_gives_the_logs_numbers(tmp_path: Path, kind: str) -> None:
    """The head covers 50 sessions; a record adds the 51st and saves the sums of block 0 at 51 rows.
    The 51st is then cut, torn or changed, and another session recorded: block 0 has 51 (or 52) rows
    again, with the same rewards, but other entries. Before the fix, the saved sums (keyed by block,
    rows and rewards) were used: a.md's alpha 3.6125 against the log's 3.84 after a cut."""
    root = _workspace(tmp_path)
    _append(root, _session(50, 0.5, 0.25))
    _edit_last_line(root, kind)
    _append(root, _session(51, 0.5, 0.9))
    fresh = _fresh(root)
    # by hand, seed, floor 0.3, a cut: 50 sessions at 0.1 with a.md at salience 0.25 (w 0.475), then
    # one at 0.5 with salience 0.9 (w 0.93): alpha = 1 + 50 * 0.0475 + 0.465 = 3.84
    if kind == "cut":
        assert fresh[0]["lessons"][0]["path"] == "a.md"
        assert fresh[0]["lessons"][0]["alpha"] == pytest.approx(3.84)
    assert _numbers(Workspace(root)) == fresh


def test_a_sums_file_from_another_workspace_is_not_used(tmp_path: Path) -> None:
    """Two logs of the same shape and rewards, other saliences: the sums of one are not the other's."""
    mine = _workspace(tmp_path / "mine", salience=0.25)
    other = _workspace(tmp_path / "other", salience=0.75)
    for root in (mine, other):
        _append(root, _session(50, 0.5, 0.25))  # sums of 51 rows saved in each
    theirs = derived_cache.meta(other / CACHE_REL / DB_NAME)["sums"]
    derived_cache.put_meta(mine / CACHE_REL / DB_NAME, "sums", theirs)
    # by hand: a.md in mine, 51 sessions at salience 0.25 (w 0.475): alpha = 1 + 50 * 0.0475 + 0.2375
    fresh = _fresh(mine)
    assert fresh[0]["lessons"][0]["alpha"] == pytest.approx(3.6125)
    assert _numbers(Workspace(mine)) == fresh


def test_sums_of_an_intact_log_are_still_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check costs no recomputation when nothing was edited: the next command folds from the saved
    sums (counted: no block's sums are computed, from its entries or by extending shorter ones)."""
    from lesson_credit.core.log import snapshot

    root = _workspace(tmp_path)
    _append(root, _session(50, 0.5, 0.25))
    expected = _fresh(root)
    computed: list[str] = []

    def counted(name: str, real: Any) -> Any:
        def call(*args: Any) -> Any:
            computed.append(name)
            return real(*args)

        return call

    monkeypatch.setattr(snapshot, "_block_sums", counted("block", snapshot._block_sums))
    monkeypatch.setattr(snapshot, "_extended", counted("extended", snapshot._extended))
    assert _numbers(Workspace(root)) == expected
    assert computed == []


# ------------------------------------------------------------------- random commands and edits


class TailEdits(RuleBasedStateMachine):
    """Records and grades through the workspace, edits of the log's tail and of the cache files in
    between, and after each step a cached read agrees with a fresh one."""

    @initialize()
    def start(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.root = _workspace(Path(self.tmp.name) / "ws", n=30)
        self.next_id = 30
        self.saved: dict[str, bytes] = {}
        self.rows: dict[str, bytes] = {}

    def teardown(self) -> None:
        self.tmp.cleanup()

    @rule(reward=st.sampled_from([0.5, None, 1.0]), salience=st.sampled_from([0.25, 0.9, 0.0]))
    def record(self, reward: float | None, salience: float) -> None:
        ws = Workspace(self.root)
        ws.refresh()
        if ws._reader.row_of(f"s{self.next_id:06d}") is None:
            ws._append(_session(self.next_id, reward, salience))
        self.next_id += 1

    @rule(back=st.integers(1, 5), reward=st.sampled_from([0.2, 0.7]))
    def grade(self, back: int, reward: float) -> None:
        event = {"type": "grade", "session_id": f"s{max(self.next_id - back, 0):06d}", "base_reward": reward}
        Workspace(self.root)._append(event)

    @rule(kind=st.sampled_from(["cut", "torn", "digit"]))
    def edit_tail(self, kind: str) -> None:
        log = self.root / LOG_REL
        if log.read_bytes().endswith(b"\n") and b'"salience":0.25' in log.read_bytes().splitlines()[-1]:
            _edit_last_line(self.root, kind)
        elif kind != "digit":
            _edit_last_line(self.root, kind)

    def _cache_files(self) -> list[Path]:
        folder = self.root / CACHE_REL
        return sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []

    @rule()
    def keep_the_cache_files(self) -> None:
        self.saved = {path.name: path.read_bytes() for path in self._cache_files()}
        db = self.root / CACHE_REL / DB_NAME
        self.rows = {} if not db.is_file() else {**derived_cache.meta(db), **derived_cache.parts(db)}

    @rule(pick=st.integers(0, 50))
    def put_back_an_old_row(self, pick: int) -> None:
        """One row of the cache's database as it was at an earlier step (the head, the sums, a block),
        the others as they are."""
        db = self.root / CACHE_REL / DB_NAME
        if self.rows and db.is_file():
            name = sorted(self.rows)[pick % len(self.rows)]
            with sqlite3.connect(db) as conn:
                if name in ("head", "sums"):
                    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, self.rows[name]))
                else:
                    conn.execute("INSERT OR REPLACE INTO parts VALUES (?, ?, 0)", (name, self.rows[name]))

    @rule(pick=st.integers(0, 50))
    def put_back_an_old_cache_file(self, pick: int) -> None:
        """One file of the cache as it was at an earlier step (the parsed-log cache's database, the
        seal, the lesson cache: whichever), the others as they are."""
        if self.saved:
            name = sorted(self.saved)[pick % len(self.saved)]
            (self.root / CACHE_REL / name).write_bytes(self.saved[name])

    @rule(pick=st.integers(0, 50), at=st.integers(0, 10_000))
    def flip_a_byte(self, pick: int, at: int) -> None:
        files = [path for path in self._cache_files() if path.stat().st_size]
        if files:
            path = files[pick % len(files)]
            data = bytearray(path.read_bytes())
            data[at % len(data)] ^= 0x20
            path.write_bytes(bytes(data))

    @invariant()
    def cached_reads_are_the_logs(self) -> None:
        if hasattr(self, "root"):
            assert _numbers(Workspace(self.root)) == _fresh(self.root)


TailEdits.TestCase.settings = machine_settings(40, 12)
test_tail_edits_and_cache_files_between_commands = pytest.mark.long(TailEdits.TestCase)
