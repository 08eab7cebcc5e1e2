"""Do the intervals hold for the lessons that matter? Coverage of the claims' 90% intervals, scored
separately for lessons with a true effect and lessons without, in worlds written for this check
(not the project's simulator), each replicated over seeds.

    python -m bench.coverage               # every world, 40 seeds each (a few minutes)
    python -m bench.coverage --reps 5      # quicker
    python -m bench.coverage --only echo

A world draws sessions (a category with its own baseline, lessons injected by a popularity that
differs by category), lesson effects and rewards, and returns the regression design the engine
builds from a log (`core.analysis.joint.Design`) with the truth: each lesson's average change in
reward per injection over the sessions it was injected in. Scored per world:

- `identified`: share of lessons (with at least one injection) the claims identify;
- `cover_effect`: among identified lessons with a true effect, share whose 90% interval covers it;
- `cover_null`: the same among identified lessons without one (1 - false claims at 10%);
- `false_claims`: share of identified no-effect lessons whose interval excludes 0;
- `old_effect` / `old_null`: the same two coverages for the shrunk joint estimate's 90% posterior
  interval (what `loo` reported before), over every lesson it gives an interval;
- worlds with groups score the group's interval against the sum of its members' effects;
  `halfway` also scores the later half's interval against the current (second-half) effect.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lesson_credit.core.analysis.claims import Claims, lesson_claims  # noqa: E402
from lesson_credit.core.analysis.joint import Design, fit_joint, time_blocks  # noqa: E402

FloatArray = npt.NDArray[np.float64]
LEVEL = 0.90
Z90 = 1.6448536269514722


@dataclass
class Drawn:
    """One replicate: the design, each arm's true effect per injection, and extras for some worlds."""

    design: Design
    truth: FloatArray  # average effect per injection over the sessions it was injected in
    current: FloatArray | None = None  # the effect in force in the second half (`halfway`)
    groups: dict[tuple[int, ...], float] = field(default_factory=dict)  # members -> true group effect
    varies: npt.NDArray[np.bool_] | None = None  # arms whose effect changes halfway / differs by category


@dataclass(frozen=True)
class World:
    name: str
    description: str
    n: int = 2000
    p: int = 60
    k: int = 5
    categories: int = 4
    noise: float = 0.15
    share: float = 0.25  # lessons with an effect
    salience: str = "informative"  # informative (effect scales with salience) | constant | echo
    rewards: str = "gaussian"  # gaussian | hetero | binary
    by_category: bool = False
    halfway: bool = False
    pairs: int = 0  # lesson pairs always injected together
    fixed_k: bool = False  # every session injects exactly k lessons (select --k with enough matches)
    trend: bool = False  # the baseline rises 0.3 over the log while lessons' popularity drifts with time
    time: bool = True  # the fit's time blocks (--no-time: the fit without them, as before they were added)


WORLDS = [
    World("base", "effect scales with salience, Gaussian noise 0.15, 60 lessons x 2000 sessions"),
    World("hetero", "unequal-variance rewards: noise sd 0.05-0.35 by category and session", rewards="hetero"),
    World("binary", "binary 0/1 rewards, P(1) = baseline + effects", rewards="binary", n=3000),
    World("wide", "400 lessons x 300 sessions, 8 per session, skewed popularity", n=300, p=400, k=8),
    World("constant", "the effect acts whatever the salience (salience carries no information)", salience="constant"),
    World("category", "a quarter of the effects act in two categories of four only", by_category=True),
    World("halfway", "effects change halfway (half the effective lessons re-drawn, some nulls gain one)", halfway=True),
    World("echo", "salience rises with the reward: good sessions mention more keywords", salience="echo", share=0.1),
    World("together", "6 pairs always injected together, salience uninformative", salience="constant", pairs=6),
    World("fixed", "every session injects exactly 5 lessons (the base world otherwise)", fixed_k=True),
    World("small", "15 lessons x 120 sessions, 4 per session", n=120, p=15, k=4),
    World("wide-binary", "the wide world with binary rewards", n=300, p=400, k=8, rewards="binary"),
    World("trend", "baseline +0.3 over the log; each lesson's popularity drifts with time (a bandit)", trend=True),
]


def _effects(rng: np.random.Generator, p: int, share: float) -> FloatArray:
    active = rng.random(p) < share
    size = rng.uniform(0.03, 0.15, p) * rng.choice([-1.0, 1.0], p)
    return np.where(active, size, 0.0)


