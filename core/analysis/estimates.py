"""Each lesson's effect as `loo` reports it, and the one rule that picks its headline.

**The joint effect** of a lesson (`joint` in loo-results.json) comes from two fits:
- `ranking`: the shrunk estimate of `core.analysis.joint` (every lesson's salience-weighted
  injection under one empirical-Bayes prior): the best single number to rank lessons by, and what
  a selection policy samples from; no interval is claimed from it; for a lesson identified only by time,
  the prior (0, the prior sd), as the policy draws it;
- when the lesson is identified (`core.analysis.claims`), `estimate` and its 95% interval and
  p-value are the unshrunk injection estimate with a robust variance; otherwise `identified` is
  false, `estimate` is the ranking value and there is no interval and no p-value. A lesson in a
  group carries the group's members and estimate (`group`, `group_effect`) and claims nothing
  alone; the members share one tuple, and its reason and notes name a few of them (`some_of`), so
  that nothing per member grows with the group (a chain of 3,000 lessons is one group). `drifting`
  (its later half differs from its earlier half beyond noise) makes the later half's interval the
  joint headline; `over_time` and `by_category` hold the parts.

**The headline** (`effect` in loo-results.json, the `loo` table and the Analysis screen): the
randomized (dropout) estimate when it has at least `MIN_RANDOMIZED` kept and as many withheld
sessions and its interval is no wider than the joint one's (or the joint one claims none);
otherwise the joint effect. `method` says which ("randomized", "joint" or "joint, later half");
`joint` and `randomized` stay in the results either way.

A lesson is **distinguishable from zero** when its headline p-value, Benjamini-Hochberg adjusted
over every headline that has one, is below `SIGNIFICANCE`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.claims import GROUP_SHARE, Claims, Column
from lesson_credit.core.analysis.joint import JointFit
from lesson_credit.core.analysis.one_step import Interval
from lesson_credit.core.analysis.ranking import ranked
from lesson_credit.core.analysis.stats import benjamini_hochberg
from lesson_credit.core.base.numbers import listed, signed, span

MIN_RANDOMIZED = 20  # kept and withheld sessions before a randomized estimate can be the headline
SIGNIFICANCE = 0.05  # BH-adjusted p below this: distinguishable from zero
JOINT, LATER, RANDOMIZED = "joint", "joint, later half", "randomized"
MAX_NAMED_MEMBERS = 3  # a group's members a reason or note names; the rest are counted
GROUP_LISTED = 32  # a group's members loo-results.json lists in each member's `group` (all: meta.groups)


@dataclass(frozen=True)
class Randomized:
    """Kept-minus-withheld mean reward among graded sessions where the lesson matched (dropout logs), per epsilon
    its coin was flipped at, combined (core/analysis/stratified.py). The counts are of the epsilons with a kept and
    a withheld session; `n_unused`: sessions at an epsilon with no kept or no withheld one (they say nothing)."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    n_kept: int
    n_withheld: int
    p_value: float | None = None
    n_unused: int = 0
    strata: int = 1  # epsilons whose sessions count

    def as_json(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n_kept": self.n_kept,
            "n_withheld": self.n_withheld,
            "p_value": self.p_value,
            "n_unused": self.n_unused,
            "strata": self.strata,
        }


@dataclass(frozen=True)
class Effect:
    """A lesson's effect on reward per injection: the joint estimate, or the headline chosen from it
    and the randomized one (see the module)."""

    estimate: float
    ci_low: float | None
    ci_high: float | None
    method: str
    p_value: float | None = None
    p_adjusted: float | None = None
    identified: bool = True
    reason: str | None = None  # why nothing is claimed (identified false)
    ranking: float | None = None  # the shrunk estimate lessons are ranked by
    ranking_sd: float | None = None
    group: tuple[str, ...] = ()  # the lessons it always appears with, itself included
    group_effect: dict[str, Any] | None = None
    drifting: bool = False
    over_time: dict[str, Any] | None = None  # {"earlier": {...}, "later": {...}, "p_value"}
    by_category: dict[str, dict[str, Any]] | None = None
    category_differs: bool = False
    category_p: float | None = None
    # against the average of the lessons whose mean the prior holds (`against_average_line`), not on its own
    against_average: bool = False

    @property
    def claims(self) -> bool:
        """An interval and a p-value are claimed."""
        return self.ci_low is not None and self.ci_high is not None

    def as_json(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "method": self.method,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "identified": self.identified,
            "reason": self.reason,
            "ranking": self.ranking,
            "ranking_sd": self.ranking_sd,
            # its first GROUP_LISTED members (a chain of thousands is one group: listed whole for each member, the
            # output would grow with the square of its size), all of them once in the payload's meta.groups
            "group": list(self.group[:GROUP_LISTED]) or None,
            "group_size": len(self.group) or None,
            "group_effect": self.group_effect,
            "drifting": self.drifting,
            "over_time": self.over_time,
            "by_category": self.by_category,
            "category_differs": self.category_differs,
            "category_p": self.category_p,
            "against_average": self.against_average,
        }


