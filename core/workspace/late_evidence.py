"""An arm of an earlier copy of our bandit-state.json written before some of the log's evidence of it.

`fold_through` (core/bandit/fold.py) gives an arm's numbers right after the session its `last_updated` names,
under the grades now, with every increment. A write made while an earlier session of the arm was pending
(recorded without a reward, graded since: the usual order when a grader runs after the session) left the arm
without that session; one made before gptme's bandit's update of the workspace's own file was logged
(increments: the next write logs it) left it without those. Those numbers are the fold through the stamped
session less, when every increment of the arm was logged after that session, those increments, and less the
sessions first graded after the stamped one had its score: each such session is taken out, latest first grade
first, and the arm compared after each.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import numpy.typing as npt

from lesson_credit.core.bandit.fold import Posterior
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.model import credit as credit_mod

Numbers = tuple[float, float, int]


def first_scored(index: LogIndex, n_sessions: int) -> npt.NDArray[np.int64]:
    """Per session row, the line from which it had a score: its record's line when the record holds one (a
    reward, or an outcome), else the line of its first grade event (whatever that grade said); -1: never scored."""
    never = np.iinfo(np.int64).max
    found = np.full(n_sessions, never, dtype=np.int64)
    for position, (line, grade) in enumerate(index.grades):
        row = index.grade_rows[position]
        if row < 0:
            found_row = index.row_of(grade.session_id)  # (a grade read before its session)
            row = -1 if found_row is None else found_row
        if 0 <= row < n_sessions:
            found[row] = min(int(found[row]), line)
    own = ~np.isnan(index.session_base.view()[:n_sessions])
    own[[row for row, _ in index.outcome_labels.items() if row < n_sessions]] = True
    found[own] = index.session_lines.view()[:n_sessions][own]
    found[found == never] = -1
    return found


class LateGrades:
    """The evidence of a log logged late (sessions first graded after a later session had its score, increments
    after the session an arm names), for `explains`; what it reads of the log is read once, when first asked."""

    def __init__(self, post: Posterior, index: LogIndex) -> None:
        self.post, self.index = post, index

    @cached_property
    def scored(self) -> npt.NDArray[np.int64]:
        return first_scored(self.index, self.post.data.n_sessions)

    def explains(self, arm: int, row: int, through: Numbers, counts: Numbers) -> bool:
        """Whether `counts` (an arm's alpha, beta, n in a file) are arm `arm`'s numbers `through` (right after
        session `row`, under the grades now), or those without its increments when all were logged after that
        session, less the sessions before `row` naming it that were first graded after `row` had its score: what a
        write made before those held (latest first grade taken out first)."""
        post, scored = self.post, self.scored
        since = int(scored[row])
        if since < 0:
            return False
        data = post.data
        entries = np.flatnonzero(data.entry_arm == arm)  # the arm's
        sessions = data.entry_session[entries]
        candidates = np.unique(sessions[sessions < row])
        candidates = candidates[~np.isnan(post.base[candidates]) & (scored[candidates] > since)]
        order = candidates[np.argsort(-scored[candidates], kind="stable")].tolist()
        for alpha, beta, n in (through, *self._before_increments(arm, row, through)):
            if _close((alpha, beta, n), counts):
                return True
            for session in order:
                mine = entries[sessions == session]
                w = credit_mod.weight(data.entry_salience[mine], post.settings.floor)
                d_alpha, d_beta = credit_mod.credit(
                    np.full(len(w), float(post.base[session])), w, post.settings.strategy
                )
                alpha, beta, n = alpha - float(d_alpha.sum()), beta - float(d_beta.sum()), n - len(mine)
                if _close((alpha, beta, n), counts):
                    return True
        return False

    def _before_increments(self, arm: int, row: int, through: Numbers) -> list[Numbers]:
        """`through` without the arm's increments, when every increments event naming it was logged after session
        `row` (their selections are known only summed); none otherwise."""
        steps = self.post.data.added_after
        mine = steps.arm == arm
        if not np.any(mine) or np.any(steps.after[mine] <= row):
            return []
        increments = self.index.increments.items()
        selections = sum(n for lesson, (_, _, n, _) in increments if self.index.find_arm(lesson) == arm)
        return [
            (
                float(through[0]) - float(steps.alpha[mine].sum()),
                float(through[1]) - float(steps.beta[mine].sum()),
                int(through[2]) - selections,
            )
        ]


def _close(mine: Numbers, file: Numbers) -> bool:
    return (
        all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(mine[:2], file[:2], strict=True))
        and mine[2] == file[2]
    )
