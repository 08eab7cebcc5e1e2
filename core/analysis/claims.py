"""What the log can and cannot say about each lesson (docs/analysis.md): identified or not, groups of lessons
that always appear together, the effect over time and by category.

Everything here is on the injection design (`core.analysis.robust`): a lesson's effect is the
change in reward per injection, the baselines of categories (and agents) are fitted, and a
session's keywords play no part (they are written after the outcome and can echo it).

- **Groups.** Lessons injected together in at least `GROUP_SHARE` of each one's graded sessions
  (linked in chains) cannot be told apart: they become one column, the share of the group's
  members injected in the session, whose coefficient is the effect of injecting the whole group.
  Members claim nothing on their own.
- **Identified.** A lesson (or group) is identified when it has at least `MIN_SESSIONS` graded
  sessions with it and as many without, and the data cut its prior sd (the empirical-Bayes prior
  of the injection model) to at most `SD_RATIO_MAX` of it, and some fit can estimate it (`estimable`: its
  injections are no combination of other lessons' and the baselines'). Only identified lessons get an
  estimate, an interval and a p-value: unshrunk, with a robust variance (`robust`), from a fit that leaves every
  lesson some fit can estimate (with enough sessions) unshrunk, so none rests on another's prior.
- **Over time.** Per identified lesson, its graded sessions are split at the median of its own
  injections (earlier half, later half, with every session in between as control). In each half,
  the estimate is the lesson's coefficient plus the least-squares slope of the full fit's
  residuals on its centred injection within that half (the other lessons held at their fitted
  effects: the one-step estimate); the variance is the same sandwich restricted to the half.
  `drifting` when the two halves differ beyond noise: the z-test's p-value below `FLAG_P` and,
  Benjamini-Hochberg adjusted over the identified lessons, below `FLAG_FDR`.
- **Identified only by time.** A lesson the above would identify whose only variation within the
  time blocks is one switch in log order - in every block where it varies, among the sessions of
  the categories and agents where it varies there, never injected before one moment and always after
  it, or the reverse - is compared only with the sessions before (after) that moment: a change of
  the baseline at the same moment would look exactly the same, and the per-block baselines cannot
  tell the two apart. It is not identified (`switched`); randomized dropout evidence, where there is
  enough, still gives it a headline (`core.analysis.estimates`). Nor is one the baseline's steps where the design
  switches inside a block (`core.analysis.steps`) leave less than `steps.KEPT_MIN` of its precision
  (`joint_posterior.time_labels`): a lesson on for a few sessions inside a block, say.
- **By category.** The same one-step estimate within each category with at least `one_step.MIN_CELL`
  sessions with and without the lesson (as in a half: in the baseline groups, time blocks and agents, where its
  injection varies within the category); `category_differs` when Cochran's Q over those categories
  has a p-value below `FLAG_P` and a BH-adjusted one below `FLAG_FDR`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.draws import common_direction
from lesson_credit.core.analysis.early import (
    first_column_of,
    first_sessions_column,
    lesson_of,
    split_design,
    whole_columns,
)
from lesson_credit.core.analysis.estimable import (
    Ties,
    confounded_reason,
    draws,
    unsettled_reason,
)
from lesson_credit.core.analysis.joint import DENSE_MAX, TAU_MIN, Design, block_codes
from lesson_credit.core.analysis.joint_ops import CROSS_DENSE_MAX, Centred, centred
from lesson_credit.core.analysis.joint_posterior import Stream, TimeOnly, time_labels
from lesson_credit.core.analysis.joint_solve import solve_operator
from lesson_credit.core.analysis.neighbourhoods import neighbourhoods
from lesson_credit.core.analysis.one_step import Interval, by_category, drift_p, halves, heterogeneity_p
from lesson_credit.core.analysis.robust import RobustFit, fit_robust
from lesson_credit.core.analysis.stats import FLAG_FDR as FLAG_FDR  # effects.py names it here
from lesson_credit.core.analysis.stats import FLAG_P, benjamini_hochberg
from lesson_credit.core.analysis.switches import GROUP_SHARE as GROUP_SHARE  # effects.py names it here
from lesson_credit.core.analysis.switches import (
    Switches,
    groups_without_blocks,
    scopes,
    switched_in,
    timed_reason,
    timed_switches,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MIN_SESSIONS = 5  # graded sessions with, and without, a lesson before it can be identified
SD_RATIO_MAX = 0.8  # identified when the posterior sd is at most this share of the prior sd
WEAK_PRIOR = 4.0  # an identified lesson's prior sd, in prior sds: directions the data cannot see stay anchored
COMMON_SEEN = 0.1  # the identified lessons' mean gets the full prior as far as the data see it less than this


@dataclass(frozen=True)
class Column:
    """One column of the injection design: a lesson, or a group of lessons, and what it can claim."""

    arms: tuple[int, ...]
    identified: bool
    reason: str | None
    effect: Interval | None = None
    earlier: Interval | None = None
    later: Interval | None = None
    drift_p: float | None = None
    drifting: bool = False
    by_category: tuple[tuple[str, Interval], ...] = ()
    category_p: float | None = None
    category_differs: bool = False
    timed: bool = False  # identified only by time (`switched`): not identified, whatever else it has
    # a group's: per member (in `arms` order), its graded sessions with another member, and all its graded sessions
    together: tuple[tuple[int, int], ...] = ()
    # False: no fit can estimate it (its injections a combination of other lessons', `tied`, and the baselines'),
    # and that is its reason (too few sessions, or a switch in time, are said first; `tied` is then empty)
    estimable: bool = True
    tied: tuple[int, ...] = ()
    # its estimate is against the average of the lessons whose mean the prior holds (`Fitted.relative`), not alone
    against_average: bool = False


@dataclass(frozen=True)
class Claims:
    """Per arm of the design: its column (or -1: never injected in a graded session)."""

    column_of: IntArray
    columns: tuple[Column, ...]
    prior_sd: float  # of an injection's effect (empirical Bayes, injection model)
    noise_sd: float
    dense: bool
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def of(self, arm: int) -> Column | None:
        col = int(self.column_of[arm])
        return None if col < 0 else self.columns[col]

    def grouped(self, arm: int) -> bool:
        column = self.of(arm)
        return column is not None and len(column.arms) > 1


def find_groups(co_occurrence: Any, n_with: IntArray, real: int | None = None) -> list[tuple[int, ...]]:
    """Connected sets of arms, each pair linked when together in >= GROUP_SHARE of both arms' sessions
    (`co_occurrence`: the sparse arms x arms count of sessions with both; `real`: only arms below it are grouped,
    the others are lessons' first sessions, `core.analysis.early`)."""
    from scipy import sparse
    from scipy.sparse import csgraph

    n_arms = len(n_with)
    co = co_occurrence.tocoo()
    n = n_with.astype(np.float64)
    i, j = co.row, co.col
    linked = (i != j) & (co.data >= GROUP_SHARE * np.maximum(n[i], n[j])) & (np.minimum(n[i], n[j]) >= 2)
    if real is not None:
        linked &= (i < real) & (j < real)
    if not linked.any():
        return []
    graph = sparse.csr_matrix((np.ones(int(linked.sum())), (i[linked], j[linked])), shape=(n_arms, n_arms))
    _, label = csgraph.connected_components(graph, directed=False)
    members: dict[int, list[int]] = {}
    for arm in np.unique(np.concatenate([i[linked], j[linked]])).tolist():
        members.setdefault(int(label[arm]), []).append(arm)
    return sorted(tuple(sorted(m)) for m in members.values() if len(m) > 1)


def injection_design(
    design: Design, real: int | None = None
) -> tuple[Centred, FloatArray, list[tuple[int, ...]], IntArray, Any]:
    """The injection design's operator (one column per lesson or group), the centred rewards, the
    columns' arms, each arm's column (-1 when never injected in a graded session) and the columns'
    X'X when it is the arms' co-occurrence (no groups, up to CROSS_DENSE_MAX columns), else None (`real`: as
    `find_groups`)."""
    from scipy import sparse

    rows, arms = design.entry_row, design.entry_arm
    n_with = np.bincount(arms, minlength=design.n_arms)
    groups = find_groups(design.repeated_co_occurrence, n_with, real)  # a lesson seen once is in no group
    grouped = {arm for group in groups for arm in group}
    columns = [(int(a),) for a in np.flatnonzero(n_with > 0) if int(a) not in grouped] + groups
    column_of = np.full(design.n_arms, -1, dtype=np.int64)
    share = np.zeros(design.n_arms)
    for number, members in enumerate(columns):
        column_of[list(members)] = number
        share[list(members)] = 1.0 / len(members)
    z, group = design.indicators()
    active = np.flatnonzero(n_with > 0)
    gram = None  # with no group, the columns are the active arms, in order: X is the injection indicator
    if groups:
        x = sparse.csr_matrix((share[arms], (rows, column_of[arms])), shape=(design.n, len(columns)))
        x.sum_duplicates()
    elif len(active) > CROSS_DENSE_MAX:  # X'X is read a block of rows at a time from X (`neighbourhoods`)
        x = design.injected if len(active) == design.n_arms else design.injected[:, active]
    elif len(active) == design.n_arms:
        x, gram = design.injected, design.co_occurrence
    else:
        x, gram = design.injected[:, active], design.co_occurrence[active][:, active]
    op = centred(x, z, group, gram)
    return op, op.center(design.reward), columns, column_of, gram


@dataclass(frozen=True)
class Fitted:
    """The injection design's robust fit, before the claims are read off it (`fit_columns`)."""

    op: Centred
    columns: list[tuple[int, ...]]
    column_of: IntArray
    fit: RobustFit | None  # None: nothing to compare (no columns, or fewer than 2 residual dof)
    identified: npt.NDArray[np.bool_]
    few: npt.NDArray[np.bool_]
    timed: npt.NDArray[np.bool_]  # identified only by time (`switched`)
    ratio: FloatArray  # posterior sd over the prior sd (robust variance for the identified)
    var: FloatArray  # the larger of the robust and the model variance
    counts: IntArray  # sessions with each column
    prior_sd: float
    sigma2: float
    penalty: float
    dense: bool
    switch: Switches | None = None  # where each column switches (`switches`), for the timed ones' reasons
    switch_category: dict[int, str] = field(default_factory=dict)  # the sessions a timed column switches among, named
    confounded: Ties = field(default_factory=dict)  # per column no fit can estimate: its ties (None: unsettled)
    relative: bool = False  # the prior more than the data sets some draw's mean (`_prior_holds_mean`)
    pinned: npt.NDArray[np.bool_] | None = None  # the columns of the draws whose mean their pin holds (`_common_prior`)
    real: int | None = None  # arms below it are lessons; the others their first sessions (`core.analysis.early`)
    # sessions with each column's lesson(s), its first sessions set apart included: the rest are the sessions without
    with_all: IntArray | None = None

    def is_first(self) -> npt.NDArray[np.bool_]:
        """Per column: a lesson's first sessions set apart (`core.analysis.early`), reported nowhere."""
        return first_sessions_column(self.columns, len(self.column_of) if self.real is None else self.real)

    def first_columns(self) -> IntArray:
        """Per column: its lesson's first sessions' column (-1: none; `early.first_column_of`)."""
        return first_column_of(self.column_of, len(self.column_of) if self.real is None else self.real)

    def without(self, c: int) -> int:
        """Graded sessions without column c's lesson(s): neither its later sessions nor its first ones."""
        sessions = self.counts if self.with_all is None else self.with_all
        return int(self.op.n - sessions[c])


def fit_columns(design: Design, *, solver: str = "auto") -> Fitted:
    """The injection design (groups as one column), which columns are identified, and the robust fit
    with the identified columns left almost unshrunk (see the module), on the baselines with their steps
    (`Design.with_steps`, found on each lesson's whole column). Each lesson's first sessions are then a column of
    their own (`core.analysis.early`): `column_of` has an arm past the design's for them; they claim nothing."""
    design = design.with_steps()
    real, lessons = design.n_arms, design
    active = int(np.count_nonzero(np.bincount(design.entry_arm, minlength=design.n_arms)))  # (groups: a few less)
    iterative = solver != "dense" and (solver != "auto" or active > DENSE_MAX)
    design = split_design(design, iterative)  # (it keeps `design.steps`: they are not found again on the split)
    op, y, columns, column_of, gram = injection_design(design, real)
    dof = design.n - op.rank
    counts = np.diff(op.xt.indptr)  # sessions with each column
    with_all = _sessions_with(lessons, columns, counts, column_of, real)
    none = np.zeros(len(columns), dtype=bool)
    if not columns or dof < 2:
        nan = np.full(len(columns), math.nan)
        no_fit = (op, columns, column_of, None, none, none, none, nan, nan, counts, math.nan, math.nan, math.nan)
        return Fitted(*no_fit, True, real=real, with_all=with_all)
    first = first_sessions_column(columns, real)  # (not lessons: exact up to DENSE_MAX lessons, as before)
    dense = solver == "dense" or (solver == "auto" and int(np.count_nonzero(~first)) <= DENSE_MAX)
    hoods = None if dense else neighbourhoods(op, gram=gram)
    _, var0, lam0, sigma2, _ = solve_operator(op, y, float(y @ y), dof, None, TAU_MIN, dense, hoods)
    prior_sd = math.sqrt(sigma2 / lam0)
    few = (counts < MIN_SESSIONS) | (design.n - with_all < MIN_SESSIONS)  # (its first sessions: not without it)
    sizes = np.array([len(members) for members in columns], dtype=np.float64)  # (a group's column: its members')
    # (a column no fit can estimate: its marginal sd may still look cut, a prior shares it out)
    confounded, labels = draws(op, dense, hoods, sizes, lesson_of(columns, real))
    tied = np.isin(np.arange(len(columns)), list(confounded))
    identified = ~few & (np.sqrt(var0) / prior_sd <= SD_RATIO_MAX) & ~tied
    weak = lam0 / WEAK_PRIOR**2
    # every column some fit can estimate gets the weak prior, identified or not: an identified lesson's interval must
    # not rest on a correlated one held near 0 by its prior (a lesson switched inside a block, the data barely moving
    # it, took a correlated lesson's estimate with it: its interval excluded 0 in 45% of such worlds)
    free = ~few & ~tied
    # the lessons whose mean a pin holds: each draw the null space names (`draws.Draw`), its own, else every
    # lesson not tied, those of too few sessions too (each counts in how many a session injects; the full prior holds
    # it, so its sessions show the others' mean no better than a lesson's sum does: leaving them out, the sessions
    # they took a place in looked like data on the rest's mean, and the line was not said)
    sets = [labels == k for k in range(int(labels.max()) + 1)] if (labels >= 0).any() else [~tied]
    common = [_common_prior(op, chosen * sizes, lam0 - weak, free) for chosen in sets]
    prior = np.where(free, weak, lam0)
    holds = [_prior_holds_mean(op, pin, prior) for pin in common]
    # each lesson of a draw whose mean the prior holds is read as its effect against the draw's average, the
    # contrast the log identifies: its estimate and variance that contrast's (`against`), not the pinned b_j's
    held = [chosen for chosen, holds_it in zip(sets, holds, strict=True) if holds_it]
    fit = fit_robust(op, y, prior, dense=dense, hoods=hoods, common=common, against=held, sizes=sizes)
    pinned = np.zeros(len(columns), dtype=bool)
    for chosen in held:
        pinned |= chosen
    # with the robust variance in place of the model's, the data must still cut the prior sd as much
    # (a lesson whose few sessions are far noisier than the rest is not identified by them)
    var = np.maximum(fit.var, fit.model_var)
    ratio = np.where(identified, np.sqrt(var / (var + prior_sd**2)), np.sqrt(var0) / prior_sd)
    identified &= ratio <= SD_RATIO_MAX
    timed, switch, scope = _timed(design, lessons, op, columns, column_of, few)
    identified &= ~timed
    return Fitted(
        op,
        columns,
        column_of,
        fit,
        identified,
        few,
        timed,
        ratio,
        var,
        counts,
        prior_sd,
        sigma2,
        lam0,
        dense,
        switch,
        scope,
        confounded,
        any(holds),
        pinned,
        real,
        with_all,
    )


def _timed(
    design: Design,
    lessons: Design,
    op: Centred,
    columns: list[tuple[int, ...]],
    column_of: npt.NDArray[np.int64],
    few: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.bool_], Switches, dict[int, str]]:
    """Per column: identified only by time (a switch in time or what the baseline's steps left of it, as the ranking
    and the policy read it), where it switches and the sessions it switches among (named), told on each lesson's
    whole column (`lessons`: the design before its first sessions were set apart; `early.whole_columns`: the lesson
    is injected from its first session on, not from its 21st). The data move it only as a step in the baseline
    would, or barely at all (switched where a time block starts: the blocks' baselines take it all; or the steps
    took nearly all of it): the switch is why, its leave-one-out lift is the step as much as anything, and the
    policy draws it from the prior."""
    whole = groups_without_blocks(design.category, design.agent, design.n_agents)
    block = block_codes(design.n, design.n_blocks) if design.n_blocks > 1 else None
    _, group = design.indicators(steps=False)  # a switch is told within the blocks' groups, as the policy tells it
    by_time = time_labels(Stream.held(lessons))  # per arm, as the ranking and the policy read them
    x = whole_columns(op.x, columns, column_of, lessons.n_arms)
    found = timed_switches(x, group, block, whole, (design.category, design.agent))
    switch = _by_steps(found, by_time, columns, lessons.n_arms)
    timed = ~few & (switch.timed | _holds_timed(by_time.timed, columns))
    return timed, switch, _switch_scopes(design, x, group, timed, whole, switch)


