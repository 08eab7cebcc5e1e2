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

from lesson_credit.cli.process import limit_blas_threads
from lesson_credit.cli.render import fmt, safe, table

EXIT_BAD_INPUT = 1


class CliError(Exception):
    """A one-line reason for refusing; exits 1."""


def _reward(text: str | None) -> float | None:
    """A reward from the command line. Parsed in the command, not by argparse, so that every
    bad reward (non-numeric, NaN, out of range) exits 1 with one line, never a usage dump."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise CliError(f"reward must be a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise CliError(f"reward must be in [0, 1], got {text!r}")
    return value


def _one_line(value: str | None, what: str) -> str | None:
    """A label (the grader) that the log and tables show on one line."""
    if value is None:
        return None
    if not value.strip():
        raise CliError(f"{what} must not be empty")
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in value):
        raise CliError(f"{what} must be one line without control characters, got {value!r}")
    return value


def _session_id(ws: Any, text: str) -> str:
    """The logged session an id or a unique id prefix names (ambiguous prefixes are refused)."""
    from lesson_credit.core.query import resolve_id

    return resolve_id(ws.session_table().session_ids, text)


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


def _decay(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"decay must be a number in (0, 1], got {text!r}") from None
    if not (0.0 < value <= 1.0):
        raise argparse.ArgumentTypeError(f"decay must be in (0, 1], got {text!r}")
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
    from lesson_credit.core.workspace import Workspace

    root = Path(args.workspace)
    if not root.is_dir():
        raise CliError(f"workspace not found: {root}")
    clock = getattr(args, "clock", None)
    extra = {"clock": clock} if clock is not None else {}
    store = _store(args, root)
    return Workspace(root, allow_outside_journals=getattr(args, "allow_outside", False), store=store, **extra)


def _store(args: argparse.Namespace, root: Path) -> Any:
    """The event store: --store, $LESSON_CREDIT_STORE, [store] url in config.toml; None = the JSONL file."""
    from lesson_credit.core.bandit.config import ConfigError, load_config
    from lesson_credit.core.log.stores import open_store, store_url
    from lesson_credit.core.workspace import STATE_DIR

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
    from lesson_credit.core.log.pgstore import PgStore

    if isinstance(store, PgStore):
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


def _without_retired(ws: Any, table_obj: Any, show_all: bool) -> Any:
    """Hide arms retired by `prune` (while their lesson file stays gone) unless --all."""
    from dataclasses import replace

    from lesson_credit.core.library.lessons import MISSING

    retired = ws.retired_arms()
    if show_all or not retired:
        return table_obj
    return replace(table_obj, rows=tuple(r for r in table_obj.rows if not (r.status == MISSING and r.path in retired)))


def _empty_library_note(ws: Any) -> str | None:
    if ws.library().lessons or ws.library().problems:
        return None
    return (
        f"no lessons found in {ws.root}: put lesson files under lessons/ "
        "(or name their folders in gptme.toml [lessons] dirs)"
    )


def cmd_status(args: argparse.Namespace) -> int:
    from lesson_credit.core.derived_state import repair_state

    ws = _workspace(args)
    result = _sort_rows(_without_retired(ws, ws.lesson_table(details=False), args.all), args.sort)
    _warn_problems(ws, args.json)
    repaired = repair_state(ws)
    if repaired is not None:
        print(f"warning: {safe(repaired)}", file=sys.stderr)
    note = _empty_library_note(ws)
    if args.json:
        _print_json(result.as_json())
    else:
        if note:
            print(f"warning: {safe(note)}", file=sys.stderr)
        print(_status_table(result))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    before = ws.lesson_table(details=False)
    replayed = ws.replay(args.strategy, args.floor, decay=args.decay, write=args.write)
    result = _sort_rows(_without_retired(ws, replayed, args.all), args.sort)
    _warn_problems(ws, args.json)
    _print_warnings(ws)
    old = {r.path: r.mean for r in before.rows}
    if args.json:
        payload = result.as_json()
        payload["decay"] = result.settings.decay
        payload["written"] = args.write
        for row in payload["lessons"]:  # the table's change column: mean now minus mean before
            row["change"] = row["mean"] - old.get(row["path"], row["mean"])
        _print_json(payload)
        return 0
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
        f"floor {result.settings.floor:g}, decay {result.settings.decay:g} ({verb}); change is against "
        f"{before.settings.strategy}/{before.settings.floor:g}/{before.settings.decay:g}\n"
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
                from lesson_credit.core.library.salience import snippet

                where = ", ".join(str(o) for o in k.offsets[:5]) + (" ..." if len(k.offsets) > 5 else "")
                out.append(f"  hit   '{safe(k.keyword)}' x{k.count} at {where}: {safe(snippet(text, start, end))}")
            else:
                out.append(f"  miss  '{safe(k.keyword)}'")
    if len(exp.grades) > 1:
        out.append("")
        out.append("grade history:")
        out += _history_lines(exp.grades)
    return "\n".join(out)


def _history_lines(grades: Any) -> list[str]:
    """One line per grade event, oldest first; a retraction (base_reward null) says so."""
    lines = []
    for g in grades:
        note = f"  {safe(g.note)}" if g.note else ""
        value = "retracted (pending)" if g.base_reward is None else f"{g.base_reward:g}"
        lines.append(f"  {safe(g.timestamp or '-')}  {value}  {safe(g.grader)}{note}")
    return lines


def _record_of(ws: Any, session_id: str) -> dict[str, Any]:
    """The session's record as logged ({} if it cannot be read back)."""
    duplicated = any(p.session_id == session_id and p.reason.startswith("duplicate") for p in ws.log_problems())
    return ws.log.session_record(session_id, unique=not duplicated) or {}


