"""`select` among tens of thousands of matching lessons, and `import-gptme` of tens of thousands of
arms: the same answers as the straightforward computations, in memory and time linear in them
(the speed is bench/flat.py's `select_30k` and `import_gptme` cases)."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.bandit import select as select_mod
from lesson_credit.core.bandit.interop import ArmMapper, InteropError, read_bandit_state
from lesson_credit.core.base.ids import normalize_id
from lesson_credit.core.library.lessons import Lesson
from lesson_credit.core.library.patterns import pattern_matches
from lesson_credit.core.library.salience import KeywordMatcher, breakdown_from_scan
from lesson_credit.core.model import topk
from lesson_credit.core.model.beta import p_top_k


def _direct(alpha: np.ndarray, beta: np.ndarray, k: int, seed: int, draws: int) -> np.ndarray:
    """Every arm drawn every time, in one array (what p_top_k does for a few arms)."""
    samples = np.random.default_rng(seed).beta(alpha, beta, size=(draws, len(alpha)))
    kth = np.partition(samples, len(alpha) - k, axis=1)[:, len(alpha) - k][:, None]
    result: np.ndarray = (samples >= kth).mean(axis=0)
    return result


def test_the_large_estimate_agrees_with_drawing_every_arm() -> None:
    rng = np.random.default_rng(7)
    n, k, draws = 2500, 10, 4000
    alpha, beta = np.ones(n), np.ones(n)  # most lessons: no evidence yet (one big group at the prior)
    alpha[:200], beta[:200] = rng.uniform(1, 30, 200), rng.uniform(1, 30, 200)  # evidence, each its own
    alpha[200:300], beta[200:300] = 8.0, 2.0  # a group of 100 lessons with the same good record
    alpha[300:320], beta[300:320] = 1.0, 400.0  # hopeless: left out (never in a top 10)
    large = topk.p_top_k_large(alpha, beta, k, np.random.default_rng(1), draws)
    direct = _direct(alpha, beta, k, 2, draws)
    assert large.sum() == pytest.approx(k, abs=1e-9) and direct.sum() == pytest.approx(k, abs=1e-9)
    # two Monte Carlo estimates of the same probabilities: within five standard errors of their difference
    se = np.sqrt(2 * np.maximum(direct * (1 - direct), 1 / draws) / draws)
    assert (np.abs(large - direct) <= 5 * se + 1e-12).all()
    assert (large[300:320] == 0).all() and (direct[300:320] == 0).all()
    assert len(set(large[200:300].tolist())) == 1  # a group's lessons share its estimate


def test_a_group_of_alike_lessons_smaller_than_k_draws_only_its_members() -> None:
    """70 lessons at the prior (one group drawn by its top order statistics) and 2,000 with evidence, k = 100:
    the group has fewer members than k. Drawing k order statistics of 70 uniforms divided by zero (a warning, and
    values of no draw); each member now gets what drawing every arm gives, within five standard errors."""
    rng = np.random.default_rng(0)
    alpha = np.concatenate([np.ones(70), 1 + rng.integers(1, 50, 2000) + rng.random(2000)])
    beta = np.concatenate([np.ones(70), 1 + rng.integers(1, 50, 2000) + rng.random(2000)])
    k, draws = 100, 4000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        large = topk.p_top_k_large(alpha, beta, k, np.random.default_rng(1), draws)
    direct = _direct(alpha, beta, k, 2, draws)
    assert large.sum() == pytest.approx(k, abs=1e-9)
    assert len(set(large[:70].tolist())) == 1  # the group's lessons share its estimate
    se = np.sqrt(2 * np.maximum(direct * (1 - direct), 1 / draws) / draws)
    assert abs(large[0] - direct[:70].mean()) <= 5 * se[:70].mean() / np.sqrt(70) + 1e-12
    assert (np.abs(large - direct) <= 5 * se + 1e-12).all()


def test_thirty_thousand_lessons_at_the_prior_are_each_k_over_n_exactly() -> None:
    """Exchangeable lessons: each draw selects exactly k of the group, so each gets k/n, not an estimate."""
    n = 30_000
    p = p_top_k(np.ones(n), np.ones(n), 10, np.random.default_rng(0), 4000)
    assert np.array_equal(p, np.full(n, 10 / n))


class RecordingGenerator:
    """A numpy Generator that records the size of every batch it draws."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.sizes: list[int] = []

    def beta(self, a: Any, b: Any, size: tuple[int, int]) -> np.ndarray:
        self.sizes.append(size[0] * size[1])
        return self.rng.beta(a, b, size=size)

    def random(self, size: tuple[int, int]) -> np.ndarray:
        self.sizes.append(size[0] * size[1])
        return self.rng.random(size)


