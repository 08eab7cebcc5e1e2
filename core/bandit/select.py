"""Choosing lessons for a context: the candidates that match it, and a Thompson top-k among them.

Pure functions of the library, a posterior and the random generators passed in; logging
the selection is the workspace's job (`Workspace.select`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.bandit.fold import Posterior
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.library.keyword_limits import select_unmatched_reason
from lesson_credit.core.library.lessons import Lesson
from lesson_credit.core.library.patterns import (
    PATTERN_MAX_PER_LESSON,
    PATTERN_MAX_PER_SELECT,
    pattern_matches,
    patterns_untried_reason,
)
from lesson_credit.core.library.salience import KeywordMatcher, counted_keys
from lesson_credit.core.log.events import SELECTION
from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.model.kinds import kind_of
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.topk import chosen_of


@dataclass(frozen=True)
class Selection:
    session_id: str
    candidates: tuple[str, ...]
    selected: tuple[str, ...]
    propensity: dict[str, float]
    draws: dict[str, float]
    k: int
    seed: int
    withheld: tuple[str, ...] = ()  # chosen, then withheld by randomized dropout (lesson_credit.core.analysis.dropout)
    policy: str = ""  # the selection policy drawn from (core.bandit.policy); logged when set
    category: str | None = None  # the session's kind of work the draw was for; logged when set
    left_out: tuple[str, ...] = ()  # lessons matching the context that `category` left out (not logged)
    decided: tuple[str, ...] = ()  # chosen lessons whose dropout coin an earlier trial of the session flipped
    notes: tuple[str, ...] = ()  # what matching the context left undone, one line each (`split_candidates`; not logged)

    def event(self, timestamp: str) -> dict[str, Any]:
        """The selection event to log (docs/format.md §5.4)."""
        return {
            "type": SELECTION,
            "session_id": self.session_id,
            "timestamp": timestamp,
            "candidates": list(self.candidates),
            "selected": list(self.selected),
            "propensity": self.propensity,
            "k": self.k,
            "seed": self.seed,
            **({"policy": self.policy} if self.policy else {}),
            **({"category": self.category} if self.category is not None else {}),
        }


def check_k(k: int) -> int:
    if k < 1:
        raise WorkspaceError(f"k must be at least 1, got {k}")
    return k


def check_seed(seed: int) -> int:
    if not 0 <= seed < 2**63:  # logged, and a cache stores 64-bit integers
        raise WorkspaceError(f"seed must be in [0, 2**63), got {seed}")
    return seed


def for_category(lesson: Lesson, category: str | None) -> bool:
    """Whether `lesson` may be drawn for a session of the kind of work `category`: one whose
    match.session_categories name kinds of work is for those alone (compared as gptme-contrib's lesson
    hook compares them: spaces around trimmed, lower-cased with str.lower, which keeps ß and a final
    sigma; and, unlike the hook, in one Unicode form: `kind_of`); when the kind is not known, any lesson
    may be (as gptme's own auto-include, which never reads them)."""
    if category is None or not lesson.session_categories:
        return True
    return names_kind(lesson.session_categories, category)


def names_kind(kinds: Sequence[str], category: str) -> bool:
    """Whether a lesson's kinds of work (match.session_categories) name `category`, compared as
    `for_category` compares them."""
    wanted = kind_of(category)
    return any(kind_of(kind) == wanted for kind in kinds)


def candidates(lessons: Sequence[Lesson], context: str, category: str | None = None) -> list[Lesson]:
    """Active lessons for a session of `category` (`for_category`) whose keywords or patterns match the
    context text (`split_candidates`' first part)."""
    return split_candidates(lessons, context, category)[0]


def split_candidates(
    lessons: Sequence[Lesson], context: str, category: str | None, notes: list[str] | None = None
) -> tuple[list[Lesson], list[Lesson]]:
    """The active lessons whose keywords or patterns match the context text, split into those for a
    session of `category` (`for_category`) and those its kind of work leaves out: one scan for every
    keyword, then per lesson a set lookup per keyword (no salience breakdown: only whether any hit).
    A lesson's patterns are tried only when no keyword hits, and a select tries at most PATTERN_MAX_PER_SELECT
    of the library's (in its order: each may take PATTERN_TIMEOUT_S); `notes` gets a line for what was left
    undone: patterns not tried, wildcard keywords the scan's work budget left unmatched."""
    active = [lesson for lesson in lessons if lesson.status == "active"]
    keys = [counted_keys(lesson.keywords) for lesson in active]
    found = KeywordMatcher.of_keys(key for lesson_keys in keys for key in lesson_keys).scan(context)
    occurs = found.occurs
    kept: list[Lesson] = []
    left_out: list[Lesson] = []
    tries = PATTERN_MAX_PER_SELECT  # patterns the select may still try
    untried = 0  # lessons whose patterns (some or all) were not tried
    for lesson, lesson_keys in zip(active, keys, strict=True):
        if not any(map(occurs, lesson_keys)):
            tried = lesson.patterns[:PATTERN_MAX_PER_LESSON]  # (lint names those past it)
            if len(tried) > tries:
                untried += 1
                tried = tried[: max(0, tries)]
            tries -= len(tried)  # each counts, tried to the end or not: which ones time out depends on the load
            if not any(pattern_matches(pattern, context) for pattern in tried):
                continue
        (kept if for_category(lesson, category) else left_out).append(lesson)
    if notes is not None:
        notes += [patterns_untried_reason(untried)] if untried else []
        notes += [select_unmatched_reason(len(found.unmatched))] if found.unmatched else []
    return kept, left_out


def category_of(context: str, categories: dict[str, tuple[str, ...]]) -> str | None:
    """The category whose keywords (config.toml's [categories]) the context mentions most: the most
    distinct keywords hit, a tie to the first in the table; None when none hits. One scan. Names of one
    kind of work (`kind_of`: `Code` and `code`) are one category, named as it is first in the table."""
    keys: dict[str, dict[str, None]] = {}  # the first name of each kind -> every keyword of its names, once
    first: dict[str, str] = {}
    for name, listed in categories.items():
        keys.setdefault(first.setdefault(kind_of(name), name), {}).update(dict.fromkeys(counted_keys(listed)))
    occurs = KeywordMatcher.of_keys(k for words in keys.values() for k in words).scan(context).occurs
    best, best_hits = None, 0
    for name, kind_keys in keys.items():
        hits = sum(map(occurs, kind_keys))
        if hits > best_hits:
            best, best_hits = name, hits
    return best


def category_problems(categories: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """Why keywords of config.toml's [categories] are not counted, by category (those that have such): as a
    lesson's are not, a wildcard of too many parts, and wildcards past the first WILDCARD_MAX_PER_LESSON."""
    from lesson_credit.core.library.keyword_limits import keyword_problem, past_cap_reason
    from lesson_credit.core.library.salience import wildcards_beyond

    found = {}
    for name, listed in categories.items():
        reasons = [why for keyword in listed if (why := keyword_problem(keyword.strip()))]
        if beyond := wildcards_beyond(listed):
            reasons.append(past_cap_reason(beyond, "context"))
        if reasons:
            found[name] = reasons
    return found


def posterior_of(
    post: Posterior, settings: CreditSettings, lesson_ids: Sequence[str]
) -> tuple[np.ndarray[Any, np.dtype[np.float64]], np.ndarray[Any, np.dtype[np.float64]]]:
    """(alpha, beta) of each lesson id under `post`; the prior for a lesson the log never credited."""
    position = post.index()
    a0, b0 = settings.prior_alpha, settings.prior_beta
    alpha = np.array([post.alpha[position[i]] if i in position else a0 for i in lesson_ids])
    beta = np.array([post.beta[position[i]] if i in position else b0 for i in lesson_ids])
    return alpha, beta


def thompson_select(
    session_id: str,
    candidates: Sequence[Lesson],
    post: Posterior,
    settings: CreditSettings,
    k: int,
    seed: int,
    rng: np.random.Generator,
    propensity_rng: np.random.Generator,
    draws: int = 4000,
) -> Selection:
    """Thompson top-k among the candidates: one draw per candidate from `rng` (which breaks a tie at the k-th
    draw); each one's propensity (its chance to land in a top-k draw) estimated from `draws` draws of
    `propensity_rng` and the selection's own.
    `seed` is recorded, so the selection can be replayed."""
    ids = [c.id for c in candidates]
    alpha, beta = posterior_of(post, settings, ids)
    sample = beta_mod.thompson_draw(alpha, beta, rng) if candidates else np.zeros(0)
    picked = beta_mod.top_k(sample, k, rng)
    propensity = beta_mod.p_top_k(alpha, beta, k, propensity_rng, draws, chosen_of(picked, len(ids)))
    return top_k_selection(session_id, ids, sample, picked, propensity, k, seed, settings.strategy)


def top_k_selection(
    session_id: str,
    ids: Sequence[str],
    sample: npt.NDArray[np.float64],
    picked: npt.NDArray[np.intp],
    propensity: npt.NDArray[np.float64],
    k: int,
    seed: int,
    policy: str,
) -> Selection:
    """The selection a Thompson draw makes: the candidates `picked` (`beta.top_k` of the draws), every
    candidate's draw and propensity (arrays in the order of `ids`), as any policy logs it."""
    return Selection(
        session_id=session_id,
        candidates=tuple(ids),
        selected=tuple(ids[i] for i in picked),
        propensity={c: float(p) for c, p in zip(ids, propensity, strict=True)},
        draws={c: float(d) for c, d in zip(ids, sample, strict=True)},
        k=k,
        seed=seed,
        policy=policy,
    )


def p_top_k(
    post: Posterior, settings: CreditSettings, lessons: Sequence[Lesson], k: int, seed: int, draws: int
) -> dict[str, float]:
    """P(each active lesson lands in a top-k Thompson draw among the active `lessons`), drawn with `seed`."""
    return p_top_k_later(post, settings, lessons, k, seed, draws)()


def p_top_k_later(
    post: Posterior, settings: CreditSettings, lessons: Sequence[Lesson], k: int, seed: int, draws: int
) -> Callable[[], dict[str, float]]:
    """`p_top_k` in two steps: the posterior's values taken now (copies: a later fold does not change
    them), the draws when the result is called (for a caller that holds a lock while it reads)."""
    lesson_ids = [lesson.id for lesson in lessons if lesson.status == "active"]
    alpha, beta = (np.array(values, dtype=np.float64) for values in posterior_of(post, settings, lesson_ids))

    def draw() -> dict[str, float]:
        probability = beta_mod.p_top_k(alpha, beta, k, np.random.default_rng(seed), draws)
        return {lesson_id: float(p) for lesson_id, p in zip(lesson_ids, probability, strict=True)}

    return draw
