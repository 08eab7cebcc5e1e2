"""A ground-truth world to measure credit assignment, with the real selection in the loop.

Each seed builds a *world* of lessons whose true effect on a session's reward is known:
most do nothing, some help, a few harm, and a lesson acts only in sessions where it is
relevant. How often a lesson is relevant differs widely between lessons (a Beta(0.5, 4)
draw per lesson) and leans towards one *home* session category; categories have different
baseline rewards, so a lesson that mostly matters in an easy category looks good for free.

Per session, a lesson becomes a *candidate* when its keywords match the context: a relevant
lesson with probability ``context_recall``, any other one when at least one of its K keywords
hits by accident (each with probability ``keyword_breadth``). The real selection math then
picks the injected lessons: a Thompson draw from each candidate's current posterior
(`core.model.beta.thompson_draw`) and the k best draws (`core.model.beta.top_k`); the propensities of the
run whose log feeds the leave-one-out estimators come from `lesson_credit.core.model.beta.p_top_k`. Salience is
simulated directly, without text: each of an injected lesson's keywords is mentioned in the
journal with probability ``mention_prob`` when it was relevant and ``keyword_breadth`` (a
spurious hit) either way, and salience is the mentioned share of its keywords. The reward is
the category's baseline plus the true effects of the injected relevant lessons plus Gaussian
noise, clipped to [0, 1]; posteriors are updated online with `lesson_credit.core.model.credit.credit`.

Every credit strategy (`seed`, `evidence`, `uniform`) runs its own bandit loop in the *same*
world: categories, relevance, candidate sets, keyword mentions and noise are drawn once per
seed (common random numbers), so strategies are compared pairwise, seed by seed. Two
reference policies run in the same world for scale: ``random`` (k candidates uniformly at
random) and ``oracle`` (the k candidates of highest true value; it knows the effects but not
which candidates are relevant this session).

**True value** of a lesson = its effect (after any sign flip: what an estimate should say at
the end) times P(relevant | candidate). Selection sees only the candidate set, never the
relevance itself, so this is exactly the expected reward gained by injecting the lesson when
selection is offered it, for any selection policy. The effect alone would rank a lesson that
is almost never relevant as high as one that is relevant every time it matches, yet nothing
in the logs can tell them apart by effect and injecting the first gains almost nothing; the
relevance frequency alone would ignore that P(relevant | candidate) also depends on how
often the lesson's keywords match by accident.

**Estimators**: each strategy's final posterior mean (on its own run); and, computed on *each*
credit strategy's own log and averaged over the three logs (per log in ``by_log``), the
leave-one-out lifts of `lesson_credit.core.analysis.effects.leave_one_out` -- naive, category-controlled and
propensity-weighted (IPW) --, the ``joint`` estimate of `lesson_credit.core.analysis.joint` (the headline of `loo`),
and the ``dropout`` estimate: kept-minus-withheld mean reward where the run withheld chosen
lessons at random (``Scenario.dropout``; undefined otherwise). An estimate that cannot be
computed (no session without the lesson, say) counts as 0, no evidence either way.

**Ceiling**: the best Spearman any estimator could reach on a log: non-null lessons in their
true order, the lessons of true value 0 in random order among themselves (nothing can order
them), over the same evaluated lessons. **Coverage**: the share of evaluated lessons whose
joint 90% interval covers the lesson's true average gain per injection in that log (its
effect when relevant times the share of its injections where it was relevant).

**Injection echo** (``injection_mention``): an injected lesson's keywords are mentioned in
the journal with that extra probability whether or not it was relevant (the agent quotes
the lesson it was given), so salience is partly caused by the injection itself.

**Metrics**, per seed, over the lessons injected at least once in the run the estimate comes
from (a never-injected lesson keeps the prior mean, which says nothing about it):
- Spearman's rho between estimate and true value (average ranks for ties);
- precision at 10: share of the 10 highest estimates that belong to truly helpful lessons;
- harmful detection: share of the truly harmful lessons that fall in the bottom 10% of the
  estimate (NaN for a seed where no harmful lesson was injected);
- cumulative regret of a run's selection: the sum over sessions of the best achievable gain
  (the k largest true gains among the candidates, relevant or not; an oracle that also knew
  relevance) minus the gain of the injected set. Gains are effects of relevant injected
  lessons, before noise and clipping.

Across seeds each metric is summarised by mean, standard deviation, and 10th/90th
percentiles. Everything is deterministic under the seeds: the same scenario and seeds give
the same report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.effects import Candidacy, leave_one_out
from lesson_credit.core.log.events import SessionEvent
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.snapshot import FoldData
from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.model.settings import CreditSettings

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

POLICIES = ("seed", "evidence", "uniform", "random", "oracle")
LOO_ESTIMATORS = ("loo-naive", "loo-category", "loo-ipw")
LOG_ESTIMATORS = (*LOO_ESTIMATORS, "joint", "dropout")  # computed on each credit strategy's log
ESTIMATORS = ("seed", "evidence", "uniform", *LOG_ESTIMATORS, "random", "oracle")
COVERAGE_Z = 1.6448536269514722  # 90% intervals
METRICS = ("spearman", "precision_at_10", "harmful_detection", "regret")
DEFAULT_SEEDS = 20
TOP_N = 10
BOTTOM_SHARE = 0.10

DESCRIPTIONS = {
    "seed": "posterior mean, seed credit (alpha += base*w, beta += 1 - base*w)",
    "evidence": "posterior mean, evidence credit (alpha += w*base, beta += w*(1 - base))",
    "uniform": "posterior mean, uniform credit (alpha += base, beta += 1 - base)",
    "loo-naive": "leave-one-out lift: mean reward with minus without",
    "loo-category": "leave-one-out lift within session categories (CMH weights)",
    "loo-ipw": "leave-one-out lift, self-normalised inverse-propensity weighted",
    "joint": "joint estimate: category baselines + every lesson's salience weight, empirical-Bayes prior",
    "dropout": "randomized: kept minus withheld mean reward where chosen lessons were withheld at random",
    "random": "reference selection: k candidates uniformly at random",
    "oracle": "reference selection: k candidates of highest true value",
}


# ---------------------------------------------------------------- scenario


MAX_SESSIONS = 1_000_000  # per run
MAX_LESSONS = 10_000
MAX_CELLS = 10_000_000  # lessons x sessions: each world holds a few float64 arrays of that size (80 MB each)
MAX_SEEDS = 10_000
MAX_SMALL = 1_000  # categories, keywords per lesson
MAX_DRAWS = 100_000  # propensity draws per session


def check_seeds(first: int, count: int) -> None:
    """ValueError (one line) unless `count` seeds from `first` are few enough to run."""
    if not 1 <= count <= MAX_SEEDS:
        raise ValueError(f"seeds must be at most {MAX_SEEDS:,}, got {count:,}")
    if not 0 <= first <= 2**63 - 1 - count:
        raise ValueError(f"the first seed must be in [0, 2**63 - seeds), got {first:,}")


@dataclass(frozen=True)
class Scenario:
    """Parameters of a simulated world and its bandit loops. Validated on construction."""

    name: str = "custom"
    n_lessons: int = 120
    n_sessions: int = 1500
    k: int = 8
    floor: float = 0.3
    noise: float = 0.15  # standard deviation of the Gaussian reward noise
    keyword_breadth: float = 0.05  # P(one keyword hits by accident), in the context and in the journal
    n_categories: int = 4
    helpful_share: float = 0.10
    harmful_share: float = 0.05
    effect_size: float = 0.15  # |effect| is effect_size * U(0.5, 1.5)
    mention_prob: float = 0.7  # P(a relevant lesson's keyword is mentioned in the journal)
    context_recall: float = 0.8  # P(a relevant lesson matches the context, i.e. is a candidate)
    relevance_a: float = 0.5  # relevance frequency ~ Beta(relevance_a, relevance_b) per lesson
    relevance_b: float = 4.0
    category_affinity: float = 0.5  # 0: relevance ignores categories; 1: relevant only in its home category
    baseline_mean: float = 0.55
    baseline_spread: float = 0.3  # category baselines evenly spaced over baseline_mean -/+ spread/2
    keywords_min: int = 2
    keywords_max: int = 6
    paired_share: float = 0.0  # share of lessons in always-paired couples
    flip_at: float | None = None  # share of sessions after which every effect changes sign
    decay: float = 1.0  # posterior decay gamma in (0, 1], as in CreditSettings
    loo_log: str = "uniform"  # kept for old scenario files: every strategy's log is now scored
    propensity_draws: int = 200  # Monte Carlo draws of lesson_credit.core.model.beta.p_top_k per session
    injection_mention: float = 0.0  # extra P(an injected lesson's keyword is mentioned), relevant or not
    dropout: float = 0.0  # P(a chosen lesson is withheld at random), a randomized trial in the loop

    def __post_init__(self) -> None:
        def integer(name: str, low: int, high: int) -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
            if value > high:
                shown = {"n_lessons": "lessons", "n_sessions": "sessions"}.get(name, name)
                raise ValueError(f"{shown} must be at most {high:,}, got {value:,}")

        def unit(name: str) -> None:
            credit_mod.check_unit(getattr(self, name), name)

        def positive(name: str) -> None:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value < math.inf):
                raise ValueError(f"{name} must be a positive number, got {value!r}")

        if not isinstance(self.name, str) or not self.name:
            raise ValueError("name must be a non-empty string")
        integer("n_lessons", 2, MAX_LESSONS)
        integer("n_sessions", 1, MAX_SESSIONS)
        integer("k", 1, self.n_lessons)
        integer("n_categories", 1, MAX_SMALL)
        integer("keywords_min", 1, MAX_SMALL)
        integer("keywords_max", 1, MAX_SMALL)
        integer("propensity_draws", 1, MAX_DRAWS)
        if self.n_lessons * self.n_sessions > MAX_CELLS:
            raise ValueError(
                f"lessons x sessions must be at most {MAX_CELLS:,}, got {self.n_lessons:,} x {self.n_sessions:,}"
            )
        if self.keywords_max < self.keywords_min:
            raise ValueError(f"keywords_max ({self.keywords_max}) must be >= keywords_min ({self.keywords_min})")
        for name in (
            "floor",
            "keyword_breadth",
            "helpful_share",
            "harmful_share",
            "effect_size",
            "mention_prob",
            "context_recall",
            "category_affinity",
            "baseline_mean",
            "paired_share",
            "injection_mention",
            "dropout",
        ):
            unit(name)
        if self.helpful_share + self.harmful_share > 1.0:
            raise ValueError("helpful_share + harmful_share must be at most 1")
        if isinstance(self.noise, bool) or not isinstance(self.noise, (int, float)) or not (0 <= self.noise < math.inf):
            raise ValueError(f"noise must be a number >= 0, got {self.noise!r}")
        positive("relevance_a")
        positive("relevance_b")
        unit("baseline_spread")
        low = self.baseline_mean - self.baseline_spread / 2
        high = self.baseline_mean + self.baseline_spread / 2
        if low < 0 or high > 1:
            raise ValueError(f"category baselines must lie in [0, 1], got {low:g}..{high:g}")
        if self.flip_at is not None and not (0.0 < self.flip_at < 1.0):
            raise ValueError(f"flip_at must be None or in (0, 1), got {self.flip_at!r}")
        CreditSettings(decay=self.decay)  # validates decay
        credit_mod.check_strategy(self.loo_log)

    def with_(self, **changes: Any) -> Scenario:
        return replace(self, **changes)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


SCENARIOS: dict[str, Scenario] = {
    "default": Scenario(name="default"),
    # keywords that hit by accident a quarter of the time: big candidate sets, salient noise
    "broad-keywords": Scenario(name="broad-keywords", keyword_breadth=0.25),
    # half the lessons come in couples that are relevant, matched and injected together
    "always-paired": Scenario(name="always-paired", paired_share=0.5),
    # every effect changes sign halfway through; metrics judge against the final effects
    "sign-flip": Scenario(name="sign-flip", flip_at=0.5),
    # a tenth of the history
    "few-sessions": Scenario(name="few-sessions", n_sessions=150),
    # the agent quotes what it was given: half of an injected lesson's keywords echo into the journal
    "injection-echo": Scenario(name="injection-echo", injection_mention=0.5),
    # a fifth of the chosen lessons withheld at random (gptme's LESSON_DROPOUT_EPSILON = 0.2)
    "dropout": Scenario(name="dropout", dropout=0.2),
}


def scenario(name: str, **changes: Any) -> Scenario:
    """A named scenario, optionally with parameters changed (e.g. from CLI options)."""
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r} (expected one of {', '.join(SCENARIOS)})")
    return SCENARIOS[name].with_(**changes) if changes else SCENARIOS[name]


# ---------------------------------------------------------------- metrics


def average_ranks(values: FloatArray) -> FloatArray:
    """1-based ranks, ties sharing the average of their positions (like scipy.stats.rankdata)."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n == 0:
        return np.zeros(0)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    ends = np.r_[starts[1:], n]
    group_rank = (starts + ends + 1) / 2.0  # mean of positions start+1 .. end
    ranks = np.empty(n)
    ranks[order] = np.repeat(group_rank, ends - starts)
    return ranks