def _by_steps(switch: Switches, labels: TimeOnly, columns: list[tuple[int, ...]], real: int) -> Switches:
    """`switch` with the columns whose lesson the baseline's steps left too little of (`labels`: a member's, for a
    group) timed too (`strays`, `share`: the least a member kept). A column of a lesson's first sessions (an arm
    from `real` on) is no lesson's: left as it is."""
    strays, share = np.zeros(len(columns), dtype=bool), np.ones(len(columns))
    first = first_sessions_column(columns, real)
    for c, members in enumerate(columns):
        if first[c]:
            continue
        strays[c] = bool(labels.by_steps[list(members)].any()) and not bool(switch.timed[c])
        kept = labels.share[list(members)]
        share[c] = float(np.nanmin(kept)) if np.isfinite(kept).any() else 1.0
    return replace(switch, timed=switch.timed | strays, strays=strays, share=share)


def _holds_timed(arm_timed: npt.NDArray[np.bool_], columns: list[tuple[int, ...]]) -> npt.NDArray[np.bool_]:
    """Per column: a group holding a lesson identified only by time on its own (`joint_posterior.time_only`, the
    rule every ranking reads, on the whole lessons: no first sessions set apart), though the group's column does not
    switch once (a member also in a session before the switch): the group's effect is the switch's as much as the
    column's. (A lesson alone in its column is identified only by time exactly when its column is; a column of a
    lesson's first sessions is alone.)"""
    out = np.zeros(len(columns), dtype=bool)
    for c, members in enumerate(columns):
        out[c] = len(members) > 1 and bool(arm_timed[list(members)].any())
    return out


