"""Which lessons help and whether the bandit is healthy: `loo`, `lint`, `simulate`."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from lesson_credit.cli.common import (
    SubParsers,
    UsageError,
    command,
    floor_arg,
    open_workspace,
    positive_int,
    print_json,
    print_warnings,
    warn_problems,
)
from lesson_credit.cli.render import counted, fitted_columns, output_width, safe, stdout_is_terminal, table, wrap
from lesson_credit.core.base.numbers import fixed, signed, span
from lesson_credit.core.base.safe_json import read_json
from lesson_credit.core.base.safe_read import STATE_MAX_BYTES

if TYPE_CHECKING:
    from lesson_credit.core.analysis.effects import LooResult
    from lesson_credit.core.sim.report import SimulationReport


def cmd_loo(args: argparse.Namespace) -> int:
    if args.written_by is not None:
        args.no_write = True  # one agent's view is not written over the workspace's loo-results.json
    ws = open_workspace(args, writes=not args.no_write)
    results, meta = ws.loo_run(min_with=args.min_with, min_without=args.min_without, write=not args.no_write)
    ws.warnings.extend(meta["dropout_problems"])  # what of the dropout logs was not used, a line each
    warn_problems(ws, args.json)
    if args.json:
        path = ws.state_dir / "loo-results.json"
        if args.no_write:
            from lesson_credit.core.analysis.effects import loo_payload

            print_json(loo_payload(results, ws.now_iso(), args.min_with, args.min_without, **meta), ws)
        else:
            print_json(read_json(path, STATE_MAX_BYTES), ws)  # what was written, as written
        return 0
    from lesson_credit.core.analysis.estimates import (
        MIN_RANDOMIZED,
        against_average_line,
        marks_against_average,
        nothing_line,
        order_key,
    )

    graded = sum(1 for s in ws.sessions() if not s.pending)
    baselines = "category and agent baselines" if len(set(ws.session_agents())) > 1 else "category baselines"
    width = output_width()
    head = (
        f"effect per lesson over {counted(graded, 'graded session')}: the randomized (dropout) estimate with at least "
        f"{MIN_RANDOMIZED} kept and {MIN_RANDOMIZED} withheld sessions when at least as precise, else the joint "
        f"estimate ({baselines} + every lesson); leave-one-out as a second opinion (min {args.min_with} with, "
        f"{args.min_without} without)"
    )
    print(wrap(head, width) + "\n")
    for line in (nothing_line([r.effect for r in results]), against_average_line([r.effect for r in results])):
        if line:
            print(wrap(line, width))
    ordered = sorted(results, key=lambda r: (order_key(r.effect, r.sufficient), r.path))
    marked = marks_against_average([r.effect for r in results])
    randomized = any(r.randomized is not None for r in results)
    during = any(r.n_during for r in results)  # graded sessions that included a lesson during them (as --json's)
    header = ["lesson", "effect", "95% CI", "p (BH)", "from"]
    if randomized:
        header += ["randomized", "95% CI", "kept/withheld"]
    header += ["with", "without", *(["during"] if during else [])]
    header += ["naive Δ", "95% CI", "p (BH)", "by category", "IPW", "flags"]
    rows = [_loo_row(r, randomized, during, marked) for r in ordered]
    fitting: dict[str, Any] = {
        "width": width,
        "shorten_columns": {0: "path", len(header) - 1: "end"},
        "drop": _loo_drop_order(header),
    }
    flagged = [(safe(row[0]), safe(row[-1])) for row in rows if row[-1]]
    # a flag says what to distrust in a row: where it would be left out or cut, it gets a line of its own,
    # the table otherwise as it would be (the columns the flags made room for not shown in their place)
    shown, cut = fitted_columns(header, rows, **fitting)
    listed = bool(flagged) and (len(header) - 1 not in shown or len(header) - 1 in cut)
    names = partial(_loo_hidden, header, listed)
    hide = [i for i in range(len(header)) if i not in shown or i == len(header) - 1] if listed else []
    print(table(header, rows, right=tuple(range(1, len(header) - 1)), hide=hide, hidden_names=names, **fitting))
    if listed:
        print(wrap("\nflags:\n" + "\n".join(f"  {path}: {flags}" for path, flags in flagged), width, hang=4))
    if meta.get("sessions_without_propensity"):
        lacking = meta["sessions_without_propensity"]
        have = "has" if lacking == 1 else "have"
        print(wrap(f"\n{counted(lacking, 'graded session')} {have} no logged selection propensities (IPW)", width))
    if not args.no_write:
        print(wrap(f"\nwritten to {ws.state_dir / 'loo-results.json'}", width))
    return 0


def _loo_drop_order(header: list[str]) -> list[int]:
    """The `loo` columns a narrow terminal leaves out, first to last: the second opinion's refinements, its
    difference, the randomized estimate's detail, the flags (then listed under the table); the lesson and its
    headline estimate stay."""
    last = len(header) - 1  # flags
    naive = header.index("naive Δ")  # naive Δ, 95% CI, p (BH), by category, IPW
    order = [naive + 4, naive + 3, naive + 2, naive + 1, naive, header.index("without")]
    if "randomized" in header:
        first = header.index("randomized")  # randomized, 95% CI, kept/withheld
        order += [first + 2, first + 1, first]
    during = [header.index("during")] if "during" in header else []  # kept longer than the flags (listed below)
    return [*order, last, *during, header.index("with")]


def _loo_hidden(header: list[str], listed: bool, hidden: Sequence[int]) -> str:
    """The `loo` columns a narrow terminal left out, by the estimate each belongs to (three estimates have a
    95% CI column): "randomized 95% CI, kept/withheld; leave-one-out's without, naive Δ, 95% CI; flags"."""
    naive, last = header.index("with"), len(header) - 1
    first = header.index("randomized") if "randomized" in header else naive

    def named(i: int) -> tuple[str, str]:  # (the estimate, the column)
        if i == last:
            return "", "flags (listed below)" if listed else "flags"
        if header[i] == "during":  # sessions that included the lesson during them: no estimate's
            return "", "during"
        if i >= naive:
            return "leave-one-out's", header[i]
        if i >= first:
            return "randomized", "estimate" if i == first else header[i]
        return "", header[i]

    parts: list[tuple[str, list[str]]] = []
    for label, name in map(named, hidden):
        if parts and label and parts[-1][0] == label:
            parts[-1][1].append(name)
        else:
            parts.append((label, [name]))
    return "; ".join(f"{label} {', '.join(names)}".strip() for label, names in parts)


def _num(value: float | None, sign: bool = True) -> str:
    return "-" if value is None else (signed(value) if sign else fixed(value))


def _span(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else span(low, high)


def _coins(kept: int, withheld: int, unused: int) -> str:
    """The kept/withheld cell, and the coins no stratum could use (`0/0` alone reads as never flipped for)."""
    return f"{kept}/{withheld}" + (f" +{unused} unused" if unused else "")


def _loo_row(r: LooResult, randomized: bool, during: bool = False, marked: bool = False) -> tuple[object, ...]:
    """One row of the `loo` table: the headline (an estimate in parentheses claims nothing), then the rest (`marked`:
    `from` says which headlines are against the average, `estimates.marks_against_average`)."""
    from lesson_credit.core.analysis.estimates import AGAINST_AVERAGE_MARK, kind

    eff = r.effect
    flags = r.flags()
    if eff is None:
        shown = "-"
    else:
        shown = _num(eff.estimate) if eff.claims else f"({signed(eff.estimate)})"
    cells: list[object] = [
        r.path,
        shown,
        "-" if eff is None else _span(eff.ci_low, eff.ci_high),
        _num(None if eff is None else eff.p_adjusted, False),
        f"{kind(eff)}, {AGAINST_AVERAGE_MARK}" if marked and eff is not None and eff.against_average else kind(eff),
    ]
    if randomized:
        rnd = r.randomized
        cells += [
            "-" if rnd is None else _num(rnd.estimate),
            "-" if rnd is None else _span(rnd.ci_low, rnd.ci_high),
            "-" if rnd is None else _coins(rnd.n_kept, rnd.n_withheld, rnd.n_unused),
        ]
    cells += [
        r.n_with,
        r.n_without,
        *([r.n_during] if during else []),
        _num(r.delta),
        _span(r.ci_low, r.ci_high),
        _num(r.p_adjusted, False),
        _num(r.delta_category),
        _num(r.delta_ipw),
        "; ".join(flags),
    ]
    return tuple(cells)


def cmd_lint(args: argparse.Namespace) -> int:
    from lesson_credit.core.health import ERROR, WARNING, lint

    ws = open_workspace(args)
    findings = lint(ws)
    print_warnings(ws)  # (what the read could not do: caches it cannot keep)
    errors = [f for f in findings if f.severity == ERROR]
    warnings = [f for f in findings if f.severity == WARNING]
    failing = errors if args.fail_on == "error" else errors + warnings
    if args.json:
        print_json(
            {
                "findings": [f.as_json() for f in findings],
                "errors": len(errors),
                "warnings": len(warnings),
                "fail_on": args.fail_on,
                "failed": bool(failing),
            }
        )
    elif not findings:
        print("no problems found")
    else:
        width = output_width()
        for f in findings:
            print(wrap(f"{f.severity}: [{f.code}] {safe(f.message)}", width))
            print(wrap(f"  -> {safe(f.advice)}", width, hang=3))
        verdict = f"{'failed' if failing else 'passed'} (--fail-on {args.fail_on})"  # (it said "failing on errors")
        print(f"\n{counted(len(errors), 'error')}, {counted(len(warnings), 'warning')}; {verdict}")
    return 1 if failing else 0


def _progress_bar(label: str) -> Callable[[int, int], None]:
    """A one-line progress bar on stderr (only when stderr is a terminal)."""
    if not sys.stderr.isatty():
        return lambda done, total: None

    def show(done: int, total: int) -> None:
        width = 30
        filled = int(width * done / total) if total else width
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def cmd_simulate(args: argparse.Namespace) -> int:
    from lesson_credit.core.sim.scenario import check_seeds
    from lesson_credit.core.sim.simulate import format_report, run_simulation, scenario

    changes = {
        "n_lessons": args.lessons,
        "n_sessions": args.sessions,
        "k": args.k,
        "floor": args.floor,
        "noise": args.noise,
        "keyword_breadth": args.keyword_breadth,
        "relevance_a": args.relevance_a,
        "relevance_b": args.relevance_b,
        "helpful_share": args.helpful_share,
        "harmful_share": args.harmful_share,
        "effect_size": args.effect_size,
        "category_affinity": args.category_affinity,
        "injection_mention": args.injection_mention,
        "dropout": args.dropout,
    }
    try:
        sc = scenario(args.scenario, **{key: value for key, value in changes.items() if value is not None})
        check_seeds(args.first_seed, args.seeds)
    except ValueError as exc:  # a parameter out of its range: the command line is wrong
        raise UsageError(str(exc)) from None
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    report = run_simulation(sc, seeds, progress=_progress_bar(f"simulating {args.scenario}"))  # stderr, a terminal
    if args.json:
        print_json(report.as_json())
    else:
        print(_simulation_text(report, format_report(report)))
    return 0


def _simulation_text(report: SimulationReport, full: str) -> str:
    """simulate's report: as core.sim.report formats it when it fits (or nothing is fitted: a pipe), else
    fitted to the terminal by the tables' helper (the columns after spearman left out as needed). On a terminal,
    the regret per selection policy under a table that shows each one's is said in one line (`_regret_wins`)."""
    from lesson_credit.core.sim.report import REPORT_HEADER, report_heading, report_notes, report_rows

    width, notes = output_width(), report_notes(report)
    lines = full.split("\n")
    if width is None or max(len(line) for line in lines) <= width:
        head = "\n".join(lines[: len(lines) - len(notes)])  # (the notes are format_report's last lines)
    else:
        fitted = table(REPORT_HEADER, report_rows(report), width=width, shorten_columns={0: "end"}, drop=(3, 2, 4))
        head = f"{wrap(report_heading(report), width)}\n{fitted}"
    header = next(line for line in head.split("\n") if line.startswith(REPORT_HEADER[0]))
    if stdout_is_terminal() and REPORT_HEADER[-1] in header:  # the table shows its regret column
        notes = _regret_wins(report, notes)
    return head + "\n" + wrap("\n".join(notes), width)