def spearman(estimate: FloatArray, truth: FloatArray) -> float:
    """Spearman's rho (Pearson correlation of average ranks); NaN when either side is constant."""
    a = average_ranks(np.asarray(estimate, dtype=np.float64))
    b = average_ranks(np.asarray(truth, dtype=np.float64))
    if len(a) < 2:
        return math.nan
    a = a - a.mean()
    b = b - b.mean()
    denominator = math.sqrt(float((a * a).sum()) * float((b * b).sum()))
    if denominator == 0:
        return math.nan
    return float((a * b).sum()) / denominator


def precision_at_k(estimate: FloatArray, relevant: BoolArray, k: int = TOP_N) -> float:
    """Share of the k highest estimates (ties broken by position) whose item is marked relevant."""
    estimate = np.asarray(estimate, dtype=np.float64)
    n = min(k, len(estimate))
    if n == 0:
        return math.nan
    top = beta_mod.top_k(estimate, n)
    return float(np.asarray(relevant, dtype=bool)[top].mean())


def bottom_detection(estimate: FloatArray, flagged: BoolArray, share: float = BOTTOM_SHARE) -> float:
    """Share of the flagged items that land in the bottom `share` (at least one item) of the estimate."""
    estimate = np.asarray(estimate, dtype=np.float64)
    flagged = np.asarray(flagged, dtype=bool)
    if not flagged.any():
        return math.nan
    n_bottom = max(1, math.ceil(share * len(estimate) - 1e-9))
    bottom = beta_mod.top_k(-estimate, n_bottom)
    return float(flagged[bottom].sum() / flagged.sum())


