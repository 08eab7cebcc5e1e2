"""The ranking: each lesson's shrunk joint estimate, the number to rank lessons by, with one rule for a lesson
identified only by time, wherever a ranking is shown.

A lesson never injected before one session and in every graded session from it on (or the reverse), within
the fit's baselines and time blocks, or switched once over the log where a time block starts (or on in every session
of some blocks and in none of the others, as the baselines are: `switches.in_baselines`)
(`joint_posterior.time_only`), or one the fit's baseline steps inside the time blocks leave less than a fifth of
its precision (`joint_posterior.time_labels`), is ranked at the prior's mean, 0 (sd: the prior's per injection): the
shrunk fit reads a step in the baseline at its switch as its effect, and the data cannot tell the two apart. The
same rule, on the same switches, for `loo`'s `ranking` (and the Analysis screen, which shows `loo`'s), the
Lessons screen's `ranking` column (`effects_by_lesson`, kept in `.cache/effects.msgpack`) and the joint
selection policy (which draws such a lesson from the prior), whether or not the lesson has the sessions to
be identified otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.joint import Design, JointFit, fit_sums, sums
from lesson_credit.core.analysis.joint_posterior import Stream, time_only
from lesson_credit.core.log.snapshot import FoldData

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

# the ranking `effects_by_lesson` computes, as `.cache/effects.msgpack` keeps it (with the log's key):
# 2: a lesson identified only by time ranked at the prior's 0; 3: 3 time blocks at 50-70 graded sessions (were 2);
# 4: a lesson grouped with one identified only by time ranked at 0 too; 5: a lesson constant within every baseline
# group is no one's neighbour (beyond 600 lessons: the others' sds); 6: beyond 4,096 lessons, a lesson's
# neighbours are among those injected in a session with it only (their sds); 7: beyond 600 lessons, neighbours
# tied in correlation chosen by their sessions, not by the order lessons first appear in the log (the sds); 8: a
# lesson on in every session of some time blocks and in none of the others, which the baselines take all of, at 0; 9:
# one whose variation is nearly all one switch per block (a stray injection before it, a gap after it) at 0 too; 10:
# a lesson the session's selection did not choose is read as included during the session (core/log/unchosen.py); 11:
# also where the selection chose a lesson that was no candidate, or one lesson in two spellings; 12: the fit's baseline
# steps where the design switches inside a time block (core/analysis/steps.py), a lesson they leave less than a fifth
# of its precision at 0 (the rule of 9 gone); 13: a category's own time blocks (12 sessions a block or more), steps
# at a lesson's best split within a block and at a new lesson's first injection judged against the log so far; 14:
# time blocks per category and agent
EFFECTS_VERSION = 14


def timed_arms(design: Design) -> BoolArray:
    """Per arm of a design: identified only by time (`joint_posterior.time_only`)."""
    return time_only(Stream.held(design))


def ranked(fit: JointFit, timed: BoolArray) -> tuple[FloatArray, FloatArray]:
    """(estimate, sd) per arm to rank by: the fit's, except the prior's (0, the prior sd of a coefficient times
    the lesson's mean weight) for an arm identified only by time (`timed`) that the fit has data for."""
    estimate, sd = fit.estimate.copy(), fit.sd.copy()
    prior = fit.prior_sd if math.isfinite(fit.prior_sd) else math.nan
    hit = timed[: len(estimate)] & np.isfinite(estimate)
    estimate[hit] = 0.0
    sd[hit] = prior * fit.mean_weight[hit]
    return estimate, sd


def effects_by_lesson(
    data: FoldData,
    categories: Sequence[str | None],
    floor: float,
    agents: Sequence[str | None] = (),
    fit: JointFit | None = None,
    timed: BoolArray | None = None,
) -> dict[str, float]:
    """Each lesson's ranking (change in reward per injection) for lessons with one: the joint fit of the log
    (`fit`: the caller's, of these very inputs, else fitted here as `joint.fit_log` fits it), a lesson
    identified only by time at the prior's 0 (`timed`: the caller's `time_only` of these very inputs, else
    found here)."""
    if fit is None or timed is None:
        stream = Stream.of_log(data, categories, floor, agents)
        if fit is None:
            fit = fit_sums(sums(stream.sessions, stream.entries, stream.block), stream.sessions)
        if timed is None:
            timed = time_only(stream)
    estimate, _ = ranked(fit, timed)
    return {arm: float(e) for arm, e in zip(data.arm_ids, estimate.tolist(), strict=True) if math.isfinite(e)}