def _switch_scopes(
    design: Design, x: Any, group: IntArray, timed: npt.NDArray[np.bool_], whole: IntArray, switch: Switches
) -> dict[int, str]:
    """The sessions a timed column's switch is told among, named (`switches.scopes`), by column."""
    if not timed.any():
        return {}
    edge = switch.edge if switch.edge is not None else np.zeros(len(timed), dtype=bool)
    factors, names = (design.category, design.agent), (design.category_names, design.agent_names)
    found = scopes(x, group, factors, np.flatnonzero(timed & ~edge), names)
    return found | scopes(x, whole, factors, np.flatnonzero(timed & edge), names)


def lesson_claims(
    design: Design,
    *,
    solver: str = "auto",
    session_ids: Sequence[str] | None = None,
    arm_ids: Sequence[str] | None = None,
) -> Claims:
    """Identification, groups, unshrunk robust intervals, drift and category effects of a design
    (`session_ids`: each fold row's session id, to name sessions in the reasons; `arm_ids`: each arm's lesson, to
    name lessons in them; else `#arm`)."""
    return claims_of(design, fit_columns(design, solver=solver), session_ids, arm_ids)


def session_label(design: Design, session_ids: Sequence[str] | None) -> Callable[[int], str]:
    """How a reason names the graded session at a position of `design`: its id, else its place."""
    if session_ids is None:
        return _place
    return lambda position: f"session {session_ids[int(design.rows[position])]}"


