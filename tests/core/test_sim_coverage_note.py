"""simulate's coverage line says what a coverage outside its 85-95% target means."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest

from lesson_credit.core.sim.report import SimulationReport, report_notes
from lesson_credit.core.sim.scenario import Scenario
from lesson_credit.core.sim.simulate import run_simulation


@cache
def _report() -> SimulationReport:
    return run_simulation(Scenario(name="tiny", n_lessons=20, n_sessions=40, k=3), 1)


def _coverage_lines(per_seed: tuple[float, ...]) -> list[str]:
    notes = report_notes(replace(_report(), coverage=per_seed))
    at = next(i for i, line in enumerate(notes) if line.startswith("joint 90% interval coverage"))
    return notes[at : at + 2]


@pytest.mark.parametrize(
    ("per_seed", "shown"),
    [
        ((0.96, 0.97), "96.5%"),  # mean of the two seeds
        ((0.9506,), "95.1%"),  # the demo's "95.1%": above 95 as printed
    ],
)
def test_coverage_above_target_says_the_intervals_are_cautious(per_seed: tuple[float, ...], shown: str) -> None:
    line, comment = _coverage_lines(per_seed)
    assert line == f"joint 90% interval coverage: {shown} (target 85-95%)"
    assert comment.startswith("  above target:") and "wider than needed" in comment and "not wrong" in comment
    assert len(comment) <= 80  # one line on a terminal


def test_coverage_below_target_says_the_intervals_are_too_narrow() -> None:
    line, comment = _coverage_lines((0.80, 0.82))
    assert len(comment) <= 80  # one line on a terminal
    assert line == "joint 90% interval coverage: 81.0% (target 85-95%)"
    assert comment.startswith("  below target:") and "too narrow" in comment


@pytest.mark.parametrize("per_seed", [(0.90,), (0.85,), (0.9504,), (0.8496,)])  # 95.0% and 85.0% as printed
def test_coverage_inside_target_gets_no_comment(per_seed: tuple[float, ...]) -> None:
    line, following = _coverage_lines(per_seed)
    assert line.startswith("joint 90% interval coverage:")
    assert following.startswith("joint on each strategy's log")
