"""An arm of an earlier copy of our bandit-state.json written while some of its sessions were still pending.

`fold_through` (core/bandit/fold.py) gives an arm's numbers right after the session its `last_updated` names,
under the grades now. A write made while an earlier session of the arm was pending (recorded without a reward,
graded since: the usual order when a grader runs after the session) left the arm without that session. Those
numbers are the fold through the stamped session less the sessions first graded after the stamped one had its
score: each such session is taken out, latest first grade first, and the arm compared after each.
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
    """The sessions of a log first graded late (after a later session had its score), for `explains`; what it
    reads of the log is read once, on the first arm asked about."""

    def __init__(self, post: Posterior, index: LogIndex) -> None:
        self.post, self.index = post, index

    @cached_property
    def scored(self) -> npt.NDArray[np.int64]:
        return first_scored(self.index, self.post.data.n_sessions)

    def explains(self, arm: int, row: int, through: Numbers, counts: Numbers) -> bool:
        """Whether `counts` (an arm's alpha, beta, n in a file) are arm `arm`'s numbers `through` (right after
        session `row`, under the grades now) less the sessions before `row` naming it that were first graded after
        `row` had its score: what a write made while they were pending held (latest first grade taken out
        first)."""
        post, scored = self.post, self.scored
        since = int(scored[row])
        if since < 0:
            return False
        data = post.data
        entries = np.flatnonzero(data.entry_arm == arm)  # the arm's
        sessions = data.entry_session[entries]
        candidates = np.unique(sessions[sessions < row])
        candidates = candidates[~np.isnan(post.base[candidates]) & (scored[candidates] > since)]
        alpha, beta, n = float(through[0]), float(through[1]), int(through[2])
        for session in candidates[np.argsort(-scored[candidates], kind="stable")].tolist():
            mine = entries[sessions == session]
            w = credit_mod.weight(data.entry_salience[mine], post.settings.floor)
            d_alpha, d_beta = credit_mod.credit(np.full(len(w), float(post.base[session])), w, post.settings.strategy)
            alpha, beta, n = alpha - float(d_alpha.sum()), beta - float(d_beta.sum()), n - len(mine)
            if _close((alpha, beta, n), counts):
                return True
        return False


def _close(mine: Numbers, file: Numbers) -> bool:
    return (
        all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) for a, b in zip(mine[:2], file[:2], strict=True))
        and mine[2] == file[2]
    )