def group_name(group: Sequence[str]) -> str | None:
    """A group's key in loo-results.json's meta.groups: its first member (groups share no member)."""
    return group[0] if group else None


def group_members(effects: Sequence[Effect | None]) -> dict[str, list[str]]:
    """Each group of `effects` once, by name (`group_name`): its members (loo-results.json's meta.groups)."""
    out: dict[str, Sequence[str]] = {}
    for effect in effects:
        if effect is not None and effect.group:
            out.setdefault(effect.group[0], effect.group)
    return {name: list(members) for name, members in out.items()}


def some_of(names: Sequence[str], total: int | None = None) -> str:
    """The first of `total` names (default all of `names`), at most `MAX_NAMED_MEMBERS` and how many more:
    "a.md, b.md, c.md and 2997 more"; every one when naming the last costs no more than counting it."""
    total = len(names) if total is None else total
    return listed(names, MAX_NAMED_MEMBERS if total > MAX_NAMED_MEMBERS + 1 else total, total=total)


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _with_group(column: Column, arm_ids: tuple[str, ...], arm: int, position: int | None) -> str:
    """How often a group member (at `position` in `column.arms`) was injected with the others: "injected with
    t/b.md in 57 of its 60 graded sessions (95%)" (a share short of all is never rounded up to 100%); a few of
    the others named (`some_of`)."""
    others = [arm_ids[a] for a in column.arms[: MAX_NAMED_MEMBERS + 2] if a != arm][: MAX_NAMED_MEMBERS + 1]
    count = len(column.arms) - (position is not None)
    named = others[0] if count == 1 else f"another lesson of its group ({some_of(others, count)})"
    if position is None or len(column.together) != len(column.arms):
        return f"injected with {named}"
    k, n = column.together[position]
    share = f"{k / max(n, 1):.0%}"
    share = ">99%" if k < n and share == "100%" else share
    return f"injected with {named} in {k} of its {n} graded sessions ({share})"


def _interval_json(interval: Interval | None) -> dict[str, Any] | None:
    if interval is None:
        return None
    out = interval.as_json()
    out["p_value"] = interval.p_value
    return out


def joint_effects(
    fit: JointFit, claims: Claims, arm_ids: tuple[str, ...], timed: npt.NDArray[np.bool_]
) -> list[Effect | None]:
    """Each arm's joint effect (None: never injected in a graded session), p-values BH-adjusted. `timed`: per
    arm, identified only by time (`ranking.timed_arms`): ranked at the prior's 0, as everywhere (`ranking`)."""
    ranking, ranking_sd = ranked(fit, timed)
    out: list[Effect | None] = []
    members: dict[int, tuple[tuple[str, ...], dict[int, int]]] = {}  # per column, once: its members, their places
    for arm in range(len(arm_ids)):
        column = claims.of(arm)
        rank = _finite(float(ranking[arm])) if arm < len(ranking) else None
        if column is None or rank is None:
            out.append(None)
            continue
        c = int(claims.column_of[arm])
        if c not in members:
            group = tuple(arm_ids[a] for a in column.arms) if len(column.arms) > 1 else ()
            members[c] = group, {a: i for i, a in enumerate(column.arms)}
        group, place = members[c]
        out.append(_joint_effect(column, rank, _finite(float(ranking_sd[arm])), arm_ids, arm, group, place.get(arm)))
    return _adjusted(out)


