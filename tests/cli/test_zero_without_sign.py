"""A number that rounds to zero prints without a sign: `loo` printed prefer-existing-utilities' interval as
[-0.00, +0.22] (its low end is -0.00255) and a naive difference of +0.000, `replay` a mean change of +0.000 for
every lesson it left alone: a sign where there is none. One helper (core.base.numbers) for every face."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lesson_credit.core.base.numbers import fixed, signed, span
from tests.cli.test_terminal_width import copy_demo
from tests.support.cli_run import run_cli

# a sign before a number whose every digit is 0 (+0.000, -0.00, +0): what none of the outputs may print
SIGNED_ZERO = re.compile(r"(?<![\w.])[+-]0(?:\.0+)?(?![\w.])")
LESSON = "patterns/prefer-existing-utilities.md"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_demo(tmp_path_factory.mktemp("demo"))


def test_the_helpers_print_a_zero_without_a_sign() -> None:
    # by hand: -0.00255 is -0.00 to two places, 0.0004 and -0.0004 are 0.000 to three, -0.0005 is -0.001
    assert span(-0.00255, 0.22) == "[0.00, +0.22]"
    assert span(-0.006, 0.004) == "[-0.01, 0.00]"
    assert signed(-0.0004) == signed(0.0004) == signed(-0.0) == "0.000"
    assert signed(-0.0006) == "-0.001" and signed(0.25) == "+0.250" and signed(-0.004, 2) == "0.00"
    assert fixed(-0.0004) == "0.000" and fixed(-0.274) == "-0.274" and fixed(-1e-12, 2) == "0.00"


@pytest.mark.parametrize(
    "argv",
    [
        ["loo", "--no-write"],
        ["replay"],
        ["replay", "--strategy", "evidence", "--floor", "0.5"],
        ["agreement"],
        ["simulate", "--seeds", "2", "--sessions", "60", "--lessons", "12", "--k", "3"],
    ],
)
def test_no_command_prints_a_signed_zero(demo: Path, argv: list[str]) -> None:
    code, out, err = run_cli(*argv, "-w", str(demo))
    assert code == 0, err
    assert SIGNED_ZERO.findall(out) == [], [line for line in out.splitlines() if SIGNED_ZERO.search(line)]


# the demo read with no lesson's first sessions set apart (core.analysis.early): so its interval for
# prefer-existing-utilities is the one whose low end rounds to -0.00 (with them set apart: [+0.013, +0.227])
@pytest.mark.usefixtures("whole_lessons")
def test_loo_prints_the_interval_that_rounds_to_zero_at_one_end_as_zero(demo: Path) -> None:
    code, out, err = run_cli("loo", "--no-write", "--json", "-w", str(demo))
    assert code == 0, err
    effect = next(r for r in json.loads(out)["results"] if r["lesson"] == LESSON)["effect"]
    assert -0.005 < effect["ci_low"] < 0 < effect["ci_high"]  # a low end that rounds to -0.00
    code, out, err = run_cli("loo", "--no-write", "-w", str(demo))
    row = next(line for line in out.splitlines() if line.startswith(LESSON))
    assert f"[0.00, +{effect['ci_high']:.2f}]" in row, row