# ---------------------------------------------------------------- the world


@dataclass(frozen=True)
class World:
    """One seed's ground truth and everything the sessions draw from it (shared by all policies)."""

    effect: FloatArray  # (L,) effect before any flip
    final_effect: FloatArray  # (L,) effect after the flip (= effect without one)
    flip_session: int  # first session with the final effects (n_sessions without a flip)
    relevance_freq: FloatArray  # (L,) P(relevant) averaged over categories
    p_relevant_given_candidate: FloatArray  # (L,)
    n_keywords: IntArray  # (L,)
    home: IntArray  # (L,) home category
    partner: IntArray  # (L,) always-paired partner, -1 for none
    baseline: FloatArray  # (C,)
    session_category: IntArray  # (T,)
    relevant: BoolArray  # (T, L)
    candidates: tuple[IntArray, ...]  # per session, candidate lesson indices (ascending)
    salience: FloatArray  # (T, L) salience the journal would give each lesson if it were injected
    noise: FloatArray  # (T,)
    best: FloatArray  # (T,) best achievable gain per session

    @property
    def n_lessons(self) -> int:
        return len(self.effect)

    @property
    def n_sessions(self) -> int:
        return len(self.noise)

    @property
    def value(self) -> FloatArray:
        """True value: final effect * P(relevant | candidate)."""
        result: FloatArray = self.final_effect * self.p_relevant_given_candidate
        return result

    @property
    def helpful(self) -> BoolArray:
        result: BoolArray = self.final_effect > 0
        return result

    @property
    def harmful(self) -> BoolArray:
        result: BoolArray = self.final_effect < 0
        return result

    def effect_at(self, session: int) -> FloatArray:
        return self.effect if session < self.flip_session else self.final_effect

    def gain(self, session: int) -> FloatArray:
        """(L,) true gain of injecting each lesson in this session: its effect if relevant, else 0."""
        result: FloatArray = self.effect_at(session) * self.relevant[session]
        return result


