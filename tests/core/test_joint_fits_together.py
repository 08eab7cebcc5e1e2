"""The analysis' joint fit and the policy's joint posterior made together (`Workspace.fit_both`, what the
dashboard's fits' child does when it needs both): each the same numbers as made alone, and the log's
blocks read only as often as for the posterior alone (at a million sessions the two made apart took ~8 s
of CPU each, most of it the same passes: the sums, the lessons identified only by time)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lesson_credit.core.analysis.joint import sums
from lesson_credit.core.analysis.joint_posterior import Stream
from lesson_credit.core.log.snapshot import FoldData
from lesson_credit.core.workspace import Workspace
from tests.core.test_joint_posterior_stream import world
from tests.support.engine_helpers import fixed_clock, make_workspace


def _counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each read of a block of the log's injections (every pass over the log reads its blocks through
    `FoldData.entry_slice`), counted."""
    reads: list[int] = []
    real = FoldData.entry_slice

    def counted(data: FoldData, start: int, stop: int) -> tuple[object, ...]:
        reads.append(stop - start)
        return real(data, start, stop)

    monkeypatch.setattr(FoldData, "entry_slice", counted)
    return reads


@pytest.mark.parametrize("block", [None, 64], ids=["one-block", "blocks-of-64"])
def test_the_two_fits_made_together_are_the_same_numbers_and_read_the_log_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int | None
) -> None:
    if block is not None:  # several blocks of sessions, as at a million sessions (65,536 a block)
        monkeypatch.setattr("lesson_credit.core.analysis.joint.SESSION_BLOCK", block)
        monkeypatch.setattr("lesson_credit.core.analysis.joint_posterior.SESSION_BLOCK", block)
    root = make_workspace(tmp_path, lessons={}, events=world(np.random.default_rng(11), 300, 9))
    reads = _counted_reads(monkeypatch)
    alone = Workspace(root, clock=fixed_clock)
    effects = alone.effects()
    effects_reads = len(reads)
    posterior = Workspace(root, clock=fixed_clock, use_cache=False).joint_posterior()  # fitted, not read back
    posterior_reads = len(reads) - effects_reads
    assert effects_reads > 0 and posterior_reads > 0

    together = Workspace(root, clock=fixed_clock, use_cache=False)
    del reads[:]
    together.fit_both()
    assert together.effects() == effects  # the very floats
    both = together.joint_posterior()
    # the analysis' fit and its ranking read nothing the posterior does not: its sums, its time-only lessons
    assert len(reads) == posterior_reads < posterior_reads + effects_reads
    for name in ("mean", "sd", "n", "baselines", "deviation", "deviation_var"):
        assert np.array_equal(getattr(both, name), getattr(posterior, name)), name
    for name in ("arm_ids", "prior_sd", "categories", "noise_sd", "n_sessions", "category_sd"):
        assert getattr(both, name) == getattr(posterior, name), name
    assert len(posterior.categories) == 4 and bool(np.any(posterior.deviation != 0))  # the deviations fitted


def test_a_posterior_in_its_cache_is_read_and_the_analysis_fit_made_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path, lessons={}, events=world(np.random.default_rng(12), 200, 7))
    posterior = Workspace(root, clock=fixed_clock).joint_posterior()  # fitted and kept in .cache
    effects = Workspace(root, clock=fixed_clock, use_cache=False).effects()
    again = Workspace(root, clock=fixed_clock)
    again.fit_both()
    assert np.array_equal(again.joint_posterior().mean, posterior.mean) and again.effects() == effects


def test_the_cells_tallied_in_the_sums_pass_are_those_of_a_pass_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The posterior's (category, lesson) cells are tallied in the pass that sums the fit's statistics
    (`Stream.sums_and_cells`): one pass over the log fewer, the very same numbers."""
    monkeypatch.setattr("lesson_credit.core.analysis.joint_posterior.SESSION_BLOCK", 64)
    ws = Workspace(make_workspace(tmp_path, lessons={}, events=world(np.random.default_rng(13), 300, 9)))
    inputs = ws.analysis_data(), ws.session_categories(), ws.settings.floor, ws.session_agents()
    alone, shared = Stream.of_log(*inputs), Stream.of_log(*inputs)
    reads = _counted_reads(monkeypatch)
    own = alone.cells
    st = shared.sums_and_cells()
    graded = int(np.isfinite(inputs[0].base).sum())
    assert len(reads) == 2 * -(-graded // 64)  # a pass each: every block of 64 graded sessions read once
    assert shared.cells.entries == own.entries > 0 and len(reads) == 2 * -(-graded // 64)  # not read again
    for name in ("weight", "square", "count", "reward"):
        assert np.array_equal(getattr(shared.cells, name), getattr(own, name)), name
    apart = sums(alone.sessions, alone.entries, alone.block)
    for name in ("cross", "zx", "xy", "count", "weight", "ginv", "zy", "key"):
        assert np.array_equal(getattr(st, name), getattr(apart, name)), name
    assert (st.rank, st.yy, st.y2) == (apart.rank, apart.yy, apart.y2)