def _place(position: int) -> str:
    return f"graded session {position + 1} (in log order)"


def claims_of(
    design: Design, fitted: Fitted, session_ids: Sequence[str] | None = None, arm_ids: Sequence[str] | None = None
) -> Claims:
    """The claims read off a design's `fit_columns` (`session_ids`, `arm_ids`: as `lesson_claims`)."""
    label = session_label(design, session_ids)
    names: Callable[[int], str] = (lambda arm: arm_ids[arm]) if arm_ids is not None else (lambda arm: f"#{arm}")
    op, columns, fit, identified = fitted.op, fitted.columns, fitted.fit, fitted.identified
    shown, column_of, lesson = _lesson_columns(fitted)
    if fit is None:
        nothing = tuple(Column(columns[c], False, "no graded sessions to compare") for c in shown)
        return Claims(column_of, nothing, math.nan, math.nan, True)
    counts = fitted.counts
    apart = fitted.first_columns()  # (a lesson's first sessions: in no half or category without it)
    halves_of, cats = halves(op, fit, apart), by_category(op, fit, design, apart)
    said_of = identified & np.isin(np.arange(len(columns)), shown)  # (a lesson's first sessions: in no flag's count)
    drifts = [drift_p(*halves_of[c]) if said_of[c] else None for c in range(len(columns))]
    cat_p = [heterogeneity_p(cats[c]) if said_of[c] else None for c in range(len(columns))]
    drifting, differs = _flags(drifts), _flags(cat_p)
    out = []
    pinned = fitted.pinned if fitted.relative and fitted.pinned is not None else np.zeros(len(columns), dtype=bool)
    for c in shown:
        members = columns[c]
        n_with, n_without = int(counts[c]), fitted.without(c)
        relative = bool(pinned[c])
        if not identified[c]:
            reason = unidentified_reason(fitted, c, n_with, n_without, label)
            said = c in fitted.confounded and not (fitted.few[c] or fitted.timed[c])
            # (only when said: a session's 1,000 lessons named by no other are each tied to the other 999)
            tied = tuple(  # (a tie through the lesson's own first sessions' column names the others only)
                dict.fromkeys(
                    lesson(arm)
                    for k in fitted.confounded.get(c) or ()
                    for arm in columns[k]
                    if lesson(arm) not in members
                )
            )
            tied = tied if said else ()
            if said:
                unsettled = fitted.confounded[c] is None
                reason = unsettled_reason() if unsettled else confounded_reason([names(arm) for arm in tied])
            together = _together(design, members)
            timed = bool(fitted.timed[c])
            out.append(
                Column(
                    members,
                    False,
                    reason,
                    timed=timed,
                    together=together,
                    estimable=not said,
                    tied=tied,
                    against_average=relative and not said,  # (a tie's row: no estimate, against nothing)
                )
            )
            continue
        effect = joint_interval(fitted, c, n_with, n_without)
        earlier, later = halves_of[c]
        out.append(
            Column(
                members,
                identified=True,
                reason=None,
                together=_together(design, members),
                effect=effect,
                earlier=earlier,
                later=later,
                drift_p=drifts[c],
                drifting=drifting[c],
                by_category=cats[c],
                category_p=cat_p[c],
                category_differs=differs[c],
                against_average=relative,
            )
        )
    extra = {"penalty": fitted.penalty, "relative": fitted.relative}
    return Claims(column_of, tuple(out), fitted.prior_sd, math.sqrt(fitted.sigma2), fitted.dense, extra)


