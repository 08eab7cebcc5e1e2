"""The simulator's worlds: `Scenario`, the parameters of one, and the named ones.

Every parameter is validated on construction, so a bad CLI option or scenario file fails with a
one-line reason before anything runs. `core.sim.world` draws a world from a scenario.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

from lesson_credit.core.analysis.joint_posterior import POLICY_TAU_MIN
from lesson_credit.core.bandit.policy import POLICY_TEMPER
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.model.settings import CreditSettings

REWARD_KINDS = ("gaussian", "binary")
JOINT_WEIGHTS = ("salience", "injection", "centred")


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
    # worlds that break the joint model's assumptions
    reward_kind: str = "gaussian"  # "binary": reward 1 with probability baseline + gains (clipped), else 0
    noise_spread: float = 0.0  # category noise sds spread over noise * (1 -/+ noise_spread): unequal variance
    category_effect: float = 0.0  # outside its home category an effect is scaled by 1 - 2 * category_effect
    outcome_mention: float = 0.0  # extra P(an injected lesson's keyword is mentioned) per unit of reward
    always_acts: bool = False  # an injected lesson's effect acts whether it is relevant (and salient) or not
    echo_share: float = 0.0  # > 0: outcome_mention applies only to this share of the no-effect lessons
    # (a keyword that echoes success, e.g. "tests pass", in a lesson that does nothing); 0: to every lesson
    # worlds that move (docs/estimates.md: time blocks, lessons included during a session)
    drift: float = 0.0  # the baseline rises by this much over the log (-drift/2 first, +drift/2 last)
    trouble: float = 0.0  # P(a session runs into trouble): its reward falls by trouble_cost
    trouble_cost: float = 0.2
    auto_include: float = 0.0  # P(trouble pulls in a lesson not chosen before), per lesson and troubled session
    # the joint selection policy in the loop
    joint_refit: int = 10  # sessions between two fits of the joint estimate (1: before every session)
    joint_tau_min: float = POLICY_TAU_MIN  # its prior sd floor, as `select --policy joint` uses
    # what its fit reads of an injection: "salience" (floor + (1 - floor) * salience, as `select` does),
    # "injection" (1 whatever the journal says) or "centred" (salience less the mean of the session's
    # injected lessons plus the log's mean so far: a journal that mentions everything more counts as usual)
    joint_weights: str = "salience"
    # the joint policy draws each lesson's effect in the session's category (`select --category`):
    # its overall effect plus the category's partially pooled deviation (core.analysis.joint_posterior)
    joint_category: bool = True
    joint_temper: float = POLICY_TEMPER  # the joint policy draws with its posterior sd times this, as `select`

    def __post_init__(self) -> None:
        _check(self)

    def with_(self, **changes: Any) -> Scenario:
        return replace(self, **changes)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


MAX_SESSIONS = 1_000_000  # per run
MAX_LESSONS = 10_000
MAX_CELLS = 10_000_000  # lessons x sessions: each world holds a few float64 arrays of that size (80 MB each)
MAX_SEEDS = 10_000
MAX_SMALL = 1_000  # categories, keywords per lesson
MAX_DRAWS = 100_000  # propensity draws per session


def check_seeds(first: int, count: int) -> None:
    """ValueError (one line) unless `count` seeds from `first` are few enough to run (checked before
    the list of seeds is built: a huge count would exhaust memory first)."""
    if not 1 <= count <= MAX_SEEDS:
        raise ValueError(f"seeds must be at most {MAX_SEEDS:,}, got {count:,}")
    if not 0 <= first <= 2**63 - 1 - count:
        raise ValueError(f"the first seed must be in [0, 2**63 - seeds), got {first:,}")


UNIT_FIELDS = (  # parameters in [0, 1]
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
    "noise_spread",
    "category_effect",
    "outcome_mention",
    "echo_share",
    "drift",
    "trouble",
    "trouble_cost",
    "auto_include",
)


def _check(sc: Scenario) -> None:
    def integer(name: str, low: int, high: int | None = None) -> None:
        value = getattr(sc, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        if high is not None and value > high:
            shown = {"n_lessons": "lessons", "n_sessions": "sessions"}.get(name, name)
            raise ValueError(f"{shown} must be at most {high:,}, got {value:,}")

    def unit(name: str) -> None:
        credit_mod.check_unit(getattr(sc, name), name)

    def positive(name: str) -> None:
        value = getattr(sc, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value < math.inf):
            raise ValueError(f"{name} must be a positive number, got {value!r}")

    if not isinstance(sc.name, str) or not sc.name:
        raise ValueError("name must be a non-empty string")
    for name, low, high in (
        ("n_lessons", 2, MAX_LESSONS),
        ("n_sessions", 1, MAX_SESSIONS),
        ("k", 1, None),
        ("n_categories", 1, MAX_SMALL),
        ("keywords_min", 1, MAX_SMALL),
        ("keywords_max", 1, MAX_SMALL),
        ("propensity_draws", 1, MAX_DRAWS),
        ("joint_refit", 1, None),
    ):
        integer(name, low, high)
    integer("k", 1, sc.n_lessons)
    if sc.n_lessons * sc.n_sessions > MAX_CELLS:
        raise ValueError(f"lessons x sessions must be at most {MAX_CELLS:,}, got {sc.n_lessons:,} x {sc.n_sessions:,}")
    if sc.keywords_max < sc.keywords_min:
        raise ValueError(f"keywords_max ({sc.keywords_max}) must be >= keywords_min ({sc.keywords_min})")
    for name in UNIT_FIELDS:
        unit(name)
    if sc.helpful_share + sc.harmful_share > 1.0:
        raise ValueError("helpful_share + harmful_share must be at most 1")
    if isinstance(sc.noise, bool) or not isinstance(sc.noise, (int, float)) or not (0 <= sc.noise < math.inf):
        raise ValueError(f"noise must be a number >= 0, got {sc.noise!r}")
    positive("relevance_a")
    positive("relevance_b")
    positive("joint_tau_min")
    positive("joint_temper")
    unit("baseline_spread")
    bottom = sc.baseline_mean - sc.baseline_spread / 2
    top = sc.baseline_mean + sc.baseline_spread / 2
    if bottom < 0 or top > 1:
        raise ValueError(f"category baselines must lie in [0, 1], got {bottom:g}..{top:g}")
    if sc.flip_at is not None and not (0.0 < sc.flip_at < 1.0):
        raise ValueError(f"flip_at must be None or in (0, 1), got {sc.flip_at!r}")
    if sc.reward_kind not in REWARD_KINDS:
        raise ValueError(f"reward_kind must be one of {', '.join(REWARD_KINDS)}, got {sc.reward_kind!r}")
    if sc.joint_weights not in JOINT_WEIGHTS:
        raise ValueError(f"joint_weights must be one of {', '.join(JOINT_WEIGHTS)}, got {sc.joint_weights!r}")
    if not isinstance(sc.joint_category, bool):
        raise ValueError(f"joint_category must be true or false, got {sc.joint_category!r}")
    if not isinstance(sc.always_acts, bool):
        raise ValueError(f"always_acts must be true or false, got {sc.always_acts!r}")
    CreditSettings(decay=sc.decay)  # validates decay
    credit_mod.check_strategy(sc.loo_log)


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
    # --- worlds that break the joint model's assumptions
    # outcomes are 0 or 1 (productive or not): the reward is a coin with the session's chance of success
    "binary-rewards": Scenario(name="binary-rewards", reward_kind="binary"),
    # the noise sd differs by category, from 0.015 to 0.285 (the model assumes one sd)
    "unequal-noise": Scenario(name="unequal-noise", noise_spread=0.9),
    # many lessons, little history: 400 lessons, 300 sessions
    "many-lessons": Scenario(name="many-lessons", n_lessons=400, n_sessions=300),
    # a lesson helps in its home category and harms as much in the others (the model has one effect)
    "category-effect": Scenario(name="category-effect", category_effect=1.0),
    # few slots among many candidates: which lessons get data at all is the bandit's own doing
    "self-selected": Scenario(name="self-selected", k=3, keyword_breadth=0.15),
    # a good session writes a richer journal: every keyword is mentioned more the higher the reward
    "outcome-salience": Scenario(name="outcome-salience", outcome_mention=0.6),
    # every injection acts, relevant or not: salience carries no information on the effect
    "salience-blind": Scenario(name="salience-blind", always_acts=True),
    # a third of the no-effect lessons carry a keyword that echoes success (mentioned more the higher the reward)
    "success-keyword": Scenario(name="success-keyword", outcome_mention=0.6, echo_share=0.3),
    # --- worlds that move (docs/estimates.md)
    # the baseline reward rises by 0.3 over the log, whatever the lessons do (graders, models, work change)
    "trend": Scenario(name="trend", drift=0.3),
    # a third of the sessions run into trouble (reward -0.2), and trouble's words pull lessons in mid-session
    # (gptme includes a lesson when its keywords come up): each lesson not chosen before, with probability 0.05
    "auto-include": Scenario(name="auto-include", trouble=1 / 3, auto_include=0.05),
}


def scenario(name: str, **changes: Any) -> Scenario:
    """A named scenario, optionally with parameters changed (e.g. from CLI options)."""
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r} (expected one of {', '.join(SCENARIOS)})")
    return SCENARIOS[name].with_(**changes) if changes else SCENARIOS[name]