def make_world(sc: Scenario, seed: int) -> World:
    """Draw one seed's world. Deterministic in (scenario, seed)."""
    rng = np.random.default_rng([seed, 0])
    n_l, n_t, n_c = sc.n_lessons, sc.n_sessions, sc.n_categories

    # effects: a fixed number of helpful and harmful lessons at random positions
    n_help = round(sc.helpful_share * n_l)
    n_harm = min(round(sc.harmful_share * n_l), n_l - n_help)
    sign = np.zeros(n_l)
    order = rng.permutation(n_l)
    sign[order[:n_help]] = 1.0
    sign[order[n_help : n_help + n_harm]] = -1.0
    effect = sign * sc.effect_size * rng.uniform(0.5, 1.5, n_l)

    freq = rng.beta(sc.relevance_a, sc.relevance_b, n_l)
    n_keywords = rng.integers(sc.keywords_min, sc.keywords_max + 1, n_l).astype(np.int64)
    home = rng.integers(0, n_c, n_l).astype(np.int64)

    # always-paired couples: each lesson with an effect first takes a null partner, then nulls pair up
    partner = np.full(n_l, -1, dtype=np.int64)
    n_pairs = int(sc.paired_share * n_l) // 2
    if n_pairs:
        active = list(rng.permutation(np.flatnonzero(sign != 0)))
        nulls = list(rng.permutation(np.flatnonzero(sign == 0)))
        couples: list[tuple[int, int]] = []
        while len(couples) < n_pairs and active and nulls:
            couples.append((int(active.pop()), int(nulls.pop())))
        rest = nulls + active
        while len(couples) < n_pairs and len(rest) >= 2:
            couples.append((int(rest.pop()), int(rest.pop())))
        for lead, follower in couples:
            partner[lead], partner[follower] = follower, lead
            # the couple is about the same thing: the follower copies what decides relevance and matching
            freq[follower], n_keywords[follower], home[follower] = freq[lead], n_keywords[lead], home[lead]

    # P(relevant) per (lesson, category): home category boosted, average over categories = freq
    if n_c > 1:
        p_home = np.minimum(1.0, freq * (1.0 + sc.category_affinity * (n_c - 1)))
        p_other = freq * (1.0 - sc.category_affinity)
        p_rel = np.where(np.arange(n_c)[None, :] == home[:, None], p_home[:, None], p_other[:, None])
    else:
        p_rel = freq[:, None].copy()
    spurious = 1.0 - (1.0 - sc.keyword_breadth) ** n_keywords  # P(context matches an irrelevant lesson)
    cand_rel = (p_rel * sc.context_recall).mean(axis=1)
    cand_all = cand_rel + ((1.0 - p_rel) * spurious[:, None]).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_rel_cand = np.where(cand_all > 0, cand_rel / cand_all, 0.0)

    baseline = (
        np.linspace(sc.baseline_mean - sc.baseline_spread / 2, sc.baseline_mean + sc.baseline_spread / 2, n_c)
        if n_c > 1
        else np.array([sc.baseline_mean])
    )
    session_category = rng.integers(0, n_c, n_t).astype(np.int64)
    relevant = rng.random((n_t, n_l)) < p_rel.T[session_category]
    matched = np.where(relevant, rng.random((n_t, n_l)) < sc.context_recall, False)
    matched |= ~relevant & (rng.random((n_t, n_l)) < spurious[None, :])
    followers = np.flatnonzero((partner >= 0) & (np.arange(n_l) > partner))
    if len(followers):
        leads = partner[followers]
        relevant[:, followers] = relevant[:, leads]
        matched[:, followers] = matched[:, leads]
    # salience: each keyword mentioned with mention_prob when relevant, or by accident
    p_mention = np.where(relevant, 1.0 - (1.0 - sc.mention_prob) * (1.0 - sc.keyword_breadth), sc.keyword_breadth)
    # salience is only ever read for injected lessons, so the echo of the injection applies to every entry
    if sc.injection_mention > 0:
        p_mention = 1.0 - (1.0 - p_mention) * (1.0 - sc.injection_mention)
    hits = rng.binomial(np.broadcast_to(n_keywords, (n_t, n_l)), p_mention)
    salience = hits / n_keywords[None, :]
    noise = rng.normal(0.0, sc.noise, n_t) if sc.noise > 0 else np.zeros(n_t)

    flip_session = n_t if sc.flip_at is None else int(round(sc.flip_at * n_t))
    final_effect = effect if sc.flip_at is None else -effect
    times = np.arange(n_t)[:, None]
    gain = np.where(times < flip_session, effect[None, :], final_effect[None, :]) * relevant
    masked = np.where(matched, gain, -np.inf)
    top = -np.sort(-masked, axis=1)[:, : sc.k]
    best = np.where(np.isfinite(top), top, 0.0).sum(axis=1)

    return World(
        effect=effect,
        final_effect=final_effect,
        flip_session=flip_session,
        relevance_freq=p_rel.mean(axis=1),
        p_relevant_given_candidate=p_rel_cand,
        n_keywords=n_keywords,
        home=home,
        partner=partner,
        baseline=baseline,
        session_category=session_category,
        relevant=relevant,
        candidates=tuple(np.flatnonzero(row).astype(np.int64) for row in matched),
        salience=salience,
        noise=noise,
        best=best,
    )


# ---------------------------------------------------------------- one policy's loop


@dataclass(frozen=True)
class Run:
    """What one selection policy did in a world: its log, final posterior and regret."""

    policy: str
    alpha: FloatArray  # (L,) final posterior (prior Beta(1, 1)); untouched for reference policies
    beta: FloatArray
    injections: IntArray  # (L,) sessions each lesson was injected in
    entry_arm: npt.NDArray[np.int32]  # the log, as the fold's columns
    entry_salience: FloatArray
    entry_session: npt.NDArray[np.int32]
    session_start: IntArray
    reward: FloatArray  # (T,) base reward of each session
    regret: FloatArray  # (T,) per-session regret
    candidacy_row: IntArray  # (session, arm, propensity) of every candidate, when propensities were drawn
    candidacy_arm: IntArray
    candidacy_propensity: FloatArray
    entry_gain: FloatArray = field(default_factory=lambda: np.zeros(0))  # true gain of each injection
    withheld_session: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # dropout
    withheld_arm: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def true_gain_per_injection(self) -> FloatArray:
        """(L,) each lesson's average true gain over the sessions it was injected in (NaN: never)."""
        n = len(self.alpha)
        total = np.bincount(self.entry_arm, weights=self.entry_gain, minlength=n)
        with np.errstate(divide="ignore", invalid="ignore"):
            result: FloatArray = total / self.injections
        return result

    def dropout_estimate(self) -> FloatArray:
        """(L,) mean reward when chosen and kept minus when chosen and withheld (NaN without both)."""
        n = len(self.alpha)
        if not len(self.withheld_arm):
            return np.full(n, np.nan)
        kept = np.bincount(self.entry_arm, weights=self.reward[self.entry_session], minlength=n)
        held_n = np.bincount(self.withheld_arm, minlength=n)
        held = np.bincount(self.withheld_arm, weights=self.reward[self.withheld_session], minlength=n)
        with np.errstate(divide="ignore", invalid="ignore"):
            result: FloatArray = np.where(
                (self.injections > 0) & (held_n > 0), kept / self.injections - held / held_n, np.nan
            )
        return result

    @property
    def cumulative_regret(self) -> float:
        return float(self.regret.sum())

    def fold_data(self) -> FoldData:
        """The run's log as the fold sees it, built through `LogIndex` from session events.

        Arm ids are `lesson_ids()`; an arm's index is the order of its first injection, so map
        results back through `arm_ids`."""
        ids = lesson_ids(len(self.alpha))
        index = LogIndex()
        starts = self.session_start.tolist()
        arms = self.entry_arm.tolist()
        saliences = self.entry_salience.tolist()
        for t, r in enumerate(self.reward.tolist()):
            lo, hi = starts[t], starts[t + 1]
            index.add(
                t + 1,
                SessionEvent(
                    session_id=f"s{t}",
                    timestamp=None,
                    base_reward=r,
                    lesson_ids=tuple(ids[a] for a in arms[lo:hi]),
                    saliences=tuple(saliences[lo:hi]),
                    grader="simulated",
                ),
            )
        return index.snapshot()

    def candidacies(self, data: FoldData) -> list[Candidacy]:
        """Logged candidate propensities, with arms indexed like `data` (from `fold_data()`)."""
        position = {int(lesson_id[1:]): i for i, lesson_id in enumerate(data.arm_ids)}
        return [
            Candidacy(row, position[arm], prop)
            for row, arm, prop in zip(
                self.candidacy_row.tolist(),
                self.candidacy_arm.tolist(),
                self.candidacy_propensity.tolist(),
                strict=True,
            )
            if arm in position
        ]


