"""Reward sources side by side (docs/records.md): agreement between people and the other sources, and the
grading order that puts first the sessions a person's grade would teach the most.

Both are read models over one snapshot of a workspace: the scores of every source per session
(`FoldData.scores`), each person's own latest scores, the sessions' categories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from lesson_credit.core.analysis.agreement import DEFAULT_THRESHOLD, Agreement, agreement
from lesson_credit.core.analysis.informative import InformativeOrder, informative_order
from lesson_credit.core.analysis.joint import kind_codes
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.ids import one_form
from lesson_credit.core.model.sources import HUMAN, SOURCES
from lesson_credit.core.workspace import Workspace


@dataclass(frozen=True, eq=False)
class AgreementReport:
    pairs: tuple[Agreement, ...]
    by_category: tuple[tuple[str, tuple[Agreement, ...]], ...]  # (category, its pairs); "" for none
    threshold: float

    def as_json(self) -> dict[str, Any]:
        """The agreement JSON of docs/records.md: {"pairs": [...]}, and per category "by_category"."""
        return {
            "pairs": [p.as_json() for p in self.pairs],
            "by_category": [
                {"category": category or None, "pairs": [p.as_json() for p in pairs]}
                for category, pairs in self.by_category
            ],
        }


def agreement_report(ws: Workspace, source: str | None = None, threshold: float = DEFAULT_THRESHOLD) -> AgreementReport:
    """People against each other source (judge, heuristic, outcome), and each two people against each
    other, over the sessions both scored; `source` keeps the pairs that name it."""
    if not 0.0 <= threshold <= 1.0:
        raise WorkspaceError(f"threshold must be in [0, 1], got {threshold!r}")
    data = ws.data()
    n = data.n_sessions
    scores = data.scores()
    people = ws.person_scores()
    columns: list[tuple[str, str, np.ndarray, np.ndarray]] = [
        (HUMAN, other, scores.values[HUMAN][:n], scores.values[other][:n]) for other in SOURCES if other != HUMAN
    ]
    columns += [(a, b, people[a], people[b]) for a, b in combinations(sorted(people), 2)]
    known = {name for pair in columns for name in pair[:2]}
    source = None if source is None else one_form(source)  # a person's name, as the log's are read
    if source is not None and source not in known:
        raise WorkspaceError(f"unknown source {source!r} (sources: {', '.join(sorted(known))})")
    if source is not None:
        columns = [c for c in columns if source in c[:2]]
    ids = ws.session_table().session_ids
    pairs = [agreement(a, b, x, y, threshold, ids) for a, b, x, y in columns]
    keep = [i for i, p in enumerate(pairs) if p.n or source is not None or i < len(SOURCES) - 1]
    # kinds of work as the estimates group them (`Code` and ` code ` are one), each named by the spelling most
    # of its sessions use
    kinds, names = kind_codes(ws.session_categories(), np.arange(n, dtype=np.int64))
    by_category = []
    for code, category in enumerate(names):
        mask = kinds == code
        found = tuple(
            agreement(a, b, np.where(mask, x, np.nan), np.where(mask, y, np.nan), threshold, ids)
            for i, (a, b, x, y) in enumerate(columns)
            if i in keep
        )
        if any(p.n for p in found):
            by_category.append((category, tuple(p for p in found if p.n)))
    return AgreementReport(tuple(pairs[i] for i in keep), tuple(by_category), threshold)


@dataclass(frozen=True, eq=False)
class GradingQueue:
    """Sessions no person graded, in the order asked for, with what the informative order weighs."""

    session_ids: tuple[str, ...]
    order: str  # "oldest" or "informative"
    informative: InformativeOrder | None  # the scores per row (informative only)
    rows: tuple[int, ...]


ORDERS = ("oldest", "informative")


def grading_queue(ws: Workspace, order: str = "informative") -> GradingQueue:
    """`oldest`: pending sessions in log order (what `n` has always done); `informative`: sessions no
    person graded, most informative first (core.analysis.informative)."""
    if order not in ORDERS:
        raise WorkspaceError(f"unknown order {order!r} (expected one of {', '.join(ORDERS)})")
    data = ws.data()
    ids: Sequence[str] = ws.session_table().session_ids
    if order == "oldest":
        rows = np.flatnonzero(np.isnan(data.base))
        return GradingQueue(tuple(ids[r] for r in rows.tolist()), order, None, tuple(rows.tolist()))
    found = informative_order(data, ws.posterior())
    rows_list = found.rows.tolist()
    return GradingQueue(tuple(ids[r] for r in rows_list), order, found, tuple(rows_list))
