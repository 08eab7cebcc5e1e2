"""The posteriors: `status` and its what-if, `replay`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lesson_credit.cli.common import (
    SORT_LESSONS,
    STRATEGY_HELP,
    SubParsers,
    command,
    decay_arg,
    floor_arg,
    json_text,
    open_workspace,
    print_json,
    warn_problems,
    warning_lines,
)
from lesson_credit.cli.render import (
    counted,
    fmt,
    listed,
    output_width,
    safe,
    stdout_is_terminal,
    table,
    warning_line,
    wrap,
)
from lesson_credit.core.base.numbers import signed

if TYPE_CHECKING:
    from pathlib import Path

    from lesson_credit.core.model.settings import CreditSettings
    from lesson_credit.core.views import LessonRow, PosteriorTable
    from lesson_credit.core.workspace import Workspace


STATUS_HEADERS = ["lesson", "category", "status", "n", "alpha", "beta", "mean", "ci_low", "ci_high"]
# a narrow terminal leaves out the category (most often the lesson's folder, which the path shows), then the
# status (`active` on nearly every row; the others are named under the table) before a file name is cut
STATUS_FIT: dict[str, Any] = {"shorten_columns": {0: "path", 1: "end"}, "drop": (1, 2)}


def _status_table(table_obj: PosteriorTable, width: int | None) -> str:
    rows = [
        (r.path, r.category, r.status, r.n, fmt(r.alpha, 2), fmt(r.beta, 2), fmt(r.mean), fmt(r.ci_low), fmt(r.ci_high))
        for r in table_obj.rows
    ]
    settings = table_obj.settings
    head = (
        f"{counted(table_obj.sessions, 'session')} ({table_obj.graded} graded); "
        f"strategy {settings.strategy}, floor {settings.floor:g}"
    )

    def hidden_names(hidden: Sequence[int]) -> str:  # the status column's news, when it is left out
        names = [STATUS_HEADERS[i] for i in hidden]
        return ", ".join(names) + (f" ({_not_active(table_obj.rows)})" if 2 in hidden else "")

    fitted = table(STATUS_HEADERS, rows, right=(3, 4, 5, 6, 7, 8), width=width, hidden_names=hidden_names, **STATUS_FIT)
    return wrap(head, width) + "\n\n" + fitted


def _not_active(rows: Sequence[LessonRow]) -> str:
    """The lessons that are not active, by status: `every lesson is active but deprecated a.md, b.md`."""
    by_status: dict[str, list[str]] = {}
    for r in rows:
        if r.status != "active":
            by_status.setdefault(safe(r.status), []).append(safe(r.path))
    line = "every lesson is active"
    if not by_status:
        return line
    return line + " but " + "; ".join(f"{status} {listed(paths, 8)}" for status, paths in sorted(by_status.items()))


def _sort_rows(table_obj: PosteriorTable, key: str) -> PosteriorTable:
    from msgspec.structs import replace

    keys: dict[str, Callable[[LessonRow], Any]] = {
        "mean": lambda r: (r.n <= 0, -r.mean, r.path),  # never used (n 0, the prior's mean): after the rest
        "n": lambda r: (-r.n, r.path),
        "path": lambda r: r.path,
        "ci_low": lambda r: (-r.ci_low, r.path),
    }
    return replace(table_obj, rows=tuple(sorted(table_obj.rows, key=keys[key])))


def _without_retired(ws: Workspace, table_obj: PosteriorTable, show_all: bool) -> PosteriorTable:
    """Hide arms retired by `prune` (while their lesson file stays gone) unless --all."""
    from msgspec.structs import replace

    from lesson_credit.core.retire import hidden_rows

    hidden = frozenset() if show_all else hidden_rows(ws, table_obj.rows)
    if not hidden:
        return table_obj
    return replace(table_obj, rows=tuple(r for r in table_obj.rows if r.path not in hidden))


def _empty_library_note(ws: Workspace) -> str | None:
    if ws.library().lessons or ws.library().problems:
        return None
    return (
        f"no lessons found in {ws.root}: put lesson files under lessons/ "
        "(or name their folders in gptme.toml [lessons] dirs)"
    )


def cmd_status(args: argparse.Namespace) -> int:
    from lesson_credit.cli.status_summary import Recorder, cached_output

    cached = cached_output(args)  # a warm status: the last one's output, while all it came from is unchanged
    if cached is not None:
        sys.stdout.write(cached)
        return 0
    from lesson_credit.core.base.files import set_aside_mark
    from lesson_credit.core.derived_state import repair_state

    mark = set_aside_mark()
    ws = open_workspace(args)
    recorder = Recorder(args, ws)
    # first: another tool's update it logs is in the table printed. One agent's view (--written-by) is not the
    # log: bandit-state.json, what gptme reads, is folded from every agent's sessions, and is left to a full read
    repaired = repair_state(ws) if getattr(args, "written_by", None) is None else None
    if repaired is not None:
        ws.warnings.append(repaired)
    result = _sort_rows(_without_retired(ws, ws.lesson_table(details=False), args.all), args.sort)
    warn_problems(ws, args.json)
    note = _empty_library_note(ws)
    if note and not args.json:
        print(warning_line(safe(note)), file=sys.stderr)
    output = _status_output(result, args, ws)
    sys.stdout.write(output)
    if not (warning_lines(ws) or note or set_aside_mark() != mark):  # (main says what was set aside)
        recorder.save(output)
    return 0


def _status_output(result: PosteriorTable, args: argparse.Namespace, ws: Workspace) -> str:
    """What `status` prints on stdout."""
    if args.json:
        return json_text(result.as_json(), ws)
    width = output_width()
    out = _status_table(result, width) + "\n"
    unused = sum(1 for r in result.rows if r.n <= 0)
    if args.sort == "mean" and unused and unused < len(result.rows):
        are = "is" if unused == 1 else "are"
        out += wrap(f"\n{counted(unused, 'lesson')} never used (n 0, the prior's mean) {are} listed last", width) + "\n"
    return out


def cmd_replay(args: argparse.Namespace) -> int:
    ws = open_workspace(args, writes=args.write)
    before = ws.lesson_table(details=False)
    priority = args.priority
    state_before = _file_identity(ws.state_path)
    replayed = ws.replay(args.strategy, args.floor, decay=args.decay, priority=priority, write=args.write)
    result = _sort_rows(_without_retired(ws, replayed, args.all), args.sort)
    warn_problems(ws, args.json)
    old = {r.path: r.mean for r in before.rows}
    if args.json:
        payload = result.as_json()
        payload["decay"] = result.settings.decay
        payload["priority"] = list(priority or ws.config.reward_priority)
        payload["written"] = args.write
        for row in payload["lessons"]:  # the table's change column: mean now minus mean before
            row["change"] = row["mean"] - old.get(row["path"], row["mean"])
        print_json(payload, ws)
        return 0
    rows = [
        (
            r.path,
            r.status,
            r.n,
            fmt(r.alpha, 2),
            fmt(r.beta, 2),
            fmt(r.mean),
            signed(r.mean - old.get(r.path, r.mean)),
        )
        for r in result.rows
    ]
    verb = "written" if args.write else "what-if, nothing written"
    width = output_width()
    head = (
        f"replayed {counted(result.sessions, 'session')} under strategy {result.settings.strategy}, "
        f"floor {result.settings.floor:g}, decay {result.settings.decay:g} ({verb}); rewards by "
        f"{', '.join(priority or ws.config.reward_priority)}; change is against "
        f"{before.settings.strategy}/{before.settings.floor:g}/{before.settings.decay:g}"
    )
    print(wrap(head, width) + "\n")
    headers = ["lesson", "status", "n", "alpha", "beta", "mean", "change"]
    print(table(headers, rows, right=(2, 3, 4, 5, 6), width=width, shorten_columns={0: "path"}))
    if stdout_is_terminal():  # what the headline said of the write, under a table that may have pushed it away
        rewritten = _file_identity(ws.state_path) != state_before
        print("\n" + wrap(_written_line(result.settings, priority, args.write, rewritten), width))
    return 0


def _file_identity(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, modification time) of the file at `path`, None when there is none: a rewrite (a new file put
    in its place) changes it."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns


def _written_line(settings: CreditSettings, priority: Sequence[str] | None, written: bool, rewritten: bool) -> str:
    """Under replay's table on a terminal: whether its settings (and the reward priority given) were stored, and
    bandit-state.json rewritten (a warning above says why not), or how they would be."""
    said = f"strategy {settings.strategy}, floor {settings.floor:g}, decay {settings.decay:g}"
    said += f", reward priority {', '.join(priority)}" if priority else ""
    if not written:
        return f"what-if, nothing written: --write stores {said}"
    if rewritten:
        return f"written: {said} stored in config.toml, bandit-state.json rewritten"
    return f"written: {said} stored in config.toml; bandit-state.json not rewritten (said above)"


def _priority(text: str) -> tuple[str, ...]:
    """--priority: the reward sources in order, checked as the command line is parsed (a usage error)."""
    from lesson_credit.core.model.sources import parse_priority

    try:
        return parse_priority(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: SubParsers, common: argparse.ArgumentParser, data: argparse.ArgumentParser) -> None:
    """Add this group's subcommands to `sub`."""
    p = command(
        sub,
        "status",
        [common, data],
        "posterior per lesson",
        "One row per lesson of the library and per arm of the log: its Beta(alpha, beta)\n"
        "posterior, n (graded sessions it was injected in), mean and 95% interval.",
        "  lesson-credit status\n  lesson-credit status --sort n --json",
    )
    p.add_argument(
        "--sort",
        choices=SORT_LESSONS,
        default="mean",
        help="order of the rows: mean, n or ci_low (highest first), or path (default: mean); by mean, lessons "
        "never used (n 0) come last",
    )
    p.add_argument("--all", action="store_true", help="also show arms retired by `prune`")
    p.add_argument(
        "--written-by",
        default=None,
        metavar="AGENT",
        help="database store: only the sessions this agent recorded (with their grades, by anyone); "
        "bandit-state.json is left as the whole log has it",
    )
    p.set_defaults(func=cmd_status)

    p = command(
        sub,
        "replay",
        [common, data],
        "re-fold the log under another strategy/floor/decay/reward priority",
        "Fold the whole log again under other settings and show each lesson's mean and its change.\n"
        "Without --write nothing changes on disk; with it the settings go to config.toml and\n"
        f"bandit-state.json is rewritten. Strategies, with w = floor + (1 - floor) * salience:{STRATEGY_HELP}.\n"
        "Reward sources (docs/records.md): human (manual and every other named grader), judge (grader judge,\n"
        "or a gptme-sessions record's llm_judge_score), heuristic (grader heuristic/trajectory, a record's\n"
        "trajectory grade) and outcome (an outcome word mapped by [outcomes]). Per source the latest\n"
        "event counts; the priority's first source with a score is the reward the posteriors use.",
        "  lesson-credit replay --strategy evidence --floor 0.5\n  lesson-credit replay --decay 0.99 --write\n"
        "  lesson-credit replay --priority judge,human,outcome",
    )
    p.add_argument(
        "--strategy",
        choices=["seed", "evidence", "uniform"],
        default=None,
        help="credit strategy (default: the configured one, seed)",
    )
    p.add_argument(
        "--floor",
        type=floor_arg,
        default=None,
        metavar="F",
        help="weight of an unmentioned lesson, in [0, 1] (default: the configured one, 0.3)",
    )
    p.add_argument(
        "--decay",
        type=decay_arg,
        default=None,
        metavar="G",
        help="per-session decay toward the prior, in (0, 1]; 1 = none (default: the configured one, 1)",
    )
    p.add_argument(
        "--priority",
        type=_priority,
        default=None,
        metavar="SOURCES",
        help="reward sources in order, comma-separated, from human, judge, heuristic, outcome "
        "(default: the configured [rewards] priority, human,judge,heuristic,outcome)",
    )
    p.add_argument("--write", action="store_true", help="store the settings and rewrite bandit-state.json")
    p.add_argument(
        "--sort", choices=SORT_LESSONS, default="mean", help="order of the rows, as in status (default: mean)"
    )
    p.add_argument("--all", action="store_true", help="also show arms retired by `prune`")
    p.set_defaults(func=cmd_replay)
