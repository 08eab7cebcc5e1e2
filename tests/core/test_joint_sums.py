"""The joint fit of a log from its sufficient statistics, summed block by block of sessions (`fit_log`),
against the model written out densely from the events (an augmented least squares and the restricted
likelihood by hand), and its memory: it follows the lessons, not the injections."""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.analysis.claims import injection_design
from lesson_credit.core.analysis.joint import Design, build_design, fit_joint, fit_log
from lesson_credit.core.analysis.neighbourhoods import neighbourhoods
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import crowded_events, fixed_clock, make_workspace
from tests.support.oracles import restricted_neg2_loglik, ridge_reference, time_columns

RTOL = 1e-9  # the streamed sums against the dense formula: the same numbers up to the order of additions
# the empirical-Bayes penalty is a likelihood's optimum, located only to about the square root of the
# rounding of that likelihood (flat at its optimum): two orders of addition agree on it to 1e-7
EB_RTOL = 1e-6


def world(rng: np.random.Generator, n: int, lessons: int, *, categories: bool, during: bool) -> list[dict[str, Any]]:
    """Sessions of 0-6 lessons, some listed twice, some included during the session, some ungraded."""
    paths = [f"t{i % 4}/l{i}.md" for i in range(lessons)]
    effect = rng.normal(0.0, 0.15, lessons)
    events = []
    for s in range(n):
        chosen = rng.choice(lessons, size=int(rng.integers(0, min(lessons, 6) + 1)), replace=False)
        entries: list[dict[str, Any]] = [
            {"path": paths[j], "salience": float(rng.choice([0.0, 0.2, 0.5, 1.0]))} for j in chosen
        ]
        if entries and rng.random() < 0.1:  # listed twice: the first listing counts
            entries.append({"path": entries[0]["path"], "salience": 0.9})
        if during and entries and rng.random() < 0.2:  # pulled in during the session: not a treatment
            entries[-1]["included"] = "during"
        reward = 0.5 + 0.3 * s / n + sum(effect[j] for j in chosen[: len(chosen) - 1]) + rng.normal(0.0, 0.2)
        event: dict[str, Any] = {
            "type": "session",
            "session_id": f"s{s}",
            "base_reward": float(np.clip(reward, 0, 1)) if rng.random() > 0.15 else None,
            "lessons": entries,
        }
        if categories:
            event["category"] = ["x", "y", None][s % 3]
        events.append(event)
    return events


def dense_model(
    events: list[dict[str, Any]], arm_ids: tuple[str, ...], floor: float, agents: list[str] | None
) -> tuple[Any, Any, Any]:
    """(Z, X, y) written out from the events: graded sessions in log order; Z one column per category,
    per time block but the last, per agent but the first; X one weight per (session, lesson) chosen
    before the session, its first listing."""
    graded = [(i, e) for i, e in enumerate(events) if e["base_reward"] is not None]
    n = len(graded)
    cats = sorted({e.get("category") or "" for _, e in graded})
    z = np.array([[float((e.get("category") or "") == c) for c in cats] for _, e in graded])
    # docs: none below 24 graded sessions, 2 from 24 to 49, then floor(2 log2(n / 25))
    blocks = 0 if n < 24 else max(2, int(math.floor(2 * math.log2(n / 25) + 1e-9)))
    cell = z.argmax(axis=1)  # the sessions' time groups: per category, and per agent when there are agents
    if agents is not None:
        names = sorted({agents[i] for i, _ in graded})
        cell = cell * len(names) + np.array([names.index(agents[i]) for i, _ in graded])
    if blocks > 1:
        z = np.hstack([z, time_columns(n, blocks, cell)])
    if agents is not None:
        z = np.hstack([z, np.array([[float(agents[i] == a) for a in names[1:]] for i, _ in graded])])
    x = np.zeros((n, len(arm_ids)))
    for row, (_, e) in enumerate(graded):
        seen: set[str] = set()
        for entry in e["lessons"]:
            if entry["path"] in seen:
                continue
            seen.add(entry["path"])
            if entry.get("included") != "during":
                x[row, arm_ids.index(entry["path"])] = floor + (1 - floor) * entry["salience"]
    return z, x, np.array([e["base_reward"] for _, e in graded])