def _joint_effect(
    column: Column,
    rank: float,
    rank_sd: float | None,
    arm_ids: tuple[str, ...],
    arm: int,
    group: tuple[str, ...],
    position: int | None,
) -> Effect:
    """`arm`'s joint effect; `group`: its column's members' ids (one tuple for them all), `position`: its place."""
    common: dict[str, Any] = {
        "ranking": rank,
        "ranking_sd": rank_sd,
        "group": group,
        "against_average": column.against_average,
    }
    if group:
        shown = _interval_json(column.effect) if column.identified else None
        why = f"{_with_group(column, arm_ids, arm, position)}: one group (lessons together in at least "
        why += f"{GROUP_SHARE:.0%} of each one's sessions, in chains), "
        if column.timed or not column.estimable:
            why += f"and the group is {column.reason}"
        else:
            why += "only the group's effect can be known"
        return Effect(rank, None, None, JOINT, identified=False, reason=why, group_effect=shown, **common)
    if not column.identified or column.effect is None:
        return Effect(rank, None, None, JOINT, identified=False, reason=column.reason, **common)
    over_time = None
    if column.earlier is not None or column.later is not None:
        over_time = {
            "earlier": _interval_json(column.earlier),
            "later": _interval_json(column.later),
            "p_value": column.drift_p,
        }
    by_category = {name: _interval_json(cell) or {} for name, cell in column.by_category} or None
    shown_interval = column.later if column.drifting and column.later is not None else column.effect
    low, high = shown_interval.bounds()
    return Effect(
        shown_interval.estimate,
        low,
        high,
        LATER if shown_interval is column.later else JOINT,
        p_value=shown_interval.p_value,
        drifting=column.drifting,
        over_time=over_time,
        by_category=by_category,
        category_differs=column.category_differs,
        category_p=column.category_p,
        **common,
    )


def _adjusted(effects: list[Effect | None]) -> list[Effect | None]:
    """BH over the effects with a p-value (a group's members share one: counted once, keyed by its name, not its
    members: hashing them per member would cost the square of the group's size)."""
    keys: list[str | int] = []
    p_of: dict[str | int, float] = {}
    for i, effect in enumerate(effects):
        if effect is None:
            keys.append(i)
            continue
        as_group = bool(effect.group) and effect.method != RANDOMIZED
        key: str | int = effect.group[0] if as_group else i
        keys.append(key)
        p = (effect.group_effect or {}).get("p_value") if as_group else effect.p_value
        if p is not None:
            p_of[key] = float(p)
    order = list(p_of)
    adjusted = dict(zip(order, benjamini_hochberg([p_of[k] for k in order]), strict=True))
    out: list[Effect | None] = []
    for effect, key in zip(effects, keys, strict=True):
        if effect is None or key not in adjusted:
            out.append(effect)
        elif isinstance(key, str):
            group_effect = dict(effect.group_effect or {}, p_adjusted=adjusted[key])
            out.append(replace(effect, group_effect=group_effect))
        else:
            out.append(replace(effect, p_adjusted=adjusted[key]))
    return out


def randomized_wins(joint: Effect | None, rnd: Randomized | None) -> bool:
    """The headline rule's test: enough kept and withheld sessions, and at least as precise."""
    if rnd is None or rnd.estimate is None or rnd.ci_low is None or rnd.ci_high is None:
        return False
    if rnd.n_kept < MIN_RANDOMIZED or rnd.n_withheld < MIN_RANDOMIZED:
        return False
    if joint is None or not joint.claims:
        return True
    assert joint.ci_low is not None and joint.ci_high is not None
    return rnd.ci_high - rnd.ci_low <= joint.ci_high - joint.ci_low


def headlines(joint: list[Effect | None], randomized: list[Randomized | None]) -> list[Effect | None]:
    """The headline of each lesson (see the module), p-values BH-adjusted over the headlines."""
    out: list[Effect | None] = []
    for effect, rnd in zip(joint, randomized, strict=True):
        if randomized_wins(effect, rnd):
            assert rnd is not None and rnd.estimate is not None
            base = effect if effect is not None else Effect(rnd.estimate, None, None, RANDOMIZED)
            out.append(
                replace(
                    base,
                    estimate=rnd.estimate,
                    ci_low=rnd.ci_low,
                    ci_high=rnd.ci_high,
                    method=RANDOMIZED,
                    p_value=rnd.p_value,
                    p_adjusted=None,
                    identified=True,
                    reason=None,
                    against_average=False,  # kept minus withheld: the lesson's own effect
                )
            )
        else:
            out.append(effect)
    return _adjusted(out)


def distinguishable(effects: list[Effect | None]) -> int:
    """How many headlines (a group once) are distinguishable from zero."""
    seen: set[str] = set()  # the groups' names (`group_name`)
    count = 0
    for effect in effects:
        if effect is None:
            continue
        if effect.group and effect.method != RANDOMIZED:  # a group's claim, counted once
            adjusted = (effect.group_effect or {}).get("p_adjusted")
            if effect.group[0] in seen:
                continue
            seen.add(effect.group[0])
        else:
            adjusted = effect.p_adjusted
        if adjusted is not None and adjusted < SIGNIFICANCE:
            count += 1
    return count