def lesson_ids(n: int) -> tuple[str, ...]:
    width = max(3, len(str(n - 1)))
    return tuple(f"l{i:0{width}d}" for i in range(n))


def _keep_pairs(ordered: IntArray, partner: IntArray, k: int) -> IntArray:
    """Walk candidates best first, each with its partner, skipping couples that no longer fit in k."""
    chosen: list[int] = []
    taken: set[int] = set()
    for lesson in ordered.tolist():
        if lesson in taken:
            continue
        mate = int(partner[lesson])
        unit = [lesson] if mate < 0 or mate in taken else [lesson, mate]
        if len(chosen) + len(unit) > k:
            continue
        chosen.extend(unit)
        taken.update(unit)
        if len(chosen) == k:
            break
    return np.array(chosen, dtype=np.int64)


def run_policy(world: World, sc: Scenario, policy: str, seed: int, *, propensities: bool = False) -> Run:
    """One selection policy's loop over the world's sessions. Bandit policies learn online."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (expected one of {', '.join(POLICIES)})")
    bandit = policy in credit_mod.STRATEGIES
    n_l, n_t, k = world.n_lessons, world.n_sessions, sc.k
    rng = np.random.default_rng([seed, 1, POLICIES.index(policy)])
    prop_rng = np.random.default_rng([seed, 2, POLICIES.index(policy)])
    drop_rng = np.random.default_rng([seed, 3, POLICIES.index(policy)])
    keep_share = 1.0 - sc.dropout
    withheld_rows: list[IntArray] = []
    withheld_arms: list[IntArray] = []
    gains: list[FloatArray] = []
    alpha = np.ones(n_l)
    beta = np.ones(n_l)
    paired = bool((world.partner >= 0).any())
    value_before = world.effect * world.p_relevant_given_candidate
    value_after = world.value
    floor, decay = sc.floor, sc.decay

    chosen_list: list[IntArray] = []
    reward = np.empty(n_t)
    regret = np.empty(n_t)
    cand_rows: list[IntArray] = []
    cand_arms: list[IntArray] = []
    cand_props: list[FloatArray] = []
    effect = world.effect
    relevant = world.relevant
    salience = world.salience
    baseline = world.baseline[world.session_category]
    for t in range(n_t):
        if t == world.flip_session:
            effect = world.final_effect
        cand = world.candidates[t]
        n = len(cand)
        depth = n if paired else k
        if bandit:
            a, b = alpha[cand], beta[cand]
            ordered = cand[beta_mod.top_k(beta_mod.thompson_draw(a, b, rng), depth)]
            if propensities and n:
                cand_rows.append(np.full(n, t, dtype=np.int64))
                cand_arms.append(cand)
                cand_props.append(beta_mod.p_top_k(a, b, k, prop_rng, sc.propensity_draws) * keep_share)
        elif policy == "random":
            ordered = cand[rng.permutation(n)[:depth]]
        else:  # oracle
            value = value_before if t < world.flip_session else value_after
            ordered = cand[beta_mod.top_k(value[cand], depth)]
        chosen = _keep_pairs(ordered, world.partner, k) if paired else ordered
        if sc.dropout > 0 and len(chosen):
            out = drop_rng.random(len(chosen)) < sc.dropout
            if out.any():
                withheld_rows.append(np.full(int(out.sum()), t, dtype=np.int64))
                withheld_arms.append(chosen[out])
                chosen = chosen[~out]
        entry_gain = effect[chosen] * relevant[t, chosen]
        gains.append(entry_gain)
        gain = float(entry_gain.sum())
        r = min(1.0, max(0.0, baseline[t] + gain + world.noise[t]))
        reward[t] = r
        regret[t] = round(world.best[t] - gain, 12)  # >= 0; rounding drops float dust
        chosen_list.append(chosen)
        if bandit:
            if decay < 1.0:
                alpha = 1.0 + decay * (alpha - 1.0)
                beta = 1.0 + decay * (beta - 1.0)
            w = credit_mod.weight(salience[t, chosen], floor)
            d_alpha, d_beta = credit_mod.credit(r, w, policy)
            alpha[chosen] += d_alpha
            beta[chosen] += d_beta

    sizes = np.array([len(c) for c in chosen_list], dtype=np.int64)
    entry_arm = np.concatenate(chosen_list) if n_t else np.zeros(0, dtype=np.int64)
    entry_session = np.repeat(np.arange(n_t), sizes)
    return Run(
        policy=policy,
        alpha=alpha,
        beta=beta,
        injections=np.bincount(entry_arm, minlength=n_l).astype(np.int64),
        entry_arm=entry_arm.astype(np.int32),
        entry_salience=salience[entry_session, entry_arm].astype(np.float64),
        entry_session=entry_session.astype(np.int32),
        session_start=np.r_[0, np.cumsum(sizes)].astype(np.int64),
        reward=reward,
        regret=regret,
        candidacy_row=np.concatenate(cand_rows) if cand_rows else np.zeros(0, dtype=np.int64),
        candidacy_arm=np.concatenate(cand_arms) if cand_arms else np.zeros(0, dtype=np.int64),
        candidacy_propensity=np.concatenate(cand_props) if cand_props else np.zeros(0),
        entry_gain=np.concatenate(gains) if gains else np.zeros(0),
        withheld_session=np.concatenate(withheld_rows) if withheld_rows else np.zeros(0, dtype=np.int64),
        withheld_arm=np.concatenate(withheld_arms) if withheld_arms else np.zeros(0, dtype=np.int64),
    )


# ---------------------------------------------------------------- one seed


@dataclass(frozen=True)
class SeedResult:
    """Metrics of every estimator in one seed's world: {estimator: {metric: value}}; NaN = undefined.

    Log-based estimators' metrics are the mean over the credit strategies' logs; `by_log` has each."""

    seed: int
    metrics: Mapping[str, Mapping[str, float]]
    by_log: Mapping[str, Mapping[str, Mapping[str, float]]] = field(default_factory=dict)  # estimator -> log -> m
    ceiling: float = math.nan  # best achievable Spearman, mean over the logs
    coverage: float = math.nan  # share of lessons whose joint 90% interval covers the true gain per injection


def estimate_metrics(world: World, estimate: FloatArray, evaluated: BoolArray) -> dict[str, float]:
    """Spearman, precision@10 and harmful detection of an estimate over the evaluated lessons."""
    est = np.asarray(estimate, dtype=np.float64)[evaluated]
    return {
        "spearman": spearman(est, world.value[evaluated]),
        "precision_at_10": precision_at_k(est, world.helpful[evaluated], TOP_N),
        "harmful_detection": bottom_detection(est, world.harmful[evaluated], BOTTOM_SHARE),
    }


def ceiling_spearman(value: FloatArray, rng: np.random.Generator) -> float:
    """Spearman of the best achievable estimate: non-null lessons in true order, nulls in random order."""
    value = np.asarray(value, dtype=np.float64)
    nonzero = np.abs(value[value != 0])
    eps = 0.5 * float(nonzero.min()) if len(nonzero) else 1.0
    estimate = np.where(value != 0, value, rng.uniform(-eps, eps, len(value)))
    return spearman(estimate, value)


def _nanmean(values: Sequence[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.mean(finite)) if finite else math.nan


def _log_estimates(world: World, sc: Scenario, run: Run, seed: int) -> tuple[dict[str, FloatArray], float, float]:
    """Every log-based estimate on one run's log (indexed by lesson), its ceiling and the joint's coverage."""
    from lesson_credit.core.analysis.joint import build_design, fit_joint

    categories = [f"c{c}" for c in world.session_category.tolist()]
    data = run.fold_data()
    fit = fit_joint(build_design(data, categories, sc.floor))
    results = leave_one_out(data, categories, run.candidacies(data), floor=sc.floor, joint=fit)
    arm_of = np.array([int(a[1:]) for a in data.arm_ids], dtype=np.int64)
    out: dict[str, FloatArray] = {}
    for name, attribute in zip(LOO_ESTIMATORS, ("delta", "delta_category", "delta_ipw"), strict=True):
        estimate = np.zeros(world.n_lessons)
        estimate[arm_of] = [0.0 if x is None else float(x) for x in (getattr(r, attribute) for r in results)]
        out[name] = estimate
    joint = np.zeros(world.n_lessons)
    joint[arm_of] = np.nan_to_num(fit.estimate)
    out["joint"] = joint
    dropout = run.dropout_estimate()
    out["dropout"] = np.where(np.isfinite(dropout), dropout, 0.0) if np.isfinite(dropout).any() else dropout
    evaluated = run.injections > 0
    ceiling = ceiling_spearman(world.value[evaluated], np.random.default_rng([seed, 4]))
    low, high = fit.interval(COVERAGE_Z)
    truth = run.true_gain_per_injection()[arm_of]
    known = np.isfinite(low) & np.isfinite(truth)
    coverage = float(np.mean((low[known] <= truth[known]) & (truth[known] <= high[known]))) if known.any() else math.nan
    return out, ceiling, coverage


def simulate_seed(sc: Scenario, seed: int) -> SeedResult:
    """Build the seed's world, run every policy in it, and score every estimator."""
    world = make_world(sc, seed)
    metrics: dict[str, dict[str, float]] = {}
    runs: dict[str, Run] = {}
    for policy in POLICIES:
        run = run_policy(world, sc, policy, seed, propensities=policy in credit_mod.STRATEGIES)
        runs[policy] = run
        if policy in credit_mod.STRATEGIES:
            mean = beta_mod.mean(run.alpha, run.beta)
            metrics[policy] = estimate_metrics(world, mean, run.injections > 0)
        else:
            metrics[policy] = {"spearman": math.nan, "precision_at_10": math.nan, "harmful_detection": math.nan}
        metrics[policy]["regret"] = run.cumulative_regret

    by_log: dict[str, dict[str, dict[str, float]]] = {name: {} for name in LOG_ESTIMATORS}
    ceilings, coverages = [], []
    for log in credit_mod.STRATEGIES:
        source = runs[log]
        estimates, ceiling, coverage = _log_estimates(world, sc, source, seed)
        ceilings.append(ceiling)
        coverages.append(coverage)
        evaluated = source.injections > 0
        for name in LOG_ESTIMATORS:
            if np.isfinite(estimates[name]).any():
                by_log[name][log] = estimate_metrics(world, estimates[name], evaluated)
            else:  # no data for it at all (no dropout in this world)
                by_log[name][log] = {"spearman": math.nan, "precision_at_10": math.nan, "harmful_detection": math.nan}
    for name in LOG_ESTIMATORS:
        metrics[name] = {
            m: _nanmean([by_log[name][log][m] for log in credit_mod.STRATEGIES]) for m in METRICS if m != "regret"
        }
        metrics[name]["regret"] = math.nan
    return SeedResult(
        seed=seed,
        metrics={name: metrics[name] for name in ESTIMATORS},
        by_log=by_log,
        ceiling=_nanmean(ceilings),
        coverage=_nanmean(coverages),
    )