def _lesson_columns(fitted: Fitted) -> tuple[list[int], IntArray, Callable[[int], int]]:
    """The columns `claims_of` reports (every one holding a lesson: not its first sessions', `core.analysis.early`),
    each lesson's place among them (-1: none) and the lesson an arm of the fit is (its first sessions' arm: its own)."""
    real = len(fitted.column_of) if fitted.real is None else fitted.real
    shown = np.flatnonzero(~fitted.is_first()).tolist()
    place = np.full(len(fitted.columns) + 1, -1, dtype=np.int64)  # (the last: for -1, a lesson never injected)
    place[shown] = np.arange(len(shown))
    return shown, place[fitted.column_of[:real]], lambda arm: arm - real if arm >= real else arm


def _together(design: Design, members: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """Per member of a group (none for a lesson alone): (its graded sessions with another member, its graded
    sessions)."""
    if len(members) < 2:
        return ()
    x = design.injected[:, list(members)].tocsc()
    x.data[:] = 1.0
    present = np.asarray(x.sum(axis=1)).ravel()  # members injected in each session
    out = []
    for m in range(len(members)):
        rows = x.indices[x.indptr[m] : x.indptr[m + 1]]
        out.append((int(np.count_nonzero(present[rows] >= 2)), len(rows)))
    return tuple(out)


def _sessions_with(
    lessons: Design, columns: list[tuple[int, ...]], counts: IntArray, column_of: IntArray, real: int
) -> IntArray:
    """Per column: the graded sessions of `lessons` (the lessons' whole columns) injecting any of its members, its
    later sessions (`counts`) and its first ones set apart (`core.analysis.early`; `column_of`: each arm's column,
    the first sessions' from `real` on), which are not sessions without it. (A group's: counted once.)"""
    out = counts.copy()
    first = first_column_of(column_of, real)
    apart = first >= 0
    out[apart] += counts[first[apart]]  # (each first session is its own column's: the two counts add up)
    if len(column_of) <= real:
        return out
    for c, members in enumerate(columns):  # (a group whose members' first sessions are columns of their own: rare)
        if len(members) > 1 and min(members) < real and bool((column_of[np.add(members, real)] >= 0).any()):
            out[c] = int(np.unique(lessons.entry_row[np.isin(lessons.entry_arm, members)]).size)
    return out


def joint_interval(fitted: Fitted, c: int, n_with: int, n_without: int) -> Interval:
    """Column c's joint effect: the fit's coefficient (a drawn lesson's against its draw's average, `against`), the
    larger of the robust and the model variance."""
    assert fitted.fit is not None
    return Interval(
        float(fitted.fit.estimate[c]), math.sqrt(float(fitted.var[c])), float(fitted.fit.df[c]), n_with, n_without
    )


def unidentified_reason(
    fitted: Fitted, c: int, n_with: int, n_without: int, label: Callable[[int], str] | None = None
) -> str:
    """Why column c claims nothing (`label`: how to name a graded session by its position; `session_label`)."""
    if fitted.fit is None:
        return "no graded sessions to compare"
    if fitted.few[c]:
        return f"too few sessions to identify: {n_with} with, {n_without} without (needs {MIN_SESSIONS} each)"
    if fitted.timed[c]:
        return timed_reason(fitted.switch, c, fitted.switch_category.get(c), label or _place)
    if c in fitted.confounded:
        ties = fitted.confounded[c]
        if ties is None:
            return unsettled_reason()
        return confounded_reason([f"{len(ties):,} other lesson column(s)"] * bool(ties))
    return f"the data barely move it from the prior (posterior sd {fitted.ratio[c]:.0%} of the prior's)"


def switched(op: Centred, block: IntArray | None = None) -> npt.NDArray[np.bool_]:
    """Per column of `op`: its only variation within the baseline groups is one switch in log order
    (`switched_in` on its columns and baseline groups)."""
    return switched_in(op.x, op.group, block)


def _common_prior(
    op: Centred, sizes: FloatArray, strength: float, free: npt.NDArray[np.bool_]
) -> tuple[FloatArray, float]:
    """The lessons' mean over the columns with `sizes` > 0 (one draw's: `fit_columns` pins each draw's on its own;
    each column's lessons: a group's column counts its members, `draws.common_direction`): when the data barely
    see it (every session injects as many lessons, so only their differences show), it keeps the full prior instead
    of the weak one: the rank-one penalty (u, c) with u that direction, c = strength as far as the data see u'A u
    less than COMMON_SEEN times the mean A_jj of its `free` columns (of all its columns when none is: a long tail
    of lessons of 1-4 sessions must not make a typical column's information look small)."""
    chosen = sizes > 0
    if not chosen.any():
        return np.zeros(len(sizes)), 0.0
    u = common_direction(sizes)
    typical = chosen & free if (chosen & free).any() else chosen
    seen = float(np.sum(op.apply(u) ** 2)) / max(float(op.gram_diag()[typical].mean()), 1e-300)
    return u, strength * max(0.0, 1.0 - seen / COMMON_SEEN)


def _prior_holds_mean(op: Centred, common: tuple[FloatArray, float], prior: FloatArray) -> bool:
    """Whether the prior, more than the data, sets the lessons' mean: along `common`'s direction u the fit's prior
    precision (the columns' own, `prior`, and the pin's strength) at least the data's, u'A u. Then each of those
    lessons' effects is against their average (`estimates.against_average_line`); a pin the data outweigh moves
    little."""
    u, strength = common
    return strength > 0 and float(prior @ (u * u)) + strength >= float(np.sum(op.apply(u) ** 2))


def _flags(p_values: list[float | None]) -> list[bool]:
    adjusted = benjamini_hochberg(p_values)
    return [
        a is not None and p is not None and a < FLAG_FDR and p < FLAG_P for p, a in zip(p_values, adjusted, strict=True)
    ]
