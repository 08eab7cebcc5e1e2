"""A regraded block's sums patched arm by arm (core/log/blockpatch.py) are those of the block summed
afresh: after any sequence of grades, regrades, retractions, undos and new sessions in one process,
every block's sums, reward counts and latest rows, and the posteriors, equal byte for byte those of a
workspace read from scratch without any cache (the independent second way: every block summed whole).

Blocks of 8 sessions (65,536 in use), rewards and saliences that round differently in another order
(thirds, tenths), and a parsed-log cache written on every read, so the cached sums are patched too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lesson_credit.core.log import blockpatch
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import PROPERTY, make_workspace, session

LESSONS = {f"l{i}.md": ([f"k{i}"], "active") for i in range(5)}
REWARDS = [0.1, 1 / 3, 0.7, 2 / 3, 0.9, 0.0, 1.0]
SALIENCES = [0.0, 0.1, 1 / 3, 0.3, 0.7, 1.0]
SETTINGS = [CreditSettings(strategy=s, floor=f) for s, f in (("evidence", 0.3), ("seed", 0.5), ("uniform", 0.3))]
FIELDS = ("n", "sum_base", "sum_base_salience", "sum_salience", "last")


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)
    monkeypatch.setattr("lesson_credit.core.log.snapshot.BLOCK_ROWS", 8)


def _sessions(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        lessons = {f"l{j}.md": SALIENCES[(i * 7 + j * 3) % len(SALIENCES)] for j in range(5) if (i + j) % 3}
        out.append(session(f"s{i:03d}", [None, *REWARDS][i % 8], lessons))
    return out


def _fingerprint(ws: Workspace) -> list[Any]:
    """Every block's sums (rewarded under each of SETTINGS) and each setting's posterior, as bytes."""
    data = ws.data()
    out: list[Any] = []
    for settings in SETTINGS:
        post = ws.posterior(settings)
        out += [post.alpha.tobytes(), post.beta.tobytes(), post.n.tobytes(), post.rewarded.tobytes()]
        out.append(post.last_session.tobytes())
    for block in data.own_blocks:
        out += [getattr(block.sums, name).tobytes() for name in FIELDS]
        out += [block.rewarded(data, settings).tobytes() for settings in SETTINGS]
    return out


OPS = st.lists(
    st.tuples(st.sampled_from(["grade", "judge", "retract", "undo", "record"]), st.integers(0, 60), st.integers(0, 6)),
    min_size=1,
    max_size=8,
)


@PROPERTY
@given(ops=OPS, n=st.integers(9, 40), fold_first=st.booleans())
def test_patched_block_sums_equal_a_workspace_read_from_scratch(
    tmp_path_factory: Any, ops: list[Any], n: int, fold_first: bool
) -> None:
    """`fold_first`: fold before each write (the blocks' rewards kept with their sums), or write from a
    new workspace each time, as each CLI command does (the sums read from the cache; the rewards of
    the snapshot before the write are the ones they are checked against)."""
    root = make_workspace(tmp_path_factory.mktemp("w"), LESSONS, _sessions(n), journals={"j.md": "k1 k2 k3"})
    ws = Workspace(root)
    calls: list[int] = []
    real = blockpatch.patched

    def counted(*args: Any) -> Any:
        calls.append(len(args[-1]))
        return real(*args)

    regraded = False
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(blockpatch, "patched", counted)
        for step, (op, k, v) in enumerate(ops):
            if fold_first:
                _fingerprint(ws)  # the sums of the rewards before the write are kept (and the blocks' rewards)
            else:
                ws = Workspace(root)
            sid = f"s{k % n:03d}"
            if op == "record":
                ws.record(f"new{step}", root / "j.md", ["l1.md", "l2.md"], reward=REWARDS[v])
                continue
            before = ws.data().base.tobytes()
            if op == "undo":
                try:
                    ws.undo_grade(sid)
                except Exception:  # nothing to undo: pending, or graded only by its record
                    continue
            else:
                grader = "judge" if op == "judge" else "manual"
                ws.grade(sid, None if op == "retract" else REWARDS[v], grader=grader)
            regraded = regraded or ws.data().base.tobytes() != before
            assert _fingerprint(ws) == _fingerprint(Workspace(root, use_cache=False)), (step, op)
        assert _fingerprint(ws) == _fingerprint(Workspace(root, use_cache=False))
        assert _fingerprint(Workspace(root)) == _fingerprint(Workspace(root, use_cache=False))  # the saved sums
    if regraded:
        assert calls, "a regrade of an old block summed the whole block again"


def test_changed_rows_tells_rewards_apart_byte_for_byte() -> None:
    old = np.array([0.5, np.nan, 0.0, 1 / 3, np.nan])
    new = np.array([0.5, np.nan, -0.0, 1 / 3 + 1e-16, 0.2])
    assert blockpatch.changed_rows(old, new).tolist() == [2, 3, 4]
