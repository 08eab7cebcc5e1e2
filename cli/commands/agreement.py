"""How far the reward sources agree with people: `agreement` (docs/records.md)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lesson_credit.cli.common import (
    SubParsers,
    command,
    next_command,
    open_workspace,
    option,
    print_json,
    unit_float,
    warn_problems,
)

if TYPE_CHECKING:
    from lesson_credit.cli.render import Shorten
    from lesson_credit.core.analysis.agreement import Agreement

from lesson_credit.cli.render import counted, output_width, safe, stdout_is_terminal, table, wrap
from lesson_credit.core.base.numbers import fixed

DEFAULT_THRESHOLD = 0.5  # --threshold's default: the cut for kappa


def _num(value: float | None) -> str:
    return "-" if value is None else fixed(value)  # (-0.0004: 0.000, no sign)


def _rows(pairs: Sequence[Agreement]) -> list[tuple[object, ...]]:
    return [
        (
            p.source_a,
            p.source_b,
            p.n,
            _num(p.mae),
            _num(p.pearson),
            _num(p.spearman),
            _num(p.kappa),
            f"{p.confusion.tp}/{p.confusion.fp}/{p.confusion.fn}/{p.confusion.tn}",
        )
        for p in pairs
    ]


HEADERS = ["reference", "compared", "n", "MAE", "Pearson", "Spearman", "kappa", "tp/fp/fn/tn"]
# what each source's name stands for in a row (core/model/sources.py); any other name is a person's
SOURCE_WORDS = {
    "human": "the latest grade of any person",
    "judge": "the LLM judge's score",
    "heuristic": "a heuristic or trajectory grade",
    "outcome": "the outcome word's reward",
}
SOURCES: dict[int, Shorten] = {0: "end", 1: "end"}  # a grader's name may be long; the numbers are never cut


NOTHING_TO_COMPARE = (
    "No session has both a person's grade and another source's score yet: grade sessions by hand "
    "(`lesson-credit grade ID R`, or 0-9 in a session of the dashboard) to compare."
)


def _rows_line(pairs: Sequence[Agreement]) -> str:
    """What a row is, in the words of the rows shown: a source set against a reference, each named; a row of
    two graders' names is two people who graded the same sessions."""
    named = [
        f"{name} ({SOURCE_WORDS[name]})" for name in dict.fromkeys(p.source_b for p in pairs) if name in SOURCE_WORDS
    ]
    people = [p for p in pairs if p.source_a not in SOURCE_WORDS]
    said = []
    if named:
        against = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
        said.append(f"human ({SOURCE_WORDS['human']}) against {against}")
    if people:
        a, b = safe(people[0].source_a), safe(people[0].source_b)
        said.append(
            f"two grader names ({a} against {b}) are two people who graded the same sessions, {a} the reference"
        )
    return f"Each row sets a score against a reference: {'; '.join(said)}. " if said else ""


def _by_category_lines(
    by_category: Sequence[tuple[str, Sequence[Agreement]]], args: argparse.Namespace
) -> tuple[str, str]:
    """On a terminal, what stands for the tables of each category (a screen or two of them under the overall
    one, pushing it out of view): how many, named; and the command that prints them (with this one's source and
    threshold: its numbers), on a line of its own."""
    names = [safe(category or "(none)") for category, _ in by_category]
    said = f"by category, {counted(len(names), 'table')} ({', '.join(names)}); they are printed by:"
    words = ["agreement", "--by-category"] + (option("--source", args.source) if args.source is not None else [])
    words += ["--threshold", repr(args.threshold)] if args.threshold != DEFAULT_THRESHOLD else []  # (all digits)
    return said, "  " + next_command(args, words)


def cmd_agreement(args: argparse.Namespace) -> int:
    from lesson_credit.core.reward_report import agreement_report

    ws = open_workspace(args)
    report = agreement_report(ws, args.source, args.threshold)
    warn_problems(ws, args.json)
    if args.json:
        print_json(report.as_json(), ws)
        return 0
    width = output_width()
    head = (
        f"Agreement over the sessions both sources scored. {_rows_line(report.pairs)}kappa and tp/fp/fn/tn cut "
        f"both scores at {report.threshold:g} (a score >= it is positive; the reference's is taken as the truth)."
    )
    print(wrap(head, width) + "\n")
    print(table(HEADERS, _rows(report.pairs), right=(2, 3, 4, 5, 6), width=width, shorten_columns=SOURCES))
    if report.by_category and not args.by_category and stdout_is_terminal():
        said, command = _by_category_lines(report.by_category, args)
        print(f"\n{wrap(said, width)}\n{command}")
    else:
        for category, pairs in report.by_category:
            print(wrap(f"\ncategory {safe(category or '(none)')}:", width))
            print(table(HEADERS, _rows(pairs), right=(2, 3, 4, 5, 6), width=width, shorten_columns=SOURCES))
    if not any(pair.n for pair in report.pairs):
        print("\n" + wrap(NOTHING_TO_COMPARE, width))
    return 0


def register(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add this group's subcommands to `sub`."""
    p = command(
        sub,
        "agreement",
        [common, data],
        "how far the judge, heuristics and outcomes agree with people",
        "For the sessions a person graded and another source scored: n, mean absolute difference,\n"
        "Pearson and Spearman correlation, and Cohen's kappa with the confusion counts after both\n"
        "scores are cut at --threshold (a score >= it is positive; the person is the reference);\n"
        "overall and per category. Also each two people who graded the same sessions. Sources:\n"
        "human (the latest grade of any person), judge, heuristic, outcome, or a grader's name.\n"
        "A row sets the compared source against the reference (human, or the first of two people).\n"
        '--json: {"pairs": [{source_a, source_b, n, mae, pearson, spearman, kappa, threshold,\n'
        "confusion: {tp, fp, fn, tn}}], by_category: [{category, pairs}]}; a statistic the data\n"
        "cannot give (too few sessions, no spread) is null.",
        "  lesson-credit agreement\n  lesson-credit agreement --source judge --threshold 0.6 --json",
    )
    p.add_argument("--source", default=None, metavar="NAME", help="only the pairs naming this source or grader")
    p.add_argument(
        "--threshold",
        type=unit_float,
        default=DEFAULT_THRESHOLD,
        metavar="T",
        help="cut for kappa, in [0, 1]: a score >= T is positive (default: 0.5)",
    )
    p.add_argument(
        "--by-category",
        action="store_true",
        help="print a table per category on a terminal too (there, one line counts them; piped, they are printed)",
    )
    p.set_defaults(func=cmd_agreement)