WORLDS = {  # name: (sessions, lessons, categories, during, agents)
    "no time blocks, one category": (22, 5, False, False, False),
    "two time blocks, a small log": (40, 5, False, False, False),
    "time blocks, categories, during": (260, 9, True, True, False),
    "agents too": (300, 8, True, True, True),
}


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_streamed_fit_equals_the_dense_model(tmp_path: Path, name: str) -> None:
    n, lessons, categories, during, with_agents = WORLDS[name]
    events = world(np.random.default_rng(len(name)), n, lessons, categories=categories, during=during)
    root = make_workspace(tmp_path, lessons={}, events=events)
    ws = Workspace(root, clock=fixed_clock)
    data = ws.data()
    agents = [f"agent{(i // 7) % 3}" for i in range(n)] if with_agents else None
    cats = ws.session_table().categories
    floor, lam = 0.3, 1.7
    z, x, y = dense_model(events, data.arm_ids, floor, agents)
    if during:
        assert len(data.during) > 0
    coef, cov, sigma2 = ridge_reference(z, x, y, lam)
    for block in (7, 64, 10**6):  # many blocks, a few, one
        fit = fit_log(data, cats, floor, agents or (), penalty=lam, block=block)
        assert fit.n_sessions == len(y)
        assert fit.coef == pytest.approx(coef, rel=RTOL, abs=1e-12)
        assert fit.coef_sd == pytest.approx(np.sqrt(np.diag(cov)), rel=RTOL)
        assert fit.noise_sd == pytest.approx(math.sqrt(sigma2), rel=RTOL)
        assert fit.n.tolist() == (x > 0).sum(axis=0).tolist()
        assert fit.mean_weight == pytest.approx(x.sum(axis=0) / (x > 0).sum(axis=0), rel=RTOL)

    # empirical Bayes: the penalty is the restricted likelihood's optimum (a tenth of a percent either
    # side is no better), the posterior at it the dense one's; every block size and the whole design
    # (`fit_joint`) choose the same penalty to EB_RTOL
    fits = [fit_log(data, cats, floor, agents or (), block=block) for block in (7, 10**6)]
    fits.append(fit_joint(build_design(data, cats, floor, agents or ())))
    for eb in fits:
        if "floored" not in eb.penalty_rule:
            best = restricted_neg2_loglik(z, x, y, eb.penalty)
            for step in (0.999, 1.001):
                assert best <= restricted_neg2_loglik(z, x, y, eb.penalty * step) + 1e-9
        coef, cov, _ = ridge_reference(z, x, y, eb.penalty)
        assert eb.coef == pytest.approx(coef, rel=RTOL, abs=1e-12)
        assert eb.penalty == pytest.approx(fits[0].penalty, rel=EB_RTOL)
        scale = float(np.abs(fits[0].coef).max())  # a coefficient near 0 moves with the larger ones
        assert eb.coef == pytest.approx(fits[0].coef, rel=EB_RTOL, abs=EB_RTOL * scale)
        assert eb.baseline == pytest.approx(fits[0].baseline, rel=EB_RTOL)


def test_streamed_iterative_fit_equals_the_dense_model(tmp_path: Path) -> None:
    # beyond DENSE_MAX lessons the fit is iterative: at a fixed penalty its means are the dense model's to
    # the conjugate gradients' tolerance (relative residual 1e-10)
    events = world(np.random.default_rng(3), 400, 14, categories=True, during=True)
    ws = Workspace(make_workspace(tmp_path, lessons={}, events=events), clock=fixed_clock)
    data = ws.data()
    z, x, y = dense_model(events, data.arm_ids, 0.3, None)
    coef, _, _ = ridge_reference(z, x, y, 2.0)
    fit = fit_log(data, ws.session_table().categories, 0.3, penalty=2.0, solver="iterative", block=50)
    assert fit.solver == "iterative"
    assert fit.coef == pytest.approx(coef, rel=1e-7, abs=1e-9)


