"""Which lessons were candidates in which session, with what probability of being selected.

For each session the *last* selection event logged for its id before its session record counts
(a retried `select` supersedes the earlier draw; a selection logged after the record did not
choose what the record shows). A propensity stored in the session record for one of its
lessons wins over the selection's for that lesson: it is what the recorder attests was used.
Each (session, lesson) pair counts once, and only propensities in [0, 1] count.

A lesson the selection chose (to inject: dropout's withheld are not among them) that the record does not name is
no candidacy of the session: the draw said inject it, the record says it was not, so "a candidate not injected"
would count it among the sessions without it at 1 / (1 - P(chosen)), and it was not left out at random (its
file renamed between `select` and `record`, when it was in fact injected under its new name; or an agent that
left it out). A lesson's id is its path: its new name is another arm, with no propensity in that session. So is
one the record names only as included during the session (`"included": "during"`: not injected before it, as the
estimates' treatment reads it), its stored propensity too. A candidate the selection did not choose that the record
names as included during the session stays one, not injected (1 - P(chosen)): the draw left it out, whatever came
up later (an intention-to-treat comparison, docs/estimates.md "Chosen before, included during").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lesson_credit.core.analysis.effects import Candidacy
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.snapshot import FoldData
from lesson_credit.core.log.unchosen import session_selections


@dataclass(frozen=True)
class Candidacies:
    items: tuple[Candidacy, ...]
    sessions_without: int  # graded sessions with no logged propensity at all


def candidacies_of(index: LogIndex, data: FoldData) -> Candidacies:
    """The candidacies of a log read into `index` (whose snapshot is `data`)."""
    n_sessions = data.n_sessions
    chosen = session_selections(index, n_sessions)  # row -> its latest selection before its record (as unchosen.py)
    out: dict[tuple[int, int], float] = {}
    starts = data.session_start
    before = np.ones(len(data.entry_arm), dtype=bool)  # entries injected before their session (not "during")
    before[data.during[data.during < len(before)]] = False
    unfollowed: dict[int, set[int | None]] = {}  # row -> arms its selection chose that its record did not inject
    for row, selection in chosen.items():
        start, stop = int(starts[row]), int(starts[row + 1])
        recorded = set(data.entry_arm[start:stop][before[start:stop]].tolist())
        unfollowed[row] = {index.find_arm(lesson_id) for lesson_id in selection.selected} - recorded
        for lesson_id, p in selection.propensity.items():
            arm = index.find_arm(lesson_id)  # in whichever Unicode form the selection spelled it
            if arm is not None and arm not in unfollowed[row] and 0.0 <= p <= 1.0:
                out.setdefault((row, arm), p)
    for row, props in index.propensities.items():
        if row >= n_sessions:
            continue
        arms = data.entry_arm[int(starts[row]) : int(starts[row + 1])].tolist()
        seen = {arm for arm in unfollowed.get(row, ()) if arm is not None}  # (their stored propensities: none either)
        for arm, stored in zip(arms, props, strict=False):
            if arm in seen:
                continue
            seen.add(arm)
            if stored is not None and 0.0 <= stored <= 1.0:
                out[(row, arm)] = stored
    covered = np.zeros(n_sessions, dtype=bool)
    covered[np.fromiter((row for row, _ in out), dtype=np.int64, count=len(out))] = True
    graded = ~np.isnan(data.base)
    items = tuple(Candidacy(row, arm, p) for (row, arm), p in sorted(out.items()))
    return Candidacies(items, int((graded & ~covered).sum()))
