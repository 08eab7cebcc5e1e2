"""`lesson-credit`: the command line an agent's hooks call and people script with --json.

Headless commands never import the dashboard (or textual): a session hook pays only for
the engine. Bad input exits 1 with one line on stderr and leaves the log untouched.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cli.render import fmt, safe, table

EXIT_BAD_INPUT = 1


class CliError(Exception):
    """A one-line reason for refusing; exits 1."""


def _reward(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"reward must be a number in [0, 1], got {text!r}") from None
    return value


def _unit_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return value


def _floor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"floor must be a number in [0, 1], got {text!r}") from None
    if not (0.0 <= value <= 1.0):
        raise argparse.ArgumentTypeError(f"floor must be in [0, 1], got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be an integer, got {text!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"seed must be in [0, 2**63), got {text!r}")
    return value


def _print_warnings(ws: Any) -> None:
    """What a command that succeeded could not do (a derived file), one line each on stderr."""
    for warning in ws.warnings:
        print(f"warning: {safe(warning)}", file=sys.stderr)


def _print_json(payload: Any) -> None:
    # ensure_ascii: no control character (not even U+009B, an 8-bit CSI) reaches the terminal raw
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=True, allow_nan=False) + "\n")


def _workspace(args: argparse.Namespace) -> Any:
    from core.workspace import Workspace

    root = Path(args.workspace)
    if not root.is_dir():
        raise CliError(f"workspace not found: {root}")
    store = _store(args, root)
    return Workspace(root, allow_outside_journals=getattr(args, "allow_outside", False), store=store)


def _store(args: argparse.Namespace, root: Path) -> Any:
    """The event store: --store, $LESSON_CREDIT_STORE, [store] url in config.toml; None = the JSONL file."""
    from core.config import ConfigError, load_config
    from core.stores import open_store, store_url
    from core.workspace import STATE_DIR

    config_path = root.resolve() / STATE_DIR / "config.toml"
    try:
        extra = load_config(config_path).extra
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    url = store_url(getattr(args, "store", None), extra, config_path)
    written_by = getattr(args, "written_by", None)
    if url is None:
        if written_by is not None:
            raise CliError("--written-by needs a database store: the file does not record who wrote each event")
        return None
    store = open_store(url, config_path.parent / "sessions.jsonl", getattr(args, "agent", None))
    from core.pgstore import PgStore

    if isinstance(store, PgStore):
        store.cache_dir = config_path.parent / ".cache"  # the workspace's parsed-log cache, per store position
        store.written_by = written_by
    elif written_by is not None:
        raise CliError("--written-by needs a database store: the file does not record who wrote each event")
    return store


def _warn_problems(ws: Any, quiet: bool = False) -> None:
    """Log and library problems go to stderr as warnings: they never block reading."""
    if quiet:
        return
    problems = ws.log_problems()
    for problem in problems[:5]:
        print(f"warning: {safe(ws.log.name)} {safe(problem)}", file=sys.stderr)
    if len(problems) > 5:
        print(f"warning: {len(problems) - 5} more problems in {safe(ws.log.name)}", file=sys.stderr)
    lesson_problems = ws.lesson_problems()
    for problem in lesson_problems[:5]:
        print(f"warning: skipped lesson {safe(problem)}", file=sys.stderr)
    if len(lesson_problems) > 5:
        print(f"warning: {len(lesson_problems) - 5} more broken lesson files", file=sys.stderr)


def _status_table(table_obj: Any) -> str:
    rows = [
        (r.path, r.category, r.status, r.n, fmt(r.alpha, 2), fmt(r.beta, 2), fmt(r.mean), fmt(r.ci_low), fmt(r.ci_high))
        for r in table_obj.rows
    ]
    settings = table_obj.settings
    head = (
        f"{table_obj.sessions} sessions ({table_obj.graded} graded); "
        f"strategy {settings.strategy}, floor {settings.floor:g}"
    )
    return (
        head
        + "\n\n"
        + table(
            ["lesson", "category", "status", "n", "alpha", "beta", "mean", "ci_low", "ci_high"],
            rows,
            right=(3, 4, 5, 6, 7, 8),
        )
    )


def _sort_rows(table_obj: Any, key: str) -> Any:
    from dataclasses import replace

    keys: dict[str, Callable[[Any], Any]] = {
        "mean": lambda r: (-r.mean, r.path),
        "n": lambda r: (-r.n, r.path),
        "path": lambda r: r.path,
        "ci_low": lambda r: (-r.ci_low, r.path),
    }
    return replace(table_obj, rows=tuple(sorted(table_obj.rows, key=keys[key])))


def cmd_status(args: argparse.Namespace) -> int:
    from core.derived_state import repair_state

    ws = _workspace(args)
    result = _sort_rows(ws.lesson_table(details=False), args.sort)
    _warn_problems(ws, args.json)
    repaired = repair_state(ws)
    if repaired is not None:
        print(f"warning: {safe(repaired)}", file=sys.stderr)
    if args.json:
        _print_json(result.as_json())
    else:
        print(_status_table(result))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    before = ws.lesson_table()
    result = _sort_rows(ws.replay(args.strategy, args.floor, write=args.write), args.sort)
    _warn_problems(ws, args.json)
    _print_warnings(ws)
    if args.json:
        _print_json(result.as_json())
        return 0
    old = {r.path: r.mean for r in before.rows}
    rows = [
        (
            r.path,
            r.status,
            r.n,
            fmt(r.alpha, 2),
            fmt(r.beta, 2),
            fmt(r.mean),
            f"{r.mean - old.get(r.path, r.mean):+.3f}",
        )
        for r in result.rows
    ]
    verb = "written" if args.write else "what-if, nothing written"
    print(
        f"replayed {result.sessions} sessions under strategy {result.settings.strategy}, "
        f"floor {result.settings.floor:g} ({verb}); "
        f"change is against {before.settings.strategy}/{before.settings.floor:g}\n"
    )
    print(table(["lesson", "status", "n", "alpha", "beta", "mean", "change"], rows, right=(2, 3, 4, 5, 6)))
    return 0


def _explanation_text(exp: Any) -> str:
    s = exp.session
    grade = "pending" if exp.base_reward is None else f"{exp.base_reward:g} ({safe(s.grader)})"
    out = [
        f"session {safe(s.session_id)}  {safe(s.timestamp or '')}  category {safe(s.category or '-')}",
        f"grade {grade}; strategy {exp.settings.strategy}, floor {exp.settings.floor:g}",
    ]
    if exp.journal_problem:
        out.append(f"note: {safe(exp.journal_problem)}")
    rows = [
        (c.path, fmt(c.salience), fmt(c.weight), fmt(c.reward), f"{c.alpha_delta:+.3f}", f"{c.beta_delta:+.3f}")
        for c in exp.lessons
    ]
    out += ["", table(["lesson", "salience", "weight", "reward", "alpha", "beta"], rows, right=(1, 2, 3, 4, 5))]
    text = exp.journal_text
    for c in exp.lessons:
        out.append("")
        out.append(f"{safe(c.path)}: salience {c.salience:.3f} -> weight {c.weight:.3f}")
        if c.note:
            out.append(f"  note: {safe(c.note)}")
        if c.salience_missing:
            out.append("  note: the record had no salience; counted as 0.5")
        if c.breakdown is None:
            continue
        if not c.breakdown.keywords:
            out.append("  no counted keywords: salience 0.5 by definition")
        for k in c.breakdown.keywords:
            if k.hit:
                start, end = k.offsets[0], k.offsets[0] + k.lengths[0]
                from core.salience import snippet

                where = ", ".join(str(o) for o in k.offsets[:5]) + (" ..." if len(k.offsets) > 5 else "")
                out.append(f"  hit   '{safe(k.keyword)}' x{k.count} at {where}: {safe(snippet(text, start, end))}")
            else:
                out.append(f"  miss  '{safe(k.keyword)}'")
    if len(exp.grades) > 1:
        out.append("")
        out.append("grade history:")
        for g in exp.grades:
            note = f"  {safe(g.note)}" if g.note else ""
            value = "retracted (pending)" if g.base_reward is None else f"{g.base_reward:g}"
            out.append(f"  {safe(g.timestamp or '-')}  {value}  {safe(g.grader)}{note}")
    return "\n".join(out)


def cmd_explain(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    exp = ws.explain(args.session_id, lesson=args.lesson)
    if args.json:
        _print_json(exp.as_json())
    else:
        print(_explanation_text(exp))
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    exp = ws.record(
        args.session_id,
        Path(args.journal),
        args.lessons,
        reward=args.reward,
        category=args.category,
        grader=args.grader,
    )
    _print_warnings(ws)
    if args.json:
        _print_json(exp.as_json())
    else:
        print(_explanation_text(exp))
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    before = ws.explain(args.session_id, with_journal=False) if not args.json else None
    record = ws.grade(args.session_id, args.reward, grader=args.grader, note=args.note)
    _print_warnings(ws)
    exp = ws.explain(args.session_id, with_journal=False)
    if args.json:
        payload = exp.as_json()
        payload["grader"] = record.grader
        payload["history"] = [
            {"base_reward": g.base_reward, "grader": g.grader, "timestamp": g.timestamp, "note": g.note}
            for g in exp.grades
        ]
        _print_json(payload)
        return 0
    previous = "pending" if before is None or before.base_reward is None else f"{before.base_reward:g}"
    print(f"graded {safe(args.session_id)}: {previous} -> {args.reward:g} ({safe(record.grader)})\n")
    rows = [
        (
            c.path,
            fmt(c.salience),
            fmt(c.reward),
            f"{c.alpha_delta:+.3f}",
            f"{c.beta_delta:+.3f}",
            fmt(c.alpha_after / (c.alpha_after + c.beta_after)),
        )
        for c in exp.lessons
    ]
    print(table(["lesson", "salience", "reward", "alpha", "beta", "mean now"], rows, right=(1, 2, 3, 4, 5)))
    return 0


def cmd_select(args: argparse.Namespace) -> int:
    from core.store import EventLog, StoreError

    ws = _workspace(args)
    if args.context == "-":
        context = sys.stdin.read()
    else:
        try:
            context = Path(args.context).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            raise CliError(f"context file not found: {args.context}") from None
        except OSError as exc:
            raise CliError(f"cannot read context {args.context}: {exc.strerror}") from None
    try:
        selection = ws.select(
            context, k=args.k, seed=args.seed, session_id=args.session_id, log=not args.dry_run, dropout=args.dropout
        )
    except StoreError as exc:
        if not args.offline_ok or isinstance(ws.log, EventLog):
            raise
        from core.offline import select_offline

        selection = select_offline(ws, context, k=args.k, seed=args.seed, session_id=args.session_id)
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(
            f"warning: {safe(reason)}; selected from the last known posteriors (not logged, no dropout)",
            file=sys.stderr,
        )
    if args.json:
        payload: dict[str, object] = {
            "session_id": selection.session_id,
            "selected": list(selection.selected),
            "candidates": list(selection.candidates),
            "propensity": selection.propensity,
            "k": selection.k,
            "seed": selection.seed,
        }
        if args.dropout > 0:
            payload["withheld"] = list(selection.withheld)
        _print_json(payload)
    else:
        for lesson_id in selection.selected:
            print(safe(lesson_id))
        print(
            f"# session {safe(selection.session_id)}: {len(selection.selected)} of {len(selection.candidates)} "
            f"matching lessons (seed {selection.seed})",
            file=sys.stderr,
        )
    return 0


def cmd_loo(args: argparse.Namespace) -> int:
    if args.written_by is not None:
        args.no_write = True  # one agent's view is not written over the workspace's loo-results.json
    ws = _workspace(args)
    results = ws.loo(min_with=args.min_with, min_without=args.min_without, write=not args.no_write)
    _warn_problems(ws, args.json)
    if args.json:
        path = ws.state_dir / "loo-results.json"
        if args.no_write:
            from core.analysis import loo_payload

            _print_json(loo_payload(results, ws.now_iso(), args.min_with, args.min_without, **ws.loo_meta))
        else:
            sys.stdout.write(path.read_text(encoding="utf-8"))
        return 0
    ordered = sorted(results, key=lambda r: (r.headline is None, -(r.headline if r.headline is not None else 0.0)))

    def num(value: float | None, sign: bool = True) -> str:
        return "-" if value is None else (f"{value:+.3f}" if sign else f"{value:.3f}")

    def span(low: float | None, high: float | None) -> str:
        return "-" if low is None or high is None else f"[{low:+.2f}, {high:+.2f}]"

    randomized = any(r.randomized is not None for r in results)
    rows = []
    for r in ordered:
        flag = "; ".join(r.confound_reasons) if r.confounded else ""
        if not r.sufficient:
            flag = ("insufficient data for LOO; " + flag).rstrip("; ")
        eff = r.effect
        cells: list[object] = [r.path]
        if randomized:
            rnd = r.randomized
            cells += [
                "-" if rnd is None else num(rnd.estimate),
                "-" if rnd is None else span(rnd.ci_low, rnd.ci_high),
                "-" if rnd is None else f"{rnd.n_kept}/{rnd.n_withheld}",
            ]
        cells += [
            num(None if eff is None else eff.estimate),
            "-" if eff is None else span(eff.ci_low, eff.ci_high),
            num(None if eff is None else eff.p_adjusted, False),
            r.n_with,
            r.n_without,
            num(r.delta),
            span(r.ci_low, r.ci_high),
            num(r.p_adjusted, False),
            num(r.delta_category),
            num(r.delta_ipw),
            flag,
        ]
        rows.append(tuple(cells))
    graded = sum(1 for s in ws.sessions() if not s.pending)
    print(
        f"effect per lesson over {graded} graded sessions: joint estimate (category baselines + every lesson, "
        f"empirical-Bayes prior), then leave-one-out as a second opinion (min {args.min_with} with, "
        f"{args.min_without} without)\n"
    )
    header = ["lesson"]
    if randomized:
        header += ["randomized", "95% CI", "kept/withheld"]
    header += ["effect", "95% CI", "p (BH)", "with", "without", "naive Δ", "95% CI", "p (BH)", "by category", "IPW"]
    header += ["flags"]
    right = tuple(range(1, len(header) - 1))
    print(table(header, rows, right=right))
    meta = ws.loo_meta
    if meta.get("sessions_without_propensity"):
        print(f"\n{meta['sessions_without_propensity']} graded session(s) have no logged selection propensities (IPW)")
    if not args.no_write:
        print(f"\nwritten to {ws.state_dir / 'loo-results.json'}")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from core.health import PROBLEM, lint

    ws = _workspace(args)
    findings = lint(ws)
    problems = [f for f in findings if f.severity == PROBLEM]
    if args.json:
        _print_json({"findings": [f.as_json() for f in findings], "problems": len(problems)})
    elif not findings:
        print("no problems found")
    else:
        for f in findings:
            print(f"{f.severity}: [{f.code}] {safe(f.message)}")
            print(f"  -> {safe(f.advice)}")
        print(f"\n{len(problems)} problem(s), {len(findings) - len(problems)} warning(s)")
    return 1 if problems else 0


def cmd_import_gptme(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    report = ws.import_gptme(Path(args.path))
    _print_warnings(ws)
    if args.json:
        _print_json(
            {
                "imported": len(report.arms),
                "arms": [
                    {
                        "source": a.source_id,
                        "path": a.lesson_id,
                        "alpha": a.alpha,
                        "beta": a.beta,
                        "n": a.n,
                        "matched": a.matched,
                    }
                    for a in report.arms
                ],
                "unmatched": [a.source_id for a in report.unmatched],
            }
        )
        return 0
    print(f"imported {len(report.arms)} arms from {safe(report.path)} as a prior event")
    for arm in report.unmatched:
        print(f"  no lesson in the library for {safe(arm.source_id)!r} (kept as {safe(arm.lesson_id)!r})")
    return 0


def cmd_export_gptme(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    target = ws.export_gptme(args.path)  # the text: a trailing "/" means a folder
    print(f"wrote {safe(target)}")
    return 0


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
    from core.simulate import format_report, run_simulation, scenario

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
    except ValueError as exc:
        raise CliError(str(exc)) from None
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    report = run_simulation(sc, seeds, progress=None if args.json else _progress_bar(f"simulating {args.scenario}"))
    if args.json:
        _print_json(report.as_json())
    else:
        print(format_report(report))
    return 0


def cmd_store_push(args: argparse.Namespace) -> int:
    from core.eventstore import JsonlStore
    from core.pgstore import PgStore

    ws = _workspace(args)
    store = ws.log
    if not isinstance(store, PgStore):
        raise CliError("store push needs a database store (--store URL, $LESSON_CREDIT_STORE or [store] url)")
    source = JsonlStore(ws.state_dir / "sessions.jsonl")
    report = store.push(source.raw_lines())
    if args.json:
        _print_json(
            {
                "store": store.name,
                "lines": report.lines,
                "added": report.added,
                "present": report.present,
                "invalid": [{"line": p.line, "reason": p.reason} for p in report.problems],
            }
        )
        return 0
    for problem in report.problems[:5]:
        print(f"warning: {source.name} {safe(problem)} (not pushed)", file=sys.stderr)
    if len(report.problems) > 5:
        print(f"warning: {len(report.problems) - 5} more invalid lines (not pushed)", file=sys.stderr)
    print(
        f"pushed {source.name} to {safe(store.name)}: {report.added} events added, {report.present} already there "
        f"(or a second session event for an id), {len(report.problems)} invalid lines skipped"
    )
    return 0


def cmd_store_pull(args: argparse.Namespace) -> int:
    from core.eventstore import export_log
    from core.pgstore import PgStore

    ws = _workspace(args)
    if not isinstance(ws.log, PgStore):
        raise CliError("store pull needs a database store (--store URL, $LESSON_CREDIT_STORE or [store] url)")
    count = export_log(ws.log, Path(args.file))
    if args.json:
        _print_json({"store": ws.log.name, "file": str(args.file), "events": count})
    else:
        print(f"wrote {count} events from {safe(ws.log.name)} to {safe(args.file)}")
    return 0


def cmd_tui(args: argparse.Namespace) -> int:
    from core.store import EventLog

    ws = _workspace(args)
    if not isinstance(ws.log, EventLog):
        ws.log.size()  # a database that cannot be reached: one line and exit 1, before the screen opens
    from tui.app import run

    run(ws)
    return 0


def build_parser() -> argparse.ArgumentParser:
    # --workspace may come before or after the command; SUPPRESS keeps a subcommand's
    # absent option from overwriting the value given before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--workspace", "-w", default=argparse.SUPPRESS, metavar="DIR", help="workspace folder (default: .)"
    )
    common.add_argument(
        "--store",
        default=argparse.SUPPRESS,
        metavar="URL",
        help="event store: a postgresql:// URL or libpq keyword string "
        "(default: $LESSON_CREDIT_STORE, [store] url in config.toml, else the workspace's sessions.jsonl; "
        '--store "" forces the file)',
    )
    common.add_argument(
        "--agent",
        default=argparse.SUPPRESS,
        metavar="NAME",
        help="who writes, recorded with each event in a database store (default: the hostname)",
    )
    data = argparse.ArgumentParser(add_help=False)
    data.add_argument("--json", action="store_true", help="machine-readable output")

    parser = argparse.ArgumentParser(
        prog="lesson-credit",
        description="Salience-weighted credit for agent lessons. With no command, opens the dashboard.",
    )
    parser.add_argument("--workspace", "-w", default=".", metavar="DIR", help="workspace folder (default: .)")
    parser.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="event store: a postgresql:// URL or libpq keyword string "
        "(default: $LESSON_CREDIT_STORE, [store] url in config.toml, else the workspace's sessions.jsonl; "
        '--store "" forces the file)',
    )
    parser.add_argument(
        "--agent",
        default=None,
        metavar="NAME",
        help="who writes, recorded with each event in a database store (default: the hostname)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("tui", parents=[common], help="open the dashboard")
    p.set_defaults(func=cmd_tui)

    p = sub.add_parser("status", parents=[common, data], help="posterior per lesson")
    p.add_argument("--sort", choices=["mean", "n", "path", "ci_low"], default="mean")
    p.add_argument(
        "--written-by",
        default=None,
        metavar="AGENT",
        help="database store: only the sessions this agent recorded (with their grades, by anyone)",
    )
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("select", parents=[common, data], help="Thompson-sample lessons for a context")
    p.add_argument("--context", required=True, metavar="FILE|-", help="text to match lessons against; - for stdin")
    p.add_argument("--k", type=_positive_int, default=None, help="how many lessons (default: config k, 10)")
    p.add_argument("--seed", type=_seed, default=None)
    p.add_argument("--session-id", default=None)
    p.add_argument("--dry-run", action="store_true", help="do not log a selection event")
    p.add_argument(
        "--dropout",
        type=_unit_float,
        default=0.0,
        metavar="EPSILON",
        help="withhold each chosen lesson with this probability and log the draw to "
        "state/lesson-dropout/<session-id>.jsonl (a randomized trial, as gptme's LESSON_DROPOUT_EPSILON)",
    )
    p.add_argument(
        "--offline-ok",
        action="store_true",
        help="if the database store is unreachable, select from the last known posteriors "
        "(bandit-state.json) without logging, instead of failing",
    )
    p.set_defaults(func=cmd_select)

    p = sub.add_parser("record", parents=[common, data], help="log a session with its journal and lessons")
    p.add_argument("--session-id", required=True)
    p.add_argument("--journal", required=True, metavar="FILE")
    p.add_argument("--lessons", nargs="+", required=True, metavar="ID")
    p.add_argument("--reward", type=_reward, default=None, help="base reward in [0, 1]; omit to leave pending")
    p.add_argument("--category", default=None)
    p.add_argument("--grader", default="heuristic", help="who produced --reward (default: heuristic)")
    p.add_argument("--allow-outside", action="store_true", help="read journals outside the workspace")
    p.set_defaults(func=cmd_record)

    p = sub.add_parser("grade", parents=[common, data], help="grade (or regrade) a session")
    p.add_argument("session_id")
    p.add_argument("reward", type=_reward)
    p.add_argument("--note", default=None)
    p.add_argument("--grader", default="manual")
    p.set_defaults(func=cmd_grade)

    p = sub.add_parser("explain", parents=[common, data], help="why each lesson got its credit in a session")
    p.add_argument("session_id")
    p.add_argument("--lesson", default=None)
    p.add_argument("--allow-outside", action="store_true", help="read journals outside the workspace")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("replay", parents=[common, data], help="re-fold the log under another strategy/floor")
    p.add_argument("--strategy", choices=["seed", "evidence", "uniform"], default=None)
    p.add_argument("--floor", type=_floor, default=None)
    p.add_argument("--write", action="store_true", help="store the settings and rewrite bandit-state.json")
    p.add_argument("--sort", choices=["mean", "n", "path", "ci_low"], default="mean")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("loo", parents=[common, data], help="leave-one-out lift per lesson")
    p.add_argument("--min-with", type=_positive_int, default=5, help="sessions with the lesson needed (default 5)")
    p.add_argument("--min-without", type=_positive_int, default=20, help="sessions without it needed (default 20)")
    p.add_argument("--no-write", action="store_true", help="do not write loo-results.json")
    p.add_argument(
        "--written-by",
        default=None,
        metavar="AGENT",
        help="database store: only the sessions this agent recorded (with their grades); implies --no-write",
    )
    p.set_defaults(func=cmd_loo)

    p = sub.add_parser("lint", parents=[common, data], help="health checks; exit 1 when a problem is found")
    p.set_defaults(func=cmd_lint)

    p = sub.add_parser("import-gptme", parents=[common, data], help="log a gptme bandit-state.json as a prior")
    p.add_argument("path", metavar="PATH")
    p.set_defaults(func=cmd_import_gptme)

    p = sub.add_parser("export-gptme", parents=[common], help="write posteriors as a gptme bandit-state.json")
    p.add_argument("path", metavar="PATH", help="a file, or a folder to write bandit-state.json in")
    p.set_defaults(func=cmd_export_gptme)

    p = sub.add_parser("store", help="move the event log between the workspace file and a database store")
    store_sub = p.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    q = store_sub.add_parser(
        "push", parents=[common, data], help="copy the workspace's sessions.jsonl into the database (idempotent)"
    )
    q.set_defaults(func=cmd_store_push)
    q = store_sub.add_parser("pull", parents=[common, data], help="write the database's events as a JSONL log")
    q.add_argument("file", metavar="FILE", help="the JSONL file to write (must not exist)")
    q.set_defaults(func=cmd_store_pull)

    p = sub.add_parser("simulate", parents=[common, data], help="compare credit strategies in a world with known truth")
    p.add_argument(
        "--scenario",
        default="default",
        choices=[
            "default",
            "broad-keywords",
            "always-paired",
            "sign-flip",
            "few-sessions",
            "injection-echo",
            "dropout",
        ],
    )
    p.add_argument("--seeds", type=_positive_int, default=20, help="worlds to simulate (default 20)")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--lessons", type=_positive_int, default=None)
    p.add_argument("--sessions", type=_positive_int, default=None)
    p.add_argument("--k", type=_positive_int, default=None)
    p.add_argument("--floor", type=_floor, default=None)
    p.add_argument("--noise", type=float, default=None)
    p.add_argument("--keyword-breadth", type=float, default=None)
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args.func = cmd_tui
    from core.errors import WorkspaceError
    from core.files import StoreError

    try:
        return int(args.func(args))
    except (CliError, WorkspaceError, StoreError, ValueError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"lesson-credit: {safe(message)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