def test_draws_come_in_batches_and_within_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(topk, "BATCH_VALUES", 50_000)
    monkeypatch.setattr(topk, "VALUE_BUDGET", 2_000_000)
    n = 3000
    rng = np.random.default_rng(3)
    recording = RecordingGenerator(4)
    p = topk.p_top_k_large(rng.uniform(1, 3, n), rng.uniform(1, 3, n), 5, recording, 4000)  # type: ignore[arg-type]
    assert max(recording.sizes) <= 50_000  # never a (draws x arms) array
    assert sum(recording.sizes) <= 2_000_000  # 666 draws of 3000 overlapping arms, not 4000
    assert p.sum() == pytest.approx(5, abs=1e-9)


def _old_candidates(lessons: list[Lesson], context: str) -> list[Lesson]:
    """What `candidates` computed before: a salience breakdown per lesson."""
    active = [lesson for lesson in lessons if lesson.status == "active"]
    found = KeywordMatcher(k for lesson in active for k in lesson.keywords).scan(context)
    return [
        lesson
        for lesson in active
        if breakdown_from_scan(lesson.id, lesson.keywords, found).hits
        or any(pattern_matches(pattern, context) for pattern in lesson.patterns)
    ]


WORDS = ["git", "Git push", "rebase*", "*orce", "  ", "*", "deploy", "ΣIGMA", "quote", "pytest -k"]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.sampled_from(WORDS), max_size=4), st.sampled_from(["active", "archived"])), max_size=30
    ),
    st.text(alphabet=" gitpushrebaseforcedeployσigmaquoteGPΣ-k", max_size=60),
)
def test_candidates_are_the_lessons_with_a_hit(specs: list[tuple[list[str], str]], context: str) -> None:
    lessons = [
        Lesson(f"l{i}.md", f"L{i}", "c", status, "", tuple(kws), ("rebase.*force",) if i % 5 == 0 else ())
        for i, (kws, status) in enumerate(specs)
    ]
    assert select_mod.candidates(lessons, context) == _old_candidates(lessons, context)


def _old_map(raw: str, library_ids: set[str], taken: set[str]) -> tuple[str, bool]:
    """The suffix fallback as it was: a pass over the library per arm."""
    lesson_id = normalize_id(raw.replace("\\\\", "/"))
    if lesson_id in library_ids:
        return lesson_id, True
    found = [
        known
        for known in library_ids
        if (lesson_id.endswith("/" + known) or known.endswith("/" + lesson_id)) and known not in taken
    ]
    return (found[0], True) if len(found) == 1 else (lesson_id, False)


PATHS = st.lists(st.sampled_from(["a", "b", "tools", "x.md", "y.md", "lessons", ""]), min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.sets(PATHS.map("/".join), max_size=12), st.lists(PATHS.map("/".join), max_size=10))
def test_arm_ids_map_by_suffix_as_a_pass_over_the_library_would(library: set[str], raws: list[str]) -> None:
    ids = {normalize_id(x) for x in library if normalize_id(x)}
    mapper = ArmMapper(ids, ())
    taken = set(list(ids)[:2])
    for raw in raws:
        if raw.startswith("/"):
            continue  # absolute paths are made relative to a root first (tests/core/test_interop.py)
        assert mapper.map(raw, taken) == _old_map(raw, ids, taken)


def test_an_import_of_forty_thousand_arms(tmp_path: Path) -> None:
    """Exact ids, suffix matches and clashes over a big state file (quadratic before: 14.7 s)."""
    n = 40_000
    library = {f"cat{i % 7}/lesson-{i}.md" for i in range(n)}
    arms = {f"lessons/cat{i % 7}/lesson-{i}.md": {"alpha": 2.0, "beta": 3.0} for i in range(0, n, 2)}
    arms.update({f"old/place/cat{i % 7}/lesson-{i}.md": {"alpha": 1.5, "beta": 1.5} for i in range(1, n, 2)})  # suffix
    path = tmp_path / "bandit-state.json"
    path.write_text(json.dumps({"arms": arms}))
    report = read_bandit_state(path, library, ())
    assert len(report.arms) == n and all(arm.matched for arm in report.arms)
    assert Counter(arm.lesson_id for arm in report.arms) == Counter(library)
    arms["cat0/lesson-0.md"] = {"alpha": 1.0, "beta": 1.0}  # a second arm naming lesson 0
    path.write_text(json.dumps({"arms": arms}))
    with pytest.raises(InteropError, match="several arms map to the same lesson"):
        read_bandit_state(path, library, ())
