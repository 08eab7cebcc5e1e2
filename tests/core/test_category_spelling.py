"""A kind of work spelt two ways (`Code`, `code`, ` code `): `select` compares a session's kind with a lesson's
match.session_categories stripped and lower-cased, so the estimates read it the same way. Worlds written here
with numpy: lesson l0 adds +0.2 to the reward in code sessions only, l1 +0.2 in research sessions only, the
other lessons nothing; each lesson injected in 40% of the sessions, independently."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace

LESSONS = {f"l{j}.md": ([f"k{j}"], "active") for j in range(5)}
Spelling = Callable[[int, str], str]


def kinds_world(seed: int, spell: Spelling, n: int = 400) -> list[dict[str, Any]]:
    rng = np.random.default_rng([8, 8, seed])
    events: list[dict[str, Any]] = []
    for s in range(n):
        kind = "research" if rng.random() < 0.5 else "code"
        x = rng.random(5) < 0.4
        reward = 0.5 + 0.2 * x[0] * (kind == "code") + 0.2 * x[1] * (kind == "research") + rng.normal(0.0, 0.1)
        events.append(
            {
                "type": "session",
                "session_id": f"s{s:03d}",
                "base_reward": round(float(np.clip(reward, 0.0, 1.0)), 3),
                "lessons": [{"path": f"l{j}.md", "salience": 0.5} for j in np.flatnonzero(x)],
                "category": spell(s, kind),
            }
        )
    return events


def workspace(tmp_path: Path, name: str, seed: int, spell: Spelling) -> Workspace:
    return Workspace(make_workspace(tmp_path, LESSONS, kinds_world(seed, spell), name=name), clock=fixed_clock)


def capitalised(_: int, kind: str) -> str:
    return kind.capitalize()


def lower(_: int, kind: str) -> str:
    return kind


def mixed(s: int, kind: str) -> str:
    """`code`, `Code` and ` CODE ` in turn: three spellings of one kind of work."""
    return (kind, kind.capitalize(), f" {kind.upper()} ")[s % 3]


def test_select_for_code_draws_the_effects_the_log_has_for_Code(tmp_path: Path) -> None:
    for seed in range(3):
        post = workspace(tmp_path, f"w{seed}", seed, capitalised).joint_posterior()
        assert post.categories == ("Code", "Research")  # the log's spelling
        a, b = post.arm_ids.index("l0.md"), post.arm_ids.index("l1.md")
        for asked in ("code", "CODE", " code "):
            mean, sd = post.in_category(asked)
            # the kind the lesson filter reads `code` as: the draw is Code's, not the overall effect
            assert mean == pytest.approx(post.in_category("Code")[0], abs=1e-12)
            assert sd == pytest.approx(post.in_category("Code")[1], abs=1e-12)
            # truth in code: l0 +0.2, l1 0 (200 code sessions, 80 with each: sd of a difference about 0.015;
            # overall each is +0.1, which the old lookup drew)
            assert mean[a] == pytest.approx(0.2, abs=0.06) and mean[b] == pytest.approx(0.0, abs=0.06), (seed, asked)
        assert post.in_category("research")[0][b] > post.in_category("research")[0][a] + 0.1


def _numbers(ws: Workspace) -> tuple[Any, ...]:
    post = ws.joint_posterior()
    results = [r.as_json() for r in ws.loo(write=False)]
    return (
        results,
        post.mean.tolist(),
        post.sd.tolist(),
        post.baselines.tolist(),
        None if post.deviation is None else post.deviation.tolist(),
    )


def _kinds_lowered(value: Any) -> Any:
    """The numbers with each by_category key lower-cased (the names are a spelling the log used)."""
    if isinstance(value, dict):
        return {
            (key.strip().lower() if isinstance(key, str) and key.strip().lower() in ("code", "research") else key): (
                _kinds_lowered(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_kinds_lowered(item) for item in value]
    return value


def test_a_kind_spelt_three_ways_is_one_kind_in_every_estimate(tmp_path: Path) -> None:
    # the second way: the same log with one spelling; the fit, the claims, the category-controlled lifts, the
    # per-kind deviations and the policy's baselines are then the same numbers
    one = workspace(tmp_path, "one", 0, lower)
    three = workspace(tmp_path, "three", 0, mixed)
    want, got = _numbers(one), _numbers(three)
    assert _kinds_lowered(got) == _kinds_lowered(want)
    post = three.joint_posterior()
    assert len(post.categories) == 2 and {c.strip().lower() for c in post.categories} == {"code", "research"}
    l0 = next(r for r in three.loo(write=False) if r.path == "l0.md").as_json()["joint"]
    assert sorted(k.strip().lower() for k in l0["by_category"]) == ["code", "research"]
    assert l0["category_differs"] is True
    assert three.joint_fit().n_categories == 2


def test_a_kind_is_named_by_the_spelling_most_of_all_its_sessions_use() -> None:
    from lesson_credit.core.analysis.joint import kind_codes

    categories = ["code", "Code", "Code", " CODE ", None, "  ", "", "Research", "research"]
    # graded: all but the second `Code`. The name is counted over every session, pending ones too (it was
    # over the rows asked: ` CODE `, a tie of the graded ones, while `agreement` said `Code`): by hand code 1,
    # Code 2, ` CODE ` 1: `Code`; no kind 3 (None, blank, empty: named ""); research 1 and Research 1 (a tie:
    # "Research" sorts first)
    rows = np.array([0, 1, 3, 4, 5, 6, 7, 8])
    codes, names = kind_codes(categories, rows)
    assert names == ("", "Code", "Research")
    assert codes.tolist() == [1, 1, 1, 0, 0, 0, 2, 2]
    codes, names = kind_codes(categories, np.arange(len(categories)))  # every session: the same names
    assert names == ("", "Code", "Research")
    assert kind_codes(categories, np.array([7]))[1] == ("Research",)  # only the kinds of the rows asked