def _regret_wins(report: SimulationReport, notes: list[str]) -> list[str]:
    """`notes` with their last lines, each selection policy's regret (the table's, row by row), said in one: how
    often each policy's is below seed's. Seven lines of the demo's 28 that pushed the table's header off 24 rows."""
    from lesson_credit.core.sim.report import REPORT_HEADER, regret_lines

    block = regret_lines(report)
    rows = {e.name: e.per_seed.get("regret") or () for e in report.estimators}
    policies = [p for p in report.regret if report.regret_summary(p).n]
    if not block or not all(_same(rows.get(p, ()), report.regret[p]) for p in policies):
        return notes  # a policy without a row of its own (or whose row says other numbers): listed as it was
    wins = [
        f"{p} {versus.wins:.0%}"
        for p in policies
        if p != "seed" and len(report.seeds) > 1 and (versus := report.regret_versus(p, "seed")).n
    ]
    said = f"{REPORT_HEADER[-1]}: each row's selection policy against the oracle"
    below = f"; below seed's in {', '.join(wins)} of seeds" if wins else ""
    return [*notes[: len(notes) - len(block)], said + below]


def _same(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether two per-seed series are one (as rounded apart: 0.21924857905 and 0.219248579)."""
    return len(a) == len(b) and all(math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-9) for x, y in zip(a, b, strict=True))


# simulate --scenario's worlds, as core.sim.scenario names them (not imported: the parser is built for every command)
SCENARIOS = (
    "default broad-keywords always-paired sign-flip few-sessions injection-echo dropout binary-rewards unequal-noise "
    "many-lessons category-effect self-selected outcome-salience salience-blind success-keyword trend auto-include"
).split()

LOO_HELP = (
    "Each lesson's effect per injection (the headline, one rule for this table, --json and\n"
    "the dashboard): the randomized dropout estimate when it has at least 20 kept and 20\n"
    "withheld sessions and is at least as precise, else the joint estimate (category\n"
    "baselines + every lesson in one regression; unshrunk with a robust 95% interval for\n"
    "identified lessons, the later half's when the effect drifted). 'from' says which. An\n"
    "estimate in parentheses claims nothing: the lesson is unidentified (too few sessions\n"
    "with or without it, the data barely move it from the prior, or only time tells it apart:\n"
    "switched on or off mid-block, injected in every session on one side) or always injected\n"
    "with others (its group's effect is in the flags). Then, as a second opinion, graded sessions\n"
    "with vs without each lesson: difference in mean reward, 95% interval, p-values\n"
    "(BH-adjusted), a category-controlled and an IPW difference; a session that included the\n"
    "lesson during it (record --during) is one without it, counted in the during column\n"
    "(shown when some lesson has such a session). When no lesson is\n"
    "distinguishable from zero (BH-adjusted p < 0.05), a line above the table says so.\n"
    "Writes state/lesson-thompson/loo-results.json unless --no-write."
)


def register(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add this group's subcommands to `sub`."""
    p = command(
        sub,
        "loo",
        [common, data],
        "each lesson's effect on reward, and leave-one-out lift",
        LOO_HELP,
        "  lesson-credit loo\n  lesson-credit loo --min-with 10 --no-write --json",
    )
    p.add_argument(
        "--min-with",
        type=positive_int,
        default=5,
        metavar="N",
        help="sessions with the lesson needed, >= 1 (default 5)",
    )
    p.add_argument(
        "--min-without",
        type=positive_int,
        default=20,
        metavar="N",
        help="sessions without it needed, >= 1 (default 20)",
    )
    p.add_argument("--no-write", action="store_true", help="do not write loo-results.json")
    p.add_argument(
        "--written-by",
        default=None,
        metavar="AGENT",
        help="database store: only the sessions this agent recorded (with their grades); implies --no-write",
    )
    p.set_defaults(func=cmd_loo)

    p = command(
        sub,
        "lint",
        [common, data],
        "health checks (errors and warnings)",
        "Checks that find what silently breaks a lesson bandit. Errors: no lessons at all,\n"
        "unreadable log lines, the log file gone while bandit-state.json remains, duplicate session ids,\n"
        "broken lesson files (a link to nothing too), constant rewards, posteriors collapsed to one mean.\n"
        "Warnings: pending sessions (and those pending again because their latest grade was retracted),\n"
        "sessions selected but never recorded though a later session was (a session-end hook that did\n"
        "not run; one with no record after its selection is still running, not listed), ghost arms\n"
        "(in the log, not the library), paths in the library not read as lessons (a folder named like\n"
        "a lesson file, a linked folder, a link to a folder not there), a lesson file reached by two\n"
        "paths (two arms), lessons/-prefixed ids, lessons never injected (and which name only kinds of\n"
        "work no session had: match.session_categories) or never salient, entries without salience,\n"
        "keywords matching most journals, binary rewards, a lesson listed twice in one session,\n"
        "bandit-state.json out of step with the log, string outcomes with no reward mapped. Exit 1\n"
        "when a finding at --fail-on level or worse exists.\n"
        "--json: {findings: [{code, severity, message, advice, items: [{item, reason}]}], errors,\n"
        "warnings, fail_on, failed}: errors and warnings count the findings of each severity, as the\n"
        "text's last line does (a finding is one check, its items the sessions or lessons it names).",
        "  lesson-credit lint                       # for CI: fails on errors only\n"
        "  lesson-credit lint --fail-on warning --json",
    )
    p.add_argument(
        "--fail-on",
        choices=["error", "warning"],
        default="error",
        help="exit 1 on errors only, or on warnings too (default: error)",
    )
    p.set_defaults(func=cmd_lint)
    register_simulate(sub, common, data)


def register_simulate(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add `simulate` to `sub`: its options are the scenario's knobs."""
    p = command(
        sub,
        "simulate",
        [common, data],
        "compare credit strategies and selection policies in a world with known truth",
        "Simulate worlds with known lesson effects and run each selection policy's loop on them\n"
        "(the credit strategies, joint, random, the oracle); report how well each estimator ranks the\n"
        "truly helpful and harmful lessons, and each policy's cumulative regret against the oracle\n"
        "with its spread over seeds (--json: `regret` per policy; of one seed, a spread, `std`,\n"
        "`p10` and `p90`, is null: unknown, not 0). Options left out keep the scenario's values.",
        "  lesson-credit simulate --seeds 2 --sessions 300\n"
        "  lesson-credit simulate --scenario broad-keywords --seeds 2 --sessions 300 --json",
    )
    p.add_argument(
        "--scenario",
        default="default",
        choices=SCENARIOS,
        metavar="NAME",  # (the help names each one; the choices in full were a 266-column usage line)
        help="the world: default; broad-keywords (accidental keyword hits 25%%); always-paired (half the "
        "lessons injected in couples); sign-flip (effects change sign halfway); few-sessions (150); "
        "injection-echo (an injected lesson's keywords show in the journal because it was injected, 50%%); "
        "dropout (a fifth of the chosen lessons withheld at random); and worlds that break the joint model's "
        "assumptions: binary-rewards (0/1 outcomes); unequal-noise (noise sd 0.015-0.285 by category); "
        "many-lessons (400 lessons, 300 sessions); category-effect (a lesson helps at home, harms elsewhere); "
        "self-selected (3 slots among ~20 candidates); outcome-salience (good sessions mention more "
        "keywords); salience-blind (every injection acts, relevant or not); success-keyword (a third of the "
        "no-effect lessons carry a keyword that echoes success); and worlds that move: trend (the baseline rises "
        "0.3 over the log); auto-include (trouble pulls lessons in mid-session) (default: default)",
    )
    p.add_argument("--seeds", type=positive_int, default=20, help="worlds to simulate, >= 1 (default 20)")
    p.add_argument("--first-seed", type=int, default=0, help="seed of the first world; the rest follow (default 0)")
    p.add_argument("--lessons", type=positive_int, default=None, help="lessons in the world, >= 2 (default 120)")
    p.add_argument("--sessions", type=positive_int, default=None, help="sessions per run, >= 1 (default 1500)")
    p.add_argument("--k", type=positive_int, default=None, help="lessons injected per session, >= 1 (default 8)")
    p.add_argument("--floor", type=floor_arg, default=None, help="credit floor in [0, 1] (default 0.3)")
    p.add_argument("--noise", type=float, default=None, help="standard deviation of reward noise, >= 0 (default 0.15)")
    p.add_argument(
        "--keyword-breadth",
        type=float,
        default=None,
        help="P(a keyword hits by accident), in [0, 1] (default 0.05)",
    )
    p.add_argument("--relevance-a", type=float, default=None, help="relevance frequency ~ Beta(a, b) per lesson: a")
    p.add_argument("--relevance-b", type=float, default=None, help="relevance frequency ~ Beta(a, b) per lesson: b")
    p.add_argument("--helpful-share", type=float, default=None, help="share of lessons that help (0-1)")
    p.add_argument("--harmful-share", type=float, default=None, help="share of lessons that harm (0-1)")
    p.add_argument("--effect-size", type=float, default=None, help="typical |effect| on reward when relevant")
    p.add_argument(
        "--category-affinity", type=float, default=None, help="0: relevance ignores categories; 1: home category only"
    )
    p.add_argument(
        "--injection-mention",
        type=float,
        default=None,
        help="extra chance an injected lesson's keyword shows in the journal because it was injected",
    )
    p.add_argument(
        "--dropout", type=float, default=None, metavar="EPSILON", help="withhold chosen lessons at random (0-1)"
    )
    p.set_defaults(func=cmd_simulate)