def peak_bytes(fn: Any) -> int:
    """The largest memory numpy and Python held at once while `fn` ran (tracemalloc), above what they held before."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def crowded_log(tmp_path: Path, n: int) -> tuple[Any, Any]:
    """n graded sessions of 40 lessons each from a library of 60, two categories: (data, categories)."""
    events = crowded_events(n)
    ws = Workspace(make_workspace(tmp_path / str(n), lessons={}, events=events), clock=fixed_clock)
    return ws.data(), ws.session_table().categories


def test_streamed_fit_holds_no_array_per_injection(tmp_path: Path) -> None:
    # 1,000 then 3,000 sessions of 40 lessons: 80,000 more injections. The whole design holds three
    # numbers per injection (row, arm, weight: 24 bytes); the streamed sums, in blocks of 100 sessions,
    # hold X'X (60 x 60), one block's injections and a few numbers per session (~100 bytes: 2.5 an injection)
    small, big = crowded_log(tmp_path, 1000), crowded_log(tmp_path, 3000)
    added = len(big[0].entry_session) - len(small[0].entry_session)
    assert added == 80_000
    fit_log(*small, 0.3, block=100)  # imports (scipy) outside the measure
    streamed = [peak_bytes(lambda d=d, c=c: fit_log(d, c, 0.3, block=100)) for d, c in (small, big)]
    whole = [peak_bytes(lambda d=d, c=c: fit_joint(build_design(d, c, 0.3))) for d, c in (small, big)]
    assert whole[1] - whole[0] > 24 * added
    assert streamed[1] - streamed[0] < 8 * added  # less than one number per injection


def test_injection_operator_and_neighbourhoods_equal_the_centred_matrix_written_out() -> None:
    # 300 sessions over 10 arms of which arms 3 and 7 are never injected, 3 categories, 4 time blocks:
    # the injection operator (`claims`, X'X reused from the co-occurrence) applies A = X~'X~ with X~ the
    # indicator after projecting out Z, and each neighbourhood holds A's principal submatrix
    rng = np.random.default_rng(4)
    n, arms = 300, 10
    live = np.array([0, 1, 2, 4, 5, 6, 8, 9])
    rows = np.repeat(np.arange(n), 3)
    picked = np.array([rng.choice(live, 3, replace=False) for _ in range(n)]).ravel()
    category = rng.integers(0, 3, n)
    design = Design(np.arange(n), rng.random(n), category, 3, rows, picked, np.full(len(rows), 0.5), arms, n_blocks=4)
    op, _, columns, _, _ = injection_design(design)
    assert [c[0] for c in columns] == live.tolist()
    z = np.hstack([np.eye(3)[category], time_columns(n, 4, category)])
    x = np.zeros((n, arms))
    x[rows, picked] = 1.0
    x = x[:, live]
    x_centred = x - z @ np.linalg.lstsq(z, x, rcond=None)[0]
    a = x_centred.T @ x_centred
    v = rng.normal(size=len(live))
    assert op.gram_apply(v) == pytest.approx(a @ v, rel=1e-12, abs=1e-10)
    assert op.gram_dense() == pytest.approx(a, rel=1e-12, abs=1e-10)
    hoods = neighbourhoods(op, size=3)
    for j in range(len(live)):
        members = hoods.index[j][hoods.index[j] >= 0]
        assert hoods.block[j][: len(members), : len(members)] == pytest.approx(
            a[np.ix_(members, members)], rel=1e-12, abs=1e-10
        )


def test_loo_reads_the_injections_once_and_fits_them_as_the_log_fit_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `loo` needs the whole design; its joint fit is fitted from that design in the blocks the log's fit
    # reads (`design_entries`), so the injections are read from the log once and the fit is the same
    # numbers as `effects`' (`fit_log`), not merely close: 260 sessions in blocks of 37
    from lesson_credit.core.analysis import joint

    monkeypatch.setattr(joint, "SESSION_BLOCK", 37)
    events = world(np.random.default_rng(5), 260, 9, categories=True, during=True)
    root = make_workspace(tmp_path, lessons={}, events=events)
    reads: list[tuple[int, int]] = []
    real = joint.log_entries

    def counted(*args: Any) -> Any:
        part = real(*args)

        def counting(lo: int, hi: int) -> Any:
            reads.append((lo, hi))
            return part(lo, hi)

        return counting

    monkeypatch.setattr(joint, "log_entries", counted)
    ws = Workspace(root, clock=fixed_clock)
    ws.loo(write=False)
    graded = sum(1 for e in events if e["base_reward"] is not None)
    assert reads == [(0, graded)]  # the design's one read; the old code read every block again for the fit
    fresh = Workspace(root, clock=fixed_clock)
    streamed = fit_log(fresh.data(), fresh.session_categories(), fresh.settings.floor)
    # fit_log: block by block, twice: once for the baseline's steps (core/analysis/steps.py), once for the sums
    assert len(reads) == 1 + 2 * math.ceil(graded / 37)
    fitted = ws.joint_fit()
    assert np.array_equal(fitted.coef, streamed.coef, equal_nan=True)
    assert np.array_equal(fitted.coef_sd, streamed.coef_sd, equal_nan=True)
    assert (fitted.penalty, fitted.noise_sd) == (streamed.penalty, streamed.noise_sd)


def test_cross_products_summed_from_the_pairs_equal_the_dense_product() -> None:
    # a block's X'X added to a running sum, against X written out densely: weights of a few quarters, so every
    # product and sum is exact in floating point whatever the order of the additions (array_equal, not approx);
    # sessions of 0-12 lessons, one of 700 (a chunk of its own), an empty block, and past the pairs' width limit
    from scipy import sparse

    from lesson_credit.core.analysis.cross import PAIRS_DENSE_MAX, add_cross

    rng = np.random.default_rng(36)
    for n, p in ((1, 1), (900, 40), (5000, 800), (300, PAIRS_DENSE_MAX + 1), (0, 5)):
        sizes = rng.integers(0, min(p, 12) + 1, n)
        if n > 1:
            sizes[n // 2] = min(p, 700)
        rows = np.repeat(np.arange(n), sizes)
        arms = np.concatenate([rng.choice(p, k, replace=False) for k in sizes.tolist()] + [np.zeros(0, dtype=int)])
        weights = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], len(rows))
        x = sparse.csr_matrix((weights, (rows, arms)), shape=(n, p))
        dense = np.zeros((n, p))
        dense[rows, arms] = weights
        start = rng.integers(0, 8, (p, p)) / 4.0  # (what earlier blocks summed)
        cross = start.copy()
        add_cross(cross, x)
        assert np.array_equal(cross, start + dense.T @ dense)
