"""The parsed-log cache follows a big log closely: a read of the log that parsed MIN_TAIL_BYTES past
the cache rewrites it (every command parses again what it does not hold), and the numbers stay the
log's own."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from lesson_credit.core.base.sealed import unseal
from lesson_credit.core.log.cache import CACHE_MAGIC, MIN_TAIL_BYTES
from lesson_credit.core.workspace import Workspace
from tests.support import derived_cache
from tests.support.derived_cache import DB_NAME

LESSON = '---\nmatch:\n  keywords: ["alpha", "beta"]\n---\n# L\n'
THRESHOLD = 2 * MIN_TAIL_BYTES  # a log this big starts from the cache (1 MB: the default's 4 MB, smaller)


def _session(sid: str, reward: float, salience: float) -> str:
    lessons = [{"path": "a.md", "salience": salience}, {"path": "b.md", "salience": 1 - salience}]
    return json.dumps({"type": "session", "session_id": sid, "base_reward": reward, "lessons": lessons}) + "\n"


def _append(log: Path, first: int, nbytes: int) -> int:
    """Sessions s<first>.. appended until the log grew by at least `nbytes`; the next number."""
    lines, size, i = [], 0, first
    while size < nbytes:
        lines.append(_session(f"s{i}", (i % 10) / 10, (i % 5) / 4))
        size += len(lines[-1])
        i += 1
    with log.open("a") as f:
        f.write("".join(lines))
    return i


def _covered(root: Path) -> int:
    """How much of the log the cache's head says it holds."""
    raw = derived_cache.meta(root / "state" / "lesson-thompson" / ".cache" / DB_NAME)["head"]
    return int(msgspec.msgpack.decode(unseal(CACHE_MAGIC, raw))["end"])


def _numbers(ws: Workspace) -> list[tuple[str, float, float, int]]:
    return [(r.path, r.alpha, r.beta, r.n) for r in ws.lesson_table().rows]


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "lessons").mkdir()
    for name in ("a.md", "b.md"):
        (tmp_path / "lessons" / name).write_text(LESSON)
    log = tmp_path / "state" / "lesson-thompson" / "sessions.jsonl"
    log.parent.mkdir(parents=True)
    log.touch()
    return tmp_path, log


def test_a_read_that_parsed_the_tail_threshold_past_the_cache_rewrites_it(tmp_path: Path) -> None:
    root, log = _workspace(tmp_path)
    after = _append(log, 0, THRESHOLD + 1000)
    Workspace(root, cache_threshold=THRESHOLD).refresh()  # a first read of more than the threshold: cached
    first = log.stat().st_size
    assert _covered(root) == first
    _append(log, after, MIN_TAIL_BYTES + 1000)  # under the threshold, over the tail's
    ws = Workspace(root, cache_threshold=THRESHOLD)
    ws.refresh()
    # the old code left the cache at `first` until a read parsed THRESHOLD bytes (each command parsing them)
    assert _covered(root) == log.stat().st_size > first + MIN_TAIL_BYTES
    assert _numbers(ws) == _numbers(Workspace(root, use_cache=False))
    assert _numbers(Workspace(root, cache_threshold=THRESHOLD)) == _numbers(Workspace(root, use_cache=False))


def test_a_shorter_tail_leaves_the_cache_as_it_was(tmp_path: Path) -> None:
    root, log = _workspace(tmp_path)
    after = _append(log, 0, THRESHOLD + 1000)
    Workspace(root, cache_threshold=THRESHOLD).refresh()
    first = log.stat().st_size
    _append(log, after, MIN_TAIL_BYTES // 2)
    Workspace(root, cache_threshold=THRESHOLD).refresh()
    assert _covered(root) == first


def test_a_log_smaller_than_the_threshold_gets_no_cache_whatever_it_parsed(tmp_path: Path) -> None:
    root, log = _workspace(tmp_path)
    _append(log, 0, MIN_TAIL_BYTES + 1000)  # a read of more than the tail's threshold, of a log under the cache's
    Workspace(root, cache_threshold=THRESHOLD).refresh()
    assert not (root / "state" / "lesson-thompson" / ".cache" / DB_NAME).exists()
