"""The lessons a lesson was never injected without, and the flags `loo` prints for them (core/analysis/effects.py):
its leave-one-out lift cannot tell its effect from theirs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.joint import Design

if TYPE_CHECKING:
    from lesson_credit.core.analysis.estimates import Effect

FloatArray = npt.NDArray[np.float64]

MAX_NAMED_PARTNERS = 3


def partner_reasons(partners: list[tuple[str, bool]], effect: Effect | None) -> list[str]:
    """The flags for the lessons a lesson was never injected without (`inseparable`; each with whether it is in the
    lesson's own group): not separable from those of its own group, nor from the others unless the joint fit
    identifies the lesson (or its group): then only the leave-one-out lift does not separate them."""
    separated = effect is not None and (effect.identified or effect.group_effect is not None)
    apart = [name for name, grouped in partners if separated and not grouped]
    out = []
    for chosen, words in (
        (
            [name for name, grouped in partners if grouped or not separated],
            "not separable: never injected without {}",
        ),
        (apart, "lift not separable: never injected without {} (the joint fit separates them, the lift does not)"),
    ):
        if chosen:
            shown = ", ".join(chosen[:MAX_NAMED_PARTNERS]) + (" ..." if len(chosen) > MAX_NAMED_PARTNERS else "")
            out.append(words.format(shown))
    return out


def inseparable(design: Design, n_with: FloatArray) -> dict[int, list[int]]:
    """Per arm injected in at least two graded sessions: the arms present in every one of them, but
    not an arm present in every graded session (it is as much in the sessions without the arm, so it
    cannot confound the comparison; it is flagged itself: no control)."""
    if not len(design.entry_arm):
        return {}
    co = design.repeated_co_occurrence.tocoo()  # n >= 2 below: a lesson seen once is no one's partner
    row, col = co.row.astype(np.int64), co.col.astype(np.int64)
    n = n_with[row]
    hit = (co.data == n) & (row != col) & (n >= 2) & (n_with[col] < design.n)
    out: dict[int, list[int]] = {}
    for j, k in sorted(zip(row[hit].tolist(), col[hit].tolist(), strict=True)):
        out.setdefault(j, []).append(k)
    return out