# ---------------------------------------------------------------- many seeds


def _clean(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class MetricSummary:
    """One metric of one estimator across seeds (seeds where it is undefined are left out)."""

    mean: float
    std: float
    p10: float
    p90: float
    n: int  # seeds with a defined value

    @classmethod
    def of(cls, values: Sequence[float]) -> MetricSummary:
        x = np.array([v for v in values if math.isfinite(v)], dtype=np.float64)
        if not len(x):
            return cls(math.nan, math.nan, math.nan, math.nan, 0)
        std = float(x.std(ddof=1)) if len(x) > 1 else 0.0
        return cls(float(x.mean()), std, float(np.quantile(x, 0.1)), float(np.quantile(x, 0.9)), len(x))

    def as_json(self) -> dict[str, Any]:
        return {
            "mean": _clean(self.mean),
            "std": _clean(self.std),
            "p10": _clean(self.p10),
            "p90": _clean(self.p90),
            "n": self.n,
        }


@dataclass(frozen=True)
class EstimatorSummary:
    """An estimator's metrics across seeds; None where a metric does not apply to it."""

    name: str
    kind: str  # "posterior" (own run), "loo" / "joint" / "randomized" (on every strategy's log), "reference"
    description: str
    spearman: MetricSummary | None
    precision_at_10: MetricSummary | None
    harmful_detection: MetricSummary | None
    regret: MetricSummary | None
    per_seed: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # metric -> value per seed

    def metric(self, name: str) -> MetricSummary | None:
        if name not in METRICS:
            raise ValueError(f"unknown metric {name!r} (expected one of {', '.join(METRICS)})")
        result: MetricSummary | None = getattr(self, name)
        return result

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "description": self.description}
        for metric in METRICS:
            summary = self.metric(metric)
            out[metric] = None if summary is None else summary.as_json()
        out["per_seed"] = {m: [_clean(v) for v in values] for m, values in self.per_seed.items()}
        return out