def draw(world: World, seed: int) -> Drawn:  # one long recipe, step by step; splitting it would hide the world
    rng = np.random.default_rng([seed, sum(map(ord, world.name))])
    n, p, k, c = world.n, world.p, world.k, world.categories
    category = rng.integers(0, c, n)
    baseline = rng.uniform(0.35, 0.65, c)
    popularity = (1.0 / np.arange(1, p + 1) ** (0.8 if world.p > 100 else 0.3))[rng.permutation(p)]
    by_cat = popularity[None, :] * np.exp(0.5 * rng.normal(size=(c, p)))
    keys = np.log(by_cat[category]) + rng.gumbel(size=(n, p))
    t = np.arange(n) / max(n - 1, 1)
    if world.trend:
        keys += rng.normal(0.0, 1.5, p)[None, :] * (t[:, None] - 0.5)
    ranked = np.argsort(-keys, axis=1)
    per_session = np.full(n, k) if world.fixed_k else rng.integers(max(k - 3, 1), k + 4, n)  # matched lessons vary
    x = np.zeros((n, p), dtype=bool)
    take = np.arange(p)[None, :] < per_session[:, None]
    x[np.repeat(np.arange(n), take.sum(axis=1)), ranked[take]] = True
    partner = np.arange(p)
    if world.pairs:
        for i in range(world.pairs):  # lesson 2i and 2i+1 always together
            a, b = 2 * i, 2 * i + 1
            both = x[:, a] | x[:, b]
            x[:, a] = x[:, b] = both
            partner[a], partner[b] = b, a
    beta = _effects(rng, p, world.share)
    if world.pairs:
        beta[1 : 2 * world.pairs : 2] = 0.0  # each pair: one member with an effect at most, its partner null
    salience = np.clip(rng.beta(2.0, 3.0, size=(n, p)), 0.0, 1.0)
    weight = 0.3 + 0.7 * salience
    scale = weight / 0.58 if world.salience == "informative" else np.ones((n, p))  # E[w] = 0.3 + 0.7 * 0.4
    effect = np.broadcast_to(beta, (n, p)).copy()
    current, varies = None, None
    if world.by_category:
        acting = rng.random(p) < 0.25
        mask = np.isin(category, [0, 1])[:, None] | ~acting[None, :]
        effect = np.where(mask, effect, 0.0)
        varies = acting & (beta != 0)
    if world.halfway:
        later = beta.copy()
        redraw = (beta != 0) & (rng.random(p) < 0.5)
        later[redraw] = _effects(rng, int(redraw.sum()), 1.0)
        gain = (beta == 0) & (rng.random(p) < 0.1)
        later[gain] = _effects(rng, int(gain.sum()), 1.0)
        effect[n // 2 :] = later
        current, varies = later, later != beta
    contribution = effect * scale * x
    mean = baseline[category] + contribution.sum(axis=1) + (0.3 * t - 0.15 if world.trend else 0.0)
    if world.rewards == "binary":
        reward = (rng.random(n) < np.clip(mean, 0.02, 0.98)).astype(np.float64)
    elif world.rewards == "hetero":
        sd = np.array([0.05, 0.1, 0.2, 0.35])[category % 4] * rng.uniform(0.5, 1.5, n)
        reward = mean + rng.normal(size=n) * sd
    else:
        reward = mean + rng.normal(size=n) * world.noise
    if world.salience == "echo":
        standard = (reward - reward.mean()) / max(float(reward.std()), 1e-9)
        salience = np.clip(salience + 0.15 * standard[:, None], 0.0, 1.0)
        weight = 0.3 + 0.7 * salience
    injected = x.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        truth = np.where(injected > 0, contribution.sum(axis=0) / injected, 0.0)
    groups: dict[tuple[int, ...], float] = {}
    for i in range(world.pairs):
        a, b = 2 * i, 2 * i + 1
        together = x[:, a] & x[:, b]
        groups[(a, b)] = float((contribution[together, a] + contribution[together, b]).mean())
    rows, arms = np.nonzero(x)
    design = Design(
        rows=np.arange(n, dtype=np.int64),
        reward=reward,
        category=category.astype(np.int64),
        n_categories=c,
        entry_row=rows.astype(np.int64),
        entry_arm=arms.astype(np.int64),
        entry_weight=weight[rows, arms],
        n_arms=p,
        category_names=tuple(f"c{i}" for i in range(c)),
        n_blocks=time_blocks(n) if world.time else 1,  # as build_design makes it from a log
    )
    return Drawn(design, truth, current, groups, varies)


@dataclass
class Tally:
    hits: int = 0
    total: int = 0

    def add(self, hit: npt.NDArray[np.bool_]) -> None:
        self.hits += int(hit.sum())
        self.total += int(hit.size)

    @property
    def rate(self) -> float:
        return self.hits / self.total if self.total else math.nan


@dataclass
class Score:
    identified: Tally = field(default_factory=Tally)
    cover_effect: Tally = field(default_factory=Tally)
    cover_null: Tally = field(default_factory=Tally)
    old_effect: Tally = field(default_factory=Tally)
    old_null: Tally = field(default_factory=Tally)
    cover_group: Tally = field(default_factory=Tally)
    cover_current: Tally = field(default_factory=Tally)
    headline_current: Tally = field(default_factory=Tally)  # later half when drifting, else the whole log
    drift_flag: Tally = field(default_factory=Tally)  # lessons whose effect changed, flagged drifting
    drift_false: Tally = field(default_factory=Tally)  # the others flagged drifting
    category_flag: Tally = field(default_factory=Tally)  # category-dependent lessons flagged category_differs
    category_false: Tally = field(default_factory=Tally)


def _intervals(claims: Claims, p: int) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    low, high = np.full(p, np.nan), np.full(p, np.nan)
    ok = np.zeros(p, dtype=bool)
    for arm in range(p):
        column = claims.of(arm)
        if column is None or not column.identified or len(column.arms) > 1 or column.effect is None:
            continue
        low[arm], high[arm] = column.effect.bounds(LEVEL)
        ok[arm] = True
    return low, high, ok


def score(world: World, drawn: Drawn, into: Score, solver: str = "auto") -> None:
    design, truth = drawn.design, drawn.truth
    p = design.n_arms
    claims = lesson_claims(design, solver=solver)
    low, high, ok = _intervals(claims, p)
    injected = np.bincount(design.entry_arm, minlength=p) > 0
    grouped = np.array([claims.grouped(a) for a in range(p)])
    singles = injected & ~grouped
    into.identified.add(ok[singles])
    real = truth != 0
    covered = (low <= truth) & (truth <= high)
    into.cover_effect.add(covered[ok & real])
    into.cover_null.add(covered[ok & ~real])
    fit = fit_joint(design, solver=solver)
    old_low, old_high = fit.interval(Z90)
    has = np.isfinite(old_low)
    old_cover = (old_low <= truth) & (truth <= old_high)
    into.old_effect.add(old_cover[has & real])
    into.old_null.add(old_cover[has & ~real])
    for members, value in drawn.groups.items():
        column = claims.of(members[0])
        if column is not None and column.identified and column.effect is not None and len(column.arms) > 1:
            lo, hi = column.effect.bounds(LEVEL)
            into.cover_group.add(np.array([lo <= value <= hi]))
    changes = drawn.varies if drawn.current is not None else np.zeros(p, dtype=bool)
    differs = drawn.varies if world.by_category and drawn.varies is not None else np.zeros(p, dtype=bool)
    assert changes is not None  # a world that sets `current` also sets `varies`
    for arm in np.flatnonzero(ok):
        column = claims.of(int(arm))
        assert column is not None and column.effect is not None
        (into.drift_flag if changes[arm] else into.drift_false).add(np.array([column.drifting]))
        (into.category_flag if differs[arm] else into.category_false).add(np.array([column.category_differs]))
        if drawn.current is None or drawn.current[arm] == 0:
            continue
        if column.later is not None:
            lo, hi = column.later.bounds(LEVEL)
            into.cover_current.add(np.array([lo <= drawn.current[arm] <= hi]))
        shown = column.later if column.drifting and column.later is not None else column.effect
        lo, hi = shown.bounds(LEVEL)
        into.headline_current.add(np.array([lo <= drawn.current[arm] <= hi]))


def run(worlds: list[World], reps: int, solver: str = "auto") -> dict[str, Score]:
    out = {}
    for world in worlds:
        result = Score()
        for seed in range(reps):
            score(world, draw(world, seed), result, solver)
        out[world.name] = result
    return out


def percent(tally: Tally) -> str:
    return "-" if not tally.total else f"{100 * tally.rate:.0f}% ({tally.total})"


def table(scores: dict[str, Score]) -> str:
    header = (
        "| world | identified | real effect covered | no effect covered | false claims | group covered "
        "| drifting: changed / not | category_differs: varies / not | before: real | before: none |"
    )
    lines = [header, "|" + "---|" * 10]
    for name, s in scores.items():
        false = Tally(s.cover_null.total - s.cover_null.hits, s.cover_null.total)
        lines.append(
            f"| {name} | {percent(s.identified)} | {percent(s.cover_effect)} | {percent(s.cover_null)} | "
            f"{percent(false)} | {percent(s.cover_group)} | {percent(s.drift_flag)} / {percent(s.drift_false)} | "
            f"{percent(s.category_flag)} / {percent(s.category_false)} | {percent(s.old_effect)} | "
            f"{percent(s.old_null)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--only", action="append")
    parser.add_argument("--solver", default="auto", choices=["auto", "dense", "iterative"])
    parser.add_argument("--no-time", action="store_true", help="fit without time blocks (the model before time blocks)")
    args = parser.parse_args(argv)
    worlds = [replace(w, time=not args.no_time) for w in WORLDS if not args.only or w.name in args.only]
    scores = run(worlds, args.reps, args.solver)
    print(table(scores))
    for name, s in scores.items():
        if s.cover_current.total:
            print(
                f"{name}: the later half's interval covers the current effect {percent(s.cover_current)}; "
                f"the headline's (later half when drifting) {percent(s.headline_current)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