def nothing_line(effects: list[Effect | None]) -> str | None:
    """The one line shown above the list when no lesson is distinguishable from zero, else None."""
    if distinguishable(effects):
        return None
    claimed = sum(1 for e in effects if e is not None and (e.claims or e.group_effect is not None))
    if not claimed:  # ("none of 0" said nothing)
        return (
            "No lesson's effect is distinguishable from zero: none is identified yet, so none has an interval "
            "(each lesson's flags say why); the list is not a ranking of proven effects."
        )
    clear = sum(1 for e in effects if e is not None and e.claims and (e.ci_low or 0) * (e.ci_high or 0) > 0)
    alone = (
        ""
        if not clear
        else f"; {clear} of their 95% intervals {'excludes' if clear == 1 else 'exclude'} zero taken alone, not "
        f"when {claimed} are tested together"
    )
    return (
        f"No lesson's effect is distinguishable from zero (BH-adjusted p < {SIGNIFICANCE:g} for none of "
        f"{claimed} with an interval{alone}): the list is not a ranking of proven effects."
    )


AGAINST_AVERAGE = (
    "The log barely shows what the lessons do together (how many a session injects hardly varies beside the "
    "baselines), so each effect is against the average of the lessons drawn with it, not the lesson's own."
)
AGAINST_AVERAGE_MARK = "vs average"  # the rows `AGAINST_AVERAGE_SOME` speaks of, when other rows are not
AGAINST_AVERAGE_SOME = (
    f"The log barely shows what the lessons marked {AGAINST_AVERAGE_MARK} do together (how many of them a session "
    "injects hardly varies beside the baselines), so each of their effects is against the average of the lessons "
    "drawn with it; the other rows' effects are each lesson's own, and the order does not make the two comparable."
)


def against_average_line(effects: Sequence[Effect | None]) -> str | None:
    """The line shown above the list when the fit sees only some lessons' differences (`Effect.against_average`:
    the data barely see their mean, which the prior then holds), else None: `AGAINST_AVERAGE` when it is every
    row's case but for rows that claim nothing, else `AGAINST_AVERAGE_SOME`, with those rows marked
    (`marks_against_average`)."""
    if not any(e is not None and e.against_average for e in effects):
        return None
    return AGAINST_AVERAGE_SOME if marks_against_average(effects) else AGAINST_AVERAGE


def marks_against_average(effects: Sequence[Effect | None]) -> bool:
    """Whether the rows against the average are marked: some are, and a row that claims an interval is a lesson's
    own effect (a randomized headline, a lesson outside the draw), its number not comparable with theirs."""
    relative = any(e is not None and e.against_average for e in effects)
    return relative and any(e is not None and e.claims and not e.against_average for e in effects)


def order_key(effect: Effect | None, compared: bool = False) -> tuple[int, float]:
    """The one order of every list of effects (ties by lesson id): lessons whose headline claims an
    interval first, largest estimate first; then those without one but with a leave-one-out lift
    (`compared`: enough sessions with and without); then the rest."""
    if effect is not None and effect.claims:
        return 0, -effect.estimate
    return (1 if compared else 2), 0.0


def kind(effect: Effect | None) -> str:
    """What the headline is, in a word: randomized, joint, later half, group, unidentified (or "-")."""
    if effect is None:
        return "-"
    if effect.method == RANDOMIZED:
        return "randomized"
    if effect.group:
        return "group"
    if not effect.identified:
        return "unidentified"
    return "later half" if effect.method == LATER else "joint"


def notes(effect: Effect | None) -> list[str]:
    """The headline's caveats in full: why nothing is claimed, the group, drift, categories."""
    if effect is None:
        return []
    out = []
    if effect.group and effect.method != RANDOMIZED:
        g = effect.group_effect
        numbers = "" if g is None else f": {signed(g['estimate'])} {span(g['ci_low'], g['ci_high'])}"
        out.append(
            f"one group of lessons mostly injected together: {some_of(effect.group)}{numbers}"
            + ("" if g else " (not identified)")
        )
    elif not effect.identified and effect.reason:
        out.append(f"unidentified: {effect.reason}")
    if effect.drifting and effect.over_time:
        parts = [f"{name} {_short(effect.over_time.get(name))}" for name in ("earlier", "later")]
        out.append("drifting: " + ", ".join(parts))
    if effect.category_differs and effect.by_category:
        parts = [f"{name or '(none)'} {signed(cell['estimate'])}" for name, cell in effect.by_category.items() if cell]
        out.append("differs by category: " + ", ".join(parts))
    return out


def _short(cell: dict[str, Any] | None) -> str:
    if not cell:
        return "-"
    return f"{signed(cell['estimate'])} {span(cell['ci_low'], cell['ci_high'])}"