@dataclass(frozen=True)
class Comparison:
    """a minus b on one metric over the seeds where both are defined; `wins`: share where a is better."""

    a: str
    b: str
    metric: str
    mean_diff: float
    std_diff: float
    wins: float
    n: int

    def as_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "metric": self.metric,
            "mean_diff": _clean(self.mean_diff),
            "std_diff": _clean(self.std_diff),
            "wins": _clean(self.wins),
            "n": self.n,
        }


@dataclass(frozen=True)
class SimulationReport:
    scenario: Scenario
    seeds: tuple[int, ...]
    estimators: tuple[EstimatorSummary, ...]
    ceiling: tuple[float, ...] = ()  # best achievable Spearman per seed
    coverage: tuple[float, ...] = ()  # the joint's 90% interval coverage per seed
    by_log: Mapping[str, Mapping[str, tuple[float, ...]]] = field(default_factory=dict)  # est -> log -> spearman

    @property
    def ceiling_mean(self) -> float:
        return _nanmean(self.ceiling)

    @property
    def coverage_mean(self) -> float:
        return _nanmean(self.coverage)

    def versus_posterior(self, estimator: str = "joint") -> dict[str, Comparison]:
        """Per credit strategy: the estimator on that strategy's log minus its posterior, Spearman, seed by seed."""
        out = {}
        for strategy in credit_mod.STRATEGIES:
            x = np.array(self.by_log.get(estimator, {}).get(strategy, ()), dtype=np.float64)
            y = np.array(self.estimator(strategy).per_seed.get("spearman", ()), dtype=np.float64)
            if len(x) != len(y) or not len(x):
                out[strategy] = Comparison(estimator, strategy, "spearman", math.nan, math.nan, math.nan, 0)
                continue
            both = np.isfinite(x) & np.isfinite(y)
            diff = x[both] - y[both]
            std = float(diff.std(ddof=1)) if len(diff) > 1 else 0.0
            mean = float(diff.mean()) if len(diff) else math.nan
            wins = float((diff > 0).mean()) if len(diff) else math.nan
            out[strategy] = Comparison(estimator, strategy, "spearman", mean, std, wins, len(diff))
        return out

    def estimator(self, name: str) -> EstimatorSummary:
        for summary in self.estimators:
            if summary.name == name:
                return summary
        raise KeyError(name)

    def ranking(self, metric: str = "spearman") -> list[str]:
        """Estimators with the metric, best first (highest, or lowest for regret)."""
        scored = [(s.name, s.metric(metric)) for s in self.estimators]
        present = [(name, m.mean) for name, m in scored if m is not None and m.n]
        sign = 1.0 if metric == "regret" else -1.0
        return [name for name, _ in sorted(present, key=lambda item: sign * item[1])]

    def compare(self, a: str, b: str, metric: str = "spearman") -> Comparison:
        """Paired comparison of estimators a and b on a metric, seed by seed (the world is shared)."""
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r} (expected one of {', '.join(METRICS)})")
        x = np.array(self.estimator(a).per_seed.get(metric, ()), dtype=np.float64)
        y = np.array(self.estimator(b).per_seed.get(metric, ()), dtype=np.float64)
        if len(x) != len(self.seeds) or len(y) != len(self.seeds):
            return Comparison(a, b, metric, math.nan, math.nan, math.nan, 0)
        both = np.isfinite(x) & np.isfinite(y)
        diff = x[both] - y[both]
        if not len(diff):
            return Comparison(a, b, metric, math.nan, math.nan, math.nan, 0)
        better = diff < 0 if metric == "regret" else diff > 0
        std = float(diff.std(ddof=1)) if len(diff) > 1 else 0.0
        return Comparison(a, b, metric, float(diff.mean()), std, float(better.mean()), len(diff))

    def as_json(self) -> dict[str, Any]:
        versus = {
            metric: [
                self.compare(s.name, "seed", metric).as_json()
                for s in self.estimators
                if s.name != "seed" and s.metric(metric) is not None
            ]
            for metric in METRICS
        }
        return {
            "scenario": self.scenario.as_json(),
            "seeds": list(self.seeds),
            "metrics": {
                "spearman": "Spearman rho between estimate and true value (effect * P(relevant | candidate)), "
                "over lessons injected at least once",
                "precision_at_10": f"share of the {TOP_N} highest estimates that are truly helpful lessons",
                "harmful_detection": f"share of truly harmful lessons in the bottom {BOTTOM_SHARE:.0%} of the estimate",
                "regret": "sum over sessions of best achievable minus realised true gain of the selection",
            },
            "estimators": [s.as_json() for s in self.estimators],
            "ranking": {metric: self.ranking(metric) for metric in METRICS},
            "versus_seed": versus,
            "ceiling": _clean(self.ceiling_mean),
            "ceiling_per_seed": [_clean(v) for v in self.ceiling],
            "coverage": {
                "joint_90": _clean(self.coverage_mean),
                "per_seed": [_clean(v) for v in self.coverage],
                "target": [0.85, 0.95],
            },
            "by_log": {
                name: {log: MetricSummary.of(values).as_json() for log, values in logs.items()}
                for name, logs in self.by_log.items()
            },
            "joint_versus_posterior": {k: v.as_json() for k, v in self.versus_posterior("joint").items()},
        }