def _explanation_json(ws: Any, exp: Any) -> dict[str, Any]:
    """explain's JSON: a pending session's per-lesson reward is null (it credited nothing yet),
    and `journal_changed` says whether the journal's sha256 still matches the recorded one."""
    from lesson_credit.core.log.records import journal_changed

    payload: dict[str, Any] = exp.as_json()
    if exp.base_reward is None:
        for lesson in payload["lessons"]:
            lesson["reward"] = None
    record = _record_of(ws, exp.session.session_id)
    changed, why = journal_changed(ws.root, record, ws.allow_outside_journals)
    payload["journal_changed"] = changed
    payload["journal_note"] = why
    return payload


def cmd_explain(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    exp = ws.explain(_session_id(ws, args.session_id), lesson=args.lesson)
    if args.json:
        _print_json(_explanation_json(ws, exp))
    else:
        print(_explanation_text(exp))
        from lesson_credit.core.log.records import journal_changed

        changed, why = journal_changed(ws.root, _record_of(ws, exp.session.session_id), ws.allow_outside_journals)
        if changed:
            print(f"\nwarning: {safe(why)}")
    return 0


LESSONS_FILE_LIMIT = 1024 * 1024


def _lessons_from_file(name: str) -> list[str]:
    """Lesson ids from a file (what `select` printed): whitespace-separated, `#` starts a
    comment; an empty file is an empty selection. `-` reads stdin."""
    try:
        if name == "-":
            text = sys.stdin.read(LESSONS_FILE_LIMIT + 1)
        else:
            path = Path(name)
            if not path.is_file():
                raise CliError(f"lessons file not found (or not a regular file): {name}")
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(LESSONS_FILE_LIMIT + 1)
    except OSError as exc:
        raise CliError(f"cannot read lessons file {name}: {exc.strerror}") from None
    if len(text) > LESSONS_FILE_LIMIT:
        raise CliError(f"lessons file {name} is larger than {LESSONS_FILE_LIMIT >> 20} MB")
    return [word for line in text.splitlines() for word in line.split("#", 1)[0].split()]


def cmd_record(args: argparse.Namespace) -> int:
    reward = _reward(args.reward)
    grader = _one_line(args.grader, "grader")  # the category is checked by lesson_credit.core.commands.recording
    lessons = args.lessons if args.lessons is not None else _lessons_from_file(args.lessons_file)
    ws = _workspace(args)
    exp = ws.record(
        args.session_id,
        Path(args.journal),
        lessons,
        reward=reward,
        category=args.category,
        grader=grader or "heuristic",
    )
    _print_warnings(ws)
    if args.json:
        _print_json(_explanation_json(ws, exp))
    else:
        print(_explanation_text(exp))
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    reward = _reward(args.reward)
    assert reward is not None
    grader = _one_line(args.grader, "grader")
    assert grader is not None
    ws = _workspace(args)
    session_id = _session_id(ws, args.session_id)
    before = ws.explain(session_id, with_journal=False) if not args.json else None
    record = ws.grade(session_id, reward, grader=grader, note=args.note)
    _print_warnings(ws)
    exp = ws.explain(session_id, with_journal=args.json)  # --json lists each lesson's keywords
    if args.json:
        payload = _explanation_json(ws, exp)
        payload["grader"] = record.grader
        payload["history"] = [
            {"base_reward": g.base_reward, "grader": g.grader, "timestamp": g.timestamp, "note": g.note}
            for g in exp.grades
        ]
        _print_json(payload)
        return 0
    previous = "pending" if before is None or before.base_reward is None else f"{before.base_reward:g}"
    print(f"graded {safe(session_id)}: {previous} -> {reward:g} ({safe(record.grader)})\n")
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
    from lesson_credit.core.base.safe_read import JOURNAL_MAX_BYTES, UnsafeFile, read_capped
    from lesson_credit.core.log.store import StoreError

    ws = _workspace(args)
    try:  # capped like a journal: a device or an endless pipe is refused, not read forever
        if args.context == "-":
            stdin = getattr(sys.stdin, "buffer", None)  # a text stream without one (tests) is read as text
            raw = stdin.read(JOURNAL_MAX_BYTES + 1) if stdin else sys.stdin.read(JOURNAL_MAX_BYTES + 1).encode()
            if len(raw) > JOURNAL_MAX_BYTES:
                raise CliError(f"context on stdin is larger than {JOURNAL_MAX_BYTES} bytes")
        else:
            raw = read_capped(args.context, JOURNAL_MAX_BYTES)
    except FileNotFoundError:
        raise CliError(f"context file not found: {args.context}") from None
    except UnsafeFile as exc:
        raise CliError(f"context {exc}") from None
    except OSError as exc:
        raise CliError(f"cannot read context {args.context}: {exc.strerror or exc}") from None
    context = raw.decode("utf-8", errors="replace")
    try:
        selection = ws.select(
            context, k=args.k, seed=args.seed, session_id=args.session_id, log=not args.dry_run, dropout=args.dropout
        )
    except StoreError as exc:
        if not args.offline_ok or ws.log.is_local:
            raise
        from lesson_credit.core.offline import select_offline

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
            from lesson_credit.core.analysis.effects import loo_payload

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
    baselines = "category and agent baselines" if len(set(ws.session_agents())) > 1 else "category baselines"
    print(
        f"effect per lesson over {graded} graded sessions: joint estimate ({baselines} + every lesson, "
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
    from lesson_credit.core.health import ERROR, WARNING, lint

    ws = _workspace(args)
    findings = lint(ws)
    errors = [f for f in findings if f.severity == ERROR]
    warnings = [f for f in findings if f.severity == WARNING]
    failing = errors if args.fail_on == "error" else errors + warnings
    if args.json:
        _print_json(
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
        for f in findings:
            print(f"{f.severity}: [{f.code}] {safe(f.message)}")
            print(f"  -> {safe(f.advice)}")
        print(f"\n{len(errors)} error(s), {len(warnings)} warning(s); failing on {args.fail_on}s")
    return 1 if failing else 0


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
    except ValueError as exc:
        raise CliError(str(exc)) from None
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    report = run_simulation(sc, seeds, progress=None if args.json else _progress_bar(f"simulating {args.scenario}"))
    if args.json:
        _print_json(report.as_json())
    else:
        print(format_report(report))
    return 0


def _session_json(table_obj: Any, row: int) -> dict[str, Any]:
    summary = table_obj.summary(row)
    return {
        "session_id": summary.session_id,
        "timestamp": summary.timestamp,
        "category": summary.category,
        "base_reward": summary.base_reward,  # null while pending
        "grader": summary.grader,
        "lessons": summary.n_lessons,
        "mean_salience": summary.mean_salience,
        "line": summary.line,
    }


def cmd_sessions(args: argparse.Namespace) -> int:
    from lesson_credit.core.library.lessons import normalize_id
    from lesson_credit.core.query import NO_ROWS, SessionQuery, parse_sort, parse_time, rows_with_arm, select_rows

    min_reward = _reward(args.min_reward)
    max_reward = _reward(args.max_reward)
    column, descending = parse_sort(args.sort)
    ws = _workspace(args)
    now = ws.clock()
    since = parse_time(args.since, now) if args.since is not None else None
    until = parse_time(args.until, now) if args.until is not None else None
    lesson_rows = None
    if args.lesson is not None:
        data = ws.data()
        lesson = normalize_id(args.lesson)
        if lesson in data.arm_ids:
            lesson_rows = rows_with_arm(data.entry_arm, data.entry_session, data.arm_ids.index(lesson))
        elif lesson in ws.library().by_id():
            lesson_rows = NO_ROWS  # in the library, never injected
        else:
            raise CliError(f"lesson {args.lesson!r} is neither in the library nor in the log")
    query = SessionQuery(
        pending=args.pending,
        graded=args.graded,
        category=args.category,
        grader=args.grader,
        lesson_rows=lesson_rows,
        min_reward=min_reward,
        max_reward=max_reward,
        since=since,
        until=until,
        sort=column,
        descending=descending,
    )
    table_obj = ws.session_table()
    rows = select_rows(table_obj, query)
    shown = rows[: args.limit] if args.limit is not None else rows
    _warn_problems(ws, args.json)
    if args.json:
        _print_json({"sessions": [_session_json(table_obj, row) for row in shown.tolist()], "matched": len(rows)})
        return 0
    cells = []
    for row in shown.tolist():
        s = table_obj.summary(row)
        cells.append(
            (
                s.session_id,
                s.timestamp or "-",
                s.category or "-",
                "pending" if s.pending else f"{s.base_reward:g}",
                s.grader or "-",
                s.n_lessons,
                fmt(s.mean_salience),
            )
        )
    print(table(["session", "time", "category", "reward", "grader", "lessons", "salience"], cells, right=(5, 6)))
    more = f" (showing {len(shown)})" if len(shown) < len(rows) else ""
    print(f"\n{len(rows)} of {len(table_obj)} sessions match{more}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from lesson_credit.core.log.records import journal_changed

    ws = _workspace(args)
    session_id = _session_id(ws, args.session_id)
    exp = ws.explain(session_id, with_journal=False)
    record = _record_of(ws, session_id)
    changed, why = journal_changed(ws.root, record, ws.allow_outside_journals)
    s = exp.session
    label = ws.outcome_labels().get(ws.session_table().session_ids.index(session_id))
    history = [
        {"base_reward": g.base_reward, "grader": g.grader, "timestamp": g.timestamp, "note": g.note, "line": g.line}
        for g in exp.grades
    ]
    credit = _explanation_json(ws, exp)["lessons"]
    for lesson in credit:
        del lesson["keywords"]
    if args.json:
        _print_json(
            {
                "session_id": s.session_id,
                "timestamp": s.timestamp,
                "category": s.category,
                "base_reward": exp.base_reward,
                "grader": s.grader,
                "outcome": label,
                "journal_path": s.journal_path,
                "journal_sha256": record.get("journal_sha256"),
                "journal_changed": changed,
                "line": s.line,
                "strategy": exp.settings.strategy,
                "floor": exp.settings.floor,
                "grades": history,
                "lessons": credit,
            }
        )
        return 0
    grade = "pending" if exp.base_reward is None else f"{exp.base_reward:g} ({safe(s.grader)})"
    out = [
        f"session   {safe(s.session_id)}",
        f"time      {safe(s.timestamp or '-')}",
        f"category  {safe(s.category or '-')}",
        f"grade     {grade}" + (f"  (outcome {safe(label)!r})" if label else ""),
        f"journal   {safe(s.journal_path or '-')}" + (f"  [{safe(why)}]" if changed is not None else ""),
        f"log line  {s.line}",
        "",
        f"credit under strategy {exp.settings.strategy}, floor {exp.settings.floor:g}:",
        table(
            ["lesson", "salience", "weight", "reward", "alpha", "beta"],
            [
                (
                    c.path,
                    fmt(c.salience),
                    fmt(c.weight),
                    "-" if exp.base_reward is None else fmt(c.reward),
                    f"{c.alpha_delta:+.3f}",
                    f"{c.beta_delta:+.3f}",
                )
                for c in exp.lessons
            ],
            right=(1, 2, 3, 4, 5),
        ),
        "",
        "grade history:" if exp.grades else "grade history: none (pending)",
        *_history_lines(exp.grades),
    ]
    print("\n".join(out))
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    from lesson_credit.core.retire import retire_missing

    ws = _workspace(args)
    arms = retire_missing(ws, dry_run=args.dry_run)
    if args.json:
        _print_json({"retired": arms, "written": bool(arms) and not args.dry_run})
        return 0
    if not arms:
        print("nothing to prune: every arm in the log has its lesson file (or is retired already)")
        return 0
    verb = "would retire" if args.dry_run else "retired"
    print(f"{verb} {len(arms)} arm(s) whose lesson file is gone (their history stays in the log):")
    for arm in arms:
        print(f"  {safe(arm)}")
    return 0


def cmd_completion(args: argparse.Namespace) -> int:
    import shtab

    sys.stdout.write(shtab.complete(build_parser(), shell=args.shell))
    return 0


def cmd_help(args: argparse.Namespace) -> int:
    parser = build_parser()
    if args.topic is None:
        parser.print_help()
        return 0
    sub = subcommands(parser)
    if args.topic not in sub:
        raise CliError(f"no command {args.topic!r}: choose one of {', '.join(sub)}")
    sub[args.topic].print_help()
    return 0


def summary_lines(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each command's one-line summary, as the command list shows it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: str(choice.help) for choice in action._choices_actions}
    return {}


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's parser, in the order of the command list."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def cmd_store_push(args: argparse.Namespace) -> int:
    from lesson_credit.core.log.eventstore import JsonlStore
    from lesson_credit.core.log.pgstore import PgStore

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
    from lesson_credit.core.log.eventstore import export_log
    from lesson_credit.core.log.pgstore import PgStore

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
    from lesson_credit.tui import gc_settings

    gc_settings.start()  # before the engine and the dashboard are imported
    ws = _workspace(args)
    if not ws.log.is_local:
        ws.log.size()  # a database that cannot be reached: one line and exit 1, before the screen opens
    from lesson_credit.tui.app import run

    run(ws)
    return 0


STRATEGY_HELP = (
    "seed: alpha += base*w, beta += 1 - base*w (gptme's update with a salience weight); "
    "evidence: alpha += w*base, beta += w*(1 - base) (a weakly mentioned lesson learns less); "
    "uniform: alpha += base, beta += 1 - base (salience ignored, the classic bandit)"
)
SORT_LESSONS = ["mean", "n", "path", "ci_low"]


def _command(
    sub: Any, name: str, parents: list[argparse.ArgumentParser], summary: str, description: str, examples: str
) -> argparse.ArgumentParser:
    """A subcommand with a one-line summary (in the command list), a description and examples."""
    return sub.add_parser(  # type: ignore[no-any-return]
        name,
        parents=parents,
        help=summary,
        description=description,
        epilog="examples:\n" + examples.strip("\n"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


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
    data.add_argument("--json", action="store_true", help="machine-readable output on stdout (default: a table)")

    parser = argparse.ArgumentParser(
        prog="lesson-credit",
        description="Salience-weighted credit for agent lessons. With no command, opens the dashboard.",
        epilog=(
            "exit status: 0 success, 1 bad input (one line on stderr, nothing written), 2 usage error\n"
            "`lesson-credit help COMMAND` (or `COMMAND --help`) describes one command."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
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

    p = _command(
        sub, "tui", [common], "open the dashboard",
        "Open the Textual dashboard on the workspace (the same as giving no command).",
        "  lesson-credit tui --workspace ~/agent",
    )  # fmt: skip
    p.set_defaults(func=cmd_tui)

    p = _command(
        sub, "status", [common, data], "posterior per lesson",
        "One row per lesson of the library and per arm of the log: its Beta(alpha, beta)\n"
        "posterior, n (graded sessions it was injected in), mean and 95% interval.",
        "  lesson-credit status\n  lesson-credit status --sort n --json",
    )  # fmt: skip
    p.add_argument(
        "--sort", choices=SORT_LESSONS, default="mean",
        help="order of the rows: mean, n or ci_low (highest first), or path (default: mean)",
    )  # fmt: skip
    p.add_argument("--all", action="store_true", help="also show arms retired by `prune`")
    p.add_argument(
        "--written-by", default=None, metavar="AGENT",
        help="database store: only the sessions this agent recorded (with their grades, by anyone)",
    )  # fmt: skip
    p.set_defaults(func=cmd_status)

    p = _command(
        sub, "sessions", [common, data], "list and filter sessions",
        "List logged sessions, filtered and sorted. Filters combine (all must hold). Times are\n"
        "relative to now (30m, 2h, 7d, 2w, 90s) or ISO dates / date-times (no zone means UTC).\n"
        "--json: {sessions: [{session_id, timestamp, category, base_reward (null while pending),\n"
        "grader, lessons, mean_salience, line}], matched: count before --limit}.",
        "  lesson-credit sessions --since 1d --pending --lesson tools/git.md\n"
        "  lesson-credit sessions --sort reward:desc --limit 10 --json",
    )  # fmt: skip
    p.add_argument("--pending", action="store_true", help="only sessions waiting for a grade")
    p.add_argument("--graded", action="store_true", help="only graded sessions")
    p.add_argument("--category", default=None, metavar="C", help="only sessions of this category (exact)")
    p.add_argument("--grader", default=None, metavar="G", help="only sessions whose grade in force is by G")
    p.add_argument("--lesson", default=None, metavar="ID", help="only sessions this lesson was injected in")
    p.add_argument("--min-reward", default=None, metavar="R", help="only graded sessions with reward >= R, R in [0, 1]")
    p.add_argument("--max-reward", default=None, metavar="R", help="only graded sessions with reward <= R, R in [0, 1]")
    p.add_argument(
        "--since", default=None, metavar="TIME", help="only sessions at or after TIME (e.g. 2h, 7d, 2026-03-01)"
    )
    p.add_argument("--until", default=None, metavar="TIME", help="only sessions before TIME (same forms as --since)")
    p.add_argument(
        "--sort", default="line", metavar="COLUMN[:desc]",
        help="order by line (log order), id, time, category, reward, grader, lessons or salience, "
        "ascending unless :desc; missing values last (default: line)",
    )  # fmt: skip
    p.add_argument(
        "--limit", type=_positive_int, default=None, metavar="N", help="show at most N sessions (default: all)"
    )
    p.set_defaults(func=cmd_sessions)

    p = _command(
        sub, "show", [common, data], "one session: record, grades, credit",
        "One session's record (time, category, journal and whether it changed since), its grade\n"
        "history and each lesson's credit. A unique prefix of the id is enough.",
        "  lesson-credit show 20260305T1630\n  lesson-credit show S1 --json",
    )  # fmt: skip
    p.add_argument("session_id", metavar="SESSION_ID", help="a session id or a unique prefix of one")
    p.add_argument("--allow-outside", action="store_true", help="read journals outside the workspace")
    p.set_defaults(func=cmd_show)

    p = _command(
        sub, "select", [common, data], "Thompson-sample lessons for a context",
        "Thompson-sample the top k among the active lessons whose keywords or patterns match the\n"
        "context; print the chosen ids one per line (a summary goes to stderr) and log a\n"
        "selection event with each candidate's selection probability (unless --dry-run).",
        "  lesson-credit select --context task.md --session-id S1 > selected.txt\n"
        "  echo 'fix the git worktree' | lesson-credit select --context - --k 3 --dry-run",
    )  # fmt: skip
    p.add_argument("--context", required=True, metavar="FILE|-", help="text to match lessons against; - for stdin")
    p.add_argument("--k", type=_positive_int, default=None, help="how many lessons, >= 1 (default: config k, 10)")
    p.add_argument(
        "--seed", type=_seed, default=None, help="random seed of the draw, in [0, 2**63) (default: a fresh random one)"
    )  # fmt: skip
    p.add_argument(
        "--session-id", default=None, metavar="ID",
        help="id to log the selection under; use the same id for `record` (default: time + random suffix)",
    )  # fmt: skip
    p.add_argument("--dry-run", action="store_true", help="do not log a selection event")
    p.add_argument(
        "--dropout",
        type=_unit_float,
        default=0.0,
        metavar="EPSILON",
        help="withhold each chosen lesson with this probability and log the draw to "
        "state/lesson-dropout/<session-id>.jsonl (a randomized trial, as gptme's LESSON_DROPOUT_EPSILON; "
        "default 0: none withheld)",
    )
    p.add_argument(
        "--offline-ok",
        action="store_true",
        help="if the database store is unreachable, select from the last known posteriors "
        "(bandit-state.json) without logging, instead of failing",
    )
    p.set_defaults(func=cmd_select)

    p = _command(
        sub, "record", [common, data], "log a session with its journal and lessons",
        "Log a finished session: each injected lesson's salience is computed from the journal\n"
        "and its credit under the current settings. Zero lessons is fine (a session with nothing\n"
        "injected still counts for the baseline). Without --reward the session stays pending.",
        "  lesson-credit record --session-id S1 --journal journal.md --lessons tools/git.md --reward 0.8\n"
        "  lesson-credit record --session-id S2 --journal j.md --lessons-file selected.txt",
    )  # fmt: skip
    p.add_argument("--session-id", required=True, metavar="ID", help="a new, unique session id (one line)")
    p.add_argument(
        "--journal", required=True, metavar="FILE", help="the session's journal (what happened), read as UTF-8"
    )
    lessons = p.add_mutually_exclusive_group(required=True)
    lessons.add_argument(
        "--lessons", nargs="*", default=None, metavar="ID", help="ids of the injected lessons (none is allowed)"
    )  # fmt: skip
    lessons.add_argument(
        "--lessons-file", default=None, metavar="FILE|-",
        help="read the ids from a file (e.g. select's output; may be empty; # starts a comment)",
    )  # fmt: skip
    p.add_argument(
        "--reward", default=None, metavar="R", help="base reward in [0, 1]; omit to leave the session pending"
    )
    p.add_argument("--category", default=None, metavar="C", help="the session's category, one line (default: none)")
    p.add_argument(
        "--grader", default="heuristic", metavar="G", help="who produced --reward, non-empty (default: heuristic)"
    )  # fmt: skip
    p.add_argument("--allow-outside", action="store_true", help="read journals outside the workspace")
    p.set_defaults(func=cmd_record)

    p = _command(
        sub, "grade", [common, data], "grade (or regrade) a session",
        "Append a grade for a logged session; the latest grade counts and every grade stays in\n"
        "the log as its history. A unique prefix of the id is enough.",
        "  lesson-credit grade S1 0.7 --note 'PR needed rework'\n  lesson-credit grade S1 1 --grader judge --json",
    )  # fmt: skip
    p.add_argument("session_id", metavar="SESSION_ID", help="a session id or a unique prefix of one")
    p.add_argument("reward", metavar="REWARD", help="base reward in [0, 1]")
    p.add_argument("--note", default=None, metavar="TEXT", help="why this grade (kept in the grade history)")
    p.add_argument("--grader", default="manual", metavar="G", help="who grades, non-empty (default: manual)")
    p.set_defaults(func=cmd_grade)

    p = _command(
        sub, "explain", [common, data], "why each lesson got its credit in a session",
        "Per lesson of a session: salience (keywords hit and missed, where in the journal),\n"
        "weight, credited reward and the alpha/beta change, under the current settings.\n"
        "--json adds journal_changed: true when the journal no longer has the recorded sha256.",
        "  lesson-credit explain S1\n  lesson-credit explain S1 --lesson tools/git.md --json",
    )  # fmt: skip
    p.add_argument("session_id", metavar="SESSION_ID", help="a session id or a unique prefix of one")
    p.add_argument("--lesson", default=None, metavar="ID", help="only this lesson (it must be in the session)")
    p.add_argument("--allow-outside", action="store_true", help="read journals outside the workspace")
    p.set_defaults(func=cmd_explain)

    p = _command(
        sub, "replay", [common, data], "re-fold the log under another strategy/floor/decay",
        "Fold the whole log again under other settings and show each lesson's mean and its change.\n"
        "Without --write nothing changes on disk; with it the settings go to config.toml and\n"
        f"bandit-state.json is rewritten. Strategies: {STRATEGY_HELP}; w = floor + (1 - floor) * salience.",
        "  lesson-credit replay --strategy evidence --floor 0.5\n  lesson-credit replay --decay 0.99 --write",
    )  # fmt: skip
    p.add_argument(
        "--strategy", choices=["seed", "evidence", "uniform"], default=None,
        help="credit strategy (default: the configured one, seed)",
    )  # fmt: skip
    p.add_argument(
        "--floor", type=_floor, default=None, metavar="F",
        help="weight of an unmentioned lesson, in [0, 1] (default: the configured one, 0.3)",
    )  # fmt: skip
    p.add_argument(
        "--decay", type=_decay, default=None, metavar="G",
        help="per-session decay toward the prior, in (0, 1]; 1 = none (default: the configured one, 1)",
    )  # fmt: skip
    p.add_argument("--write", action="store_true", help="store the settings and rewrite bandit-state.json")
    p.add_argument(
        "--sort", choices=SORT_LESSONS, default="mean", help="order of the rows, as in status (default: mean)"
    )  # fmt: skip
    p.add_argument("--all", action="store_true", help="also show arms retired by `prune`")
    p.set_defaults(func=cmd_replay)

    p = _command(
        sub, "loo", [common, data], "leave-one-out lift per lesson",
        "Compare graded sessions with and without each lesson: difference in mean reward,\n"
        "95% interval, p-values (BH-adjusted), a category-controlled and an IPW difference.\n"
        "Writes state/lesson-thompson/loo-results.json unless --no-write.",
        "  lesson-credit loo\n  lesson-credit loo --min-with 10 --no-write --json",
    )  # fmt: skip
    p.add_argument(
        "--min-with", type=_positive_int, default=5, help="sessions with the lesson needed, >= 1 (default 5)"
    )
    p.add_argument(
        "--min-without", type=_positive_int, default=20, help="sessions without it needed, >= 1 (default 20)"
    )  # fmt: skip
    p.add_argument("--no-write", action="store_true", help="do not write loo-results.json")
    p.add_argument(
        "--written-by",
        default=None,
        metavar="AGENT",
        help="database store: only the sessions this agent recorded (with their grades); implies --no-write",
    )
    p.set_defaults(func=cmd_loo)

    p = _command(
        sub, "lint", [common, data], "health checks (errors and warnings)",
        "Checks that find what silently breaks a lesson bandit. Errors: no lessons at all,\n"
        "unreadable log lines, duplicate session ids, broken lesson files, constant rewards,\n"
        "posteriors collapsed to one mean. Warnings: pending sessions (and those pending again\n"
        "because their latest grade was retracted), ghost arms (in the log,\n"
        "not the library), lessons/-prefixed ids, lessons never injected or never salient,\n"
        "entries without salience, keywords matching most journals, binary rewards, a lesson\n"
        "listed twice in one session, bandit-state.json out of step with the log, string outcomes\n"
        "with no reward mapped. Exit 1 when a finding at --fail-on level or worse exists.\n"
        "--json: {findings: [{code, severity, message, advice, items: [{item, reason}]}], errors,\n"
        "warnings, fail_on, failed}.",
        "  lesson-credit lint                       # for CI: fails on errors only\n"
        "  lesson-credit lint --fail-on warning --json",
    )  # fmt: skip
    p.add_argument(
        "--fail-on", choices=["error", "warning"], default="error",
        help="exit 1 on errors only, or on warnings too (default: error)",
    )  # fmt: skip
    p.set_defaults(func=cmd_lint)

    p = _command(
        sub, "prune", [common, data], "retire arms whose lesson file is gone",
        "Log a retire event for the arms in the log whose lesson file no longer exists. Nothing\n"
        "is deleted: their history stays in the log and in every fold; status and replay hide\n"
        "them unless --all, and restoring the file brings the lesson back.",
        "  lesson-credit prune --dry-run\n  lesson-credit prune",
    )  # fmt: skip
    p.add_argument("--dry-run", action="store_true", help="list what would be retired; log nothing")
    p.set_defaults(func=cmd_prune)

    p = _command(
        sub, "import-gptme", [common, data], "log a gptme bandit-state.json as a prior",
        "Log an existing gptme-sessions bandit-state.json as a prior event, its arms mapped to\n"
        "library ids. Import only history that is not also in sessions.jsonl (it would count twice).",
        "  lesson-credit import-gptme ~/agent/state/lesson-thompson/bandit-state.json",
    )  # fmt: skip
    p.add_argument("path", metavar="PATH", help="the bandit-state.json to import")
    p.set_defaults(func=cmd_import_gptme)

    p = _command(
        sub, "export-gptme", [common], "write posteriors as a gptme bandit-state.json",
        "Write the current posteriors in the shape gptme-sessions loads (six keys per arm).",
        "  lesson-credit export-gptme ~/agent/state/lesson-thompson/",
    )  # fmt: skip
    p.add_argument("path", metavar="PATH", help="a file, or a folder to write bandit-state.json in")
    p.set_defaults(func=cmd_export_gptme)

    p = _command(
        sub, "store", [], "move the event log between the workspace file and a database store",
        "Copy events between the workspace's sessions.jsonl and a PostgreSQL store (--store URL,\n"
        "$LESSON_CREDIT_STORE or [store] url in config.toml).",
        "  lesson-credit store push --store postgresql://host/db\n  lesson-credit store pull copy.jsonl --store postgresql://host/db",
    )  # fmt: skip
    store_sub = p.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    q = _command(
        store_sub, "push", [common, data], "copy the workspace's sessions.jsonl into the database (idempotent)",
        "Copy every event of the workspace's sessions.jsonl into the database store. Re-running adds\n"
        "nothing: events already there (and a second session event for an id) are skipped.",
        "  lesson-credit store push --store postgresql://host/db",
    )  # fmt: skip
    q.set_defaults(func=cmd_store_push)
    q = _command(
        store_sub, "pull", [common, data], "write the database's events as a JSONL log",
        "Write the database's events, in commit order, as a JSONL log that the file store folds to\n"
        "the same numbers.",
        "  lesson-credit store pull backup.jsonl --store postgresql://host/db",
    )  # fmt: skip
    q.add_argument("file", metavar="FILE", help="the JSONL file to write (must not exist)")
    q.set_defaults(func=cmd_store_pull)

    p = _command(
        sub, "simulate", [common, data], "compare credit strategies in a world with known truth",
        "Simulate worlds with known lesson effects and run each credit strategy's bandit loop on\n"
        "them; report how well each ranks the truly helpful and harmful lessons. Options left out\n"
        "keep the scenario's values.",
        "  lesson-credit simulate --seeds 5\n  lesson-credit simulate --scenario broad-keywords --sessions 500 --json",
    )  # fmt: skip
    p.add_argument(
        "--scenario", default="default",
        choices=[
            "default", "broad-keywords", "always-paired", "sign-flip", "few-sessions", "injection-echo", "dropout",
        ],
        help="the world: default; broad-keywords (accidental keyword hits 25%%); always-paired (half the "
        "lessons injected in couples); sign-flip (effects change sign halfway); few-sessions (150); "
        "injection-echo (an injected lesson's keywords show in the journal because it was injected, 50%%); "
        "dropout (a fifth of the chosen lessons withheld at random) (default: default)",
    )  # fmt: skip
    p.add_argument("--seeds", type=_positive_int, default=20, help="worlds to simulate, >= 1 (default 20)")
    p.add_argument("--first-seed", type=int, default=0, help="seed of the first world; the rest follow (default 0)")
    p.add_argument("--lessons", type=_positive_int, default=None, help="lessons in the world, >= 2 (default 120)")
    p.add_argument("--sessions", type=_positive_int, default=None, help="sessions per run, >= 1 (default 1500)")
    p.add_argument("--k", type=_positive_int, default=None, help="lessons injected per session, >= 1 (default 8)")
    p.add_argument("--floor", type=_floor, default=None, help="credit floor in [0, 1] (default 0.3)")
    p.add_argument("--noise", type=float, default=None, help="standard deviation of reward noise, >= 0 (default 0.15)")
    p.add_argument(
        "--keyword-breadth", type=float, default=None,
        help="P(a keyword hits by accident), in [0, 1] (default 0.05)",
    )  # fmt: skip
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

    p = _command(
        sub, "completion", [], "print a shell completion script",
        "Print a completion script for bash or zsh (see the README for where to put it).",
        "  lesson-credit completion bash > ~/.local/share/bash-completion/completions/lesson-credit\n"
        "  lesson-credit completion zsh > ~/.zfunc/_lesson-credit",
    )  # fmt: skip
    p.add_argument("shell", choices=["bash", "zsh"], help="the shell to complete for")
    p.set_defaults(func=cmd_completion)

    p = _command(
        sub, "help", [], "describe a command",
        "Print the reference of one command (its --help), or the list of commands.",
        "  lesson-credit help sessions",
    )  # fmt: skip
    p.add_argument("topic", nargs="?", default=None, metavar="COMMAND", help="the command to describe (default: all)")
    p.set_defaults(func=cmd_help)
    return parser


def main(argv: Sequence[str] | None = None, *, clock: Callable[[], Any] | None = None) -> int:
    """Run one command; `clock` (a function returning an aware datetime) stands in for now."""
    limit_blas_threads()  # before any command imports the engine
    parser = build_parser()
    args = parser.parse_args(argv)
    args.clock = clock
    if args.command is None:
        args.func = cmd_tui
    from lesson_credit.core.base.errors import WorkspaceError
    from lesson_credit.core.base.files import StoreError

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