def _kind(name: str) -> str:
    if name in credit_mod.STRATEGIES:
        return "posterior"
    if name in LOO_ESTIMATORS:
        return "loo"
    if name == "joint":
        return "joint"
    if name == "dropout":
        return "randomized"
    return "reference"


def summarise(sc: Scenario, results: Sequence[SeedResult]) -> SimulationReport:
    estimators = []
    for name in ESTIMATORS:
        kind = _kind(name)
        per_seed = {m: tuple(float(r.metrics[name][m]) for r in results) for m in METRICS}
        applies = {
            "spearman": kind != "reference",
            "precision_at_10": kind != "reference",
            "harmful_detection": kind != "reference",
            "regret": kind in ("posterior", "reference"),
        }
        summaries = {m: MetricSummary.of(per_seed[m]) if applies[m] else None for m in METRICS}
        estimators.append(
            EstimatorSummary(
                name=name,
                kind=kind,
                description=DESCRIPTIONS[name],
                spearman=summaries["spearman"],
                precision_at_10=summaries["precision_at_10"],
                harmful_detection=summaries["harmful_detection"],
                regret=summaries["regret"],
                per_seed={m: v for m, v in per_seed.items() if applies[m]},
            )
        )
    by_log = {
        name: {
            log: tuple(float(r.by_log.get(name, {}).get(log, {}).get("spearman", math.nan)) for r in results)
            for log in credit_mod.STRATEGIES
        }
        for name in LOG_ESTIMATORS
    }
    return SimulationReport(
        scenario=sc,
        seeds=tuple(r.seed for r in results),
        estimators=tuple(estimators),
        ceiling=tuple(r.ceiling for r in results),
        coverage=tuple(r.coverage for r in results),
        by_log=by_log,
    )


def run_simulation(
    sc: Scenario,
    seeds: int | Sequence[int] = DEFAULT_SEEDS,
    progress: Callable[[int, int], None] | None = None,
) -> SimulationReport:
    """Simulate the scenario for each seed (an int n means seeds 0..n-1) and summarise across seeds.

    `progress(done, total)` is called after each seed. Same scenario and seeds, same report."""
    if isinstance(seeds, int):
        check_seeds(0, seeds)
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not seed_list:
        raise ValueError("at least one seed is needed")
    if len(seed_list) > MAX_SEEDS:
        raise ValueError(f"seeds must be at most {MAX_SEEDS:,}, got {len(seed_list):,}")
    if any(s < 0 for s in seed_list):
        raise ValueError("seeds must be non-negative integers")
    results = []
    for done, seed in enumerate(seed_list, start=1):
        results.append(simulate_seed(sc, seed))
        if progress is not None:
            progress(done, len(seed_list))
    return summarise(sc, results)


def format_report(report: SimulationReport) -> str:
    """A plain-text table: one row per estimator, mean +- sd [p10, p90] per metric."""

    def cell(summary: MetricSummary | None, digits: int) -> str:
        if summary is None or not summary.n:
            return "-"
        spread = f"[{summary.p10:.{digits}f}, {summary.p90:.{digits}f}]"
        return f"{summary.mean:.{digits}f} ±{summary.std:.{digits}f} {spread}"

    header = ("estimator", "spearman", "precision@10", "harmful in bottom 10%", "cumulative regret")
    rows = [
        (
            s.name,
            cell(s.spearman, 3),
            cell(s.precision_at_10, 2),
            cell(s.harmful_detection, 2),
            cell(s.regret, 1),
        )
        for s in report.estimators
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    sc = report.scenario
    lines = [
        f"scenario {sc.name}: {sc.n_lessons} lessons, {sc.n_sessions} sessions, k={sc.k}, floor={sc.floor}, "
        f"noise={sc.noise}, keyword_breadth={sc.keyword_breadth}; {len(report.seeds)} seeds; "
        "log-based estimators averaged over every credit strategy's own log",
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.append(f"ceiling (best achievable spearman): {report.ceiling_mean:.3f}")
    lines.append(f"joint 90% interval coverage: {report.coverage_mean:.1%} (target 85-95%)")
    versus = report.versus_posterior("joint")
    lines.append(
        "joint on each strategy's log minus its posterior (spearman, wins): "
        + "; ".join(f"{k} {v.mean_diff:+.3f} ({v.wins:.0%})" for k, v in versus.items() if v.n)
    )
    return "\n".join(lines)
